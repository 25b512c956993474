package corpus_test

import (
	"errors"
	"testing"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/google/go-cmp/cmp"
)

// TestReferenceReproducesDopplerVectors proves that ref/doppler agrees with
// every golden vector: the header check's verdict and decoded fields, the
// header a conforming sender writes, the chunks a PUB cuts, and what a
// receiver reassembles. The vectors were built from the pinned layouts, so a
// disagreement is a bug in one or the other, never something to
// regenerate.
func TestReferenceReproducesDopplerVectors(t *testing.T) {
	set, err := corpus.Doppler()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range set.All() {
		t.Run(v.ID, func(t *testing.T) {
			if !v.IsCheck() && !v.IsReassembly() {
				t.Fatal("a doppler vector has a check message, reassembly messages, or both")
			}
			o := doppler.LittleEndian
			if v.BigEndian() {
				o = doppler.BigEndian
			} else if v.Order != "" && v.Order != "little-endian" {
				t.Fatalf("order %q", v.Order)
			}
			if v.IsCheck() {
				checkDopplerMessage(t, v, o)
			}
			if v.Frame != nil {
				checkDopplerChunking(t, v, o)
			}
			if v.IsReassembly() {
				checkDopplerReassembly(t, v, o)
			}
		})
	}
}

// TestDopplerCorpusCoversTheSpec names the vectors issue 6 requires: valid
// headers of each type in both orders, one per failed check, and the chunk
// sequences of doppler §4.
func TestDopplerCorpusCoversTheSpec(t *testing.T) {
	set, err := corpus.Doppler()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, typ := range []string{"ci8", "ci16", "ci32", "cf32", "cf64", "raw", "tlm"} {
		names = append(names, "valid-"+typ+"-le", "valid-"+typ+"-be")
	}
	names = append(names, "not-doppler", "cross-endian-big-sender", "other-major-3", "unknown-flag",
		"payload-claims-more", "unknown-kind", "unknown-format", "count-mismatch", "count-overflow",
		"chunks-in-order", "chunks-reordered", "chunks-duplicated-index", "chunks-missing",
		"chunks-interleaved-publisher", "chunks-count-disagreement",
		// The paths issue 15 names, each a fixed vector: reassembly's own
		// overflow guard, a repeat from index 64 up, the chunk block of a
		// big-endian peer, an unchunked message mid-frame, and the chunk
		// blocks a header check cannot refuse.
		"chunk-totals-overflow", "chunks-repeat-at-64", "chunks-in-order-be", "chunks-reordered-be",
		"valid-chunk-message-be", "chunks-unchunked-mid-frame", "chunks-unchunked-mid-frame-be",
		"chunk-count-zero", "chunk-index-beyond-count", "chunk-sizes-off-the-split")
	for _, name := range names {
		if _, ok := set.Lookup(corpus.DopplerVersion + "/" + name); !ok {
			t.Errorf("vector %s is missing", name)
		}
	}
	verdicts := map[string]bool{}
	for _, v := range set.All() {
		verdicts[v.Verdict] = true
	}
	for _, want := range []string{"accepted", "short-message", "not-doppler", "cross-endian", "other-major-version",
		"unknown-flags", "short-chunk-block", "payload-mismatch", "unknown-kind", "unknown-format", "count-mismatch"} {
		if !verdicts[want] {
			t.Errorf("no vector has verdict %s", want)
		}
	}
}

// headerFields renders a decoded header as the corpus writes it.
func headerFields(h doppler.Header) corpus.DopplerHeaderFields {
	f := corpus.DopplerHeaderFields{
		Magic: h.Magic, VersionMajor: h.VersionMajor, VersionMinor: h.VersionMinor, Flags: h.Flags,
		Kind: uint16(h.Kind), DataRep: string(h.DataRep[:]), Sequence: h.Sequence, TimestampNs: h.TimestampNs,
		NumSamples: h.NumSamples, PayloadBytes: h.PayloadBytes, SampleRateHz: h.SampleRateHz,
	}
	if h.Format != 0 {
		f.Format = string([]byte{byte(h.Format), byte(h.Format >> 8)})
	}
	return f
}

func dopplerType(t *testing.T, name string) doppler.Type {
	t.Helper()
	for _, typ := range doppler.Types() {
		if typ.String() == name {
			return typ
		}
	}
	t.Fatalf("type %q", name)
	return 0
}

func checkDopplerMessage(t *testing.T, v *corpus.DopplerVector, o doppler.Order) {
	got := doppler.CheckLength(v.Message, v.MessageLength(), o)
	if got.String() != v.Verdict {
		t.Fatalf("verdict %s, vector says %s", got, v.Verdict)
	}
	if got != doppler.Accepted {
		if v.Header != nil {
			t.Error("a refused message has no decoded header")
		}
		return
	}
	if v.Header == nil {
		t.Fatal("an accepted message states its header")
	}
	h, err := doppler.DecodeHeader(v.Message, o)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*v.Header, headerFields(h)); d != "" {
		t.Errorf("header (-vector +reference):\n%s", d)
	}
	if h.Chunked() != (v.ChunkBlock != nil) {
		t.Errorf("CHUNKED %v but chunk block stated %v", h.Chunked(), v.ChunkBlock != nil)
	}
	if v.ChunkBlock != nil {
		c, err := doppler.DecodeChunkBlock(v.Message[doppler.HeaderSize:], o)
		if err != nil {
			t.Fatal(err)
		}
		got := corpus.DopplerChunkFields{ChunkIndex: c.Index, ChunkCount: c.Count, TotalSamples: c.TotalSamples, TotalBytes: c.TotalBytes}
		if d := cmp.Diff(*v.ChunkBlock, got); d != "" {
			t.Errorf("chunk block (-vector +reference):\n%s", d)
		}
	}
	if v.Type != "" {
		typ := dopplerType(t, v.Type)
		want := doppler.NewHeader(typ, o)
		want.Sequence, want.TimestampNs, want.SampleRateHz = h.Sequence, h.TimestampNs, h.SampleRateHz
		want.NumSamples, want.PayloadBytes = h.NumSamples, h.NumSamples*uint64(typ.ElemSize())
		if enc := doppler.AppendHeader(nil, o, want); !cmp.Equal(enc, []byte(v.Message[:doppler.HeaderSize])) {
			t.Errorf("a %s sender writes\n%s\nthe vector says\n%s", o, corpus.FormatHex(enc), corpus.FormatHex(v.Message[:doppler.HeaderSize]))
		}
	}
}

func checkDopplerChunking(t *testing.T, v *corpus.DopplerVector, o doppler.Order) {
	fs := v.Frame
	f, err := doppler.NewFrame(dopplerType(t, fs.Type), o, fs.Payload)
	if err != nil {
		t.Fatal(err)
	}
	f.Header.Sequence, f.Header.TimestampNs, f.Header.SampleRateHz = fs.Sequence, fs.TimestampNs, fs.SampleRateHz
	msgs, err := doppler.Chunk(f, int(fs.MaxPayload), o)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, m := range msgs {
		got = append(got, corpus.FormatHex(m))
	}
	for _, m := range v.Messages {
		want = append(want, corpus.FormatHex(m))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("chunks (-vector +reference):\n%s", d)
	}
}

func checkDopplerReassembly(t *testing.T, v *corpus.DopplerVector, o doppler.Order) {
	r := &doppler.Reassembler{Order: o}
	var got []corpus.DopplerFrameExpect
	refused, verdictSeen := false, false
	for _, m := range v.Messages {
		f, ok, err := r.Add(m)
		if ok {
			got = append(got, corpus.DopplerFrameExpect{Header: headerFields(f.Header), Payload: append(corpus.Hex(nil), f.Payload...)})
		}
		if err != nil {
			if !errors.Is(err, doppler.ErrInvalid) {
				t.Errorf("refusal %v is not DP_ERR_INVALID", err)
			}
			refused = true
			var e *doppler.Error
			if errors.As(err, &e) && e.Verdict.String() == v.RefusedVerdict {
				verdictSeen = true
			}
		}
	}
	want := v.Delivered
	if want == nil {
		want = []corpus.DopplerFrameExpect{}
	}
	if got == nil {
		got = []corpus.DopplerFrameExpect{}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delivered (-vector +reference):\n%s", d)
	}
	if v.Refused != nil && *v.Refused != refused {
		t.Errorf("refused %v, vector says %v", refused, *v.Refused)
	}
	if v.RefusedVerdict != "" && !verdictSeen {
		t.Errorf("no refusal carried verdict %s", v.RefusedVerdict)
	}
}
