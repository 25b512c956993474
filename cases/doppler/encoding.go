package doppler

import (
	"bytes"
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// encodeInput is the encode_header input that must reproduce a valid
// vector's header: its order, type and fields.
func encodeInput(v *corpus.DopplerVector) *conformpb.DopplerEncodeInput {
	h := v.Header
	return &conformpb.DopplerEncodeInput{Order: orderOf(v), Type: typeOf(v.Type), Sequence: h.Sequence,
		TimestampNs: h.TimestampNs, NumSamples: h.NumSamples, SampleRateHz: h.SampleRateHz}
}

func describeEncode(in *conformpb.DopplerEncodeInput) string {
	return fmt.Sprintf("%s sender, %s frame: sequence %d, timestamp_ns %d, num_samples %d, sample_rate_hz %g",
		orderName(in.Order), in.Type, in.Sequence, in.TimestampNs, in.NumSamples, in.SampleRateHz)
}

// encodeVectors asks the SUT to write each valid vector's header and
// compares the bytes in the range [from, to) with the vector's.
func encodeVectors(t *cases.T, what string, from, to int, vs ...*corpus.DopplerVector) {
	var ins []*conformpb.DopplerEncodeInput
	for _, v := range vs {
		ins = append(ins, encodeInput(v))
	}
	for i, out := range encodeHeader(t, ins) {
		want := []byte(vs[i].Message[from:to])
		var got []byte
		if len(out.Header) >= to {
			got = out.Header[from:to]
		} else {
			got = out.Header
		}
		if len(out.Header) != 64 || !bytes.Equal(want, got) {
			path := fmt.Sprintf("header (bytes %d to %d)", from, to-1)
			ds := evidence.DiffAt(path, want, got)
			if len(out.Header) != 64 {
				ds = append(ds, evidence.DiffAt("header (its length)", 64, len(out.Header))...)
			}
			t.Fail(reports.Evidence{Message: fmt.Sprintf("%s (header bytes %d to %d): %s", what, from, to-1, vs[i].Title),
				Input: describeEncode(ins[i]), Expected: corpus.FormatHex(want),
				Got:  fmt.Sprintf("%s (a header of %d bytes)", corpus.FormatHex(got), len(out.Header)),
				Diff: evidence.Format(ds)})
		}
	}
}

// validNames are the valid-header vectors of order sfx ("le" or "be").
func validNames(sfx string) []string {
	var out []string
	for _, typ := range []string{"ci8", "ci16", "ci32", "cf32", "cf64", "raw", "tlm"} {
		out = append(out, "valid-"+typ+"-"+sfx)
	}
	return out
}

// encoding is doppler §3 from the sender's side: the header it writes.
func encoding(k *cases.Kit, vs *vectors) []cases.Case {
	both := func() []*corpus.DopplerVector {
		return append(vs.List(validNames("le")...), vs.List(validNames("be")...)...)
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			le := vs.List(validNames("le")...)
			return cases.Case{
				ID:    "doppler/3/header-written-little-endian",
				Title: "A little-endian sender writes the 64-byte header of each type field by field in its host order, at the pinned offsets",
				Spec:  "doppler-streaming §3, §1",
				Requirements: []string{"doppler-streaming§1#1", "doppler-streaming§3#2", "doppler-streaming§3#5",
					"reconstructed§doppler-header#1", "reconstructed§doppler-header#3", "reconstructed§contradictions#2"},
				Run: func(t *cases.T) { encodeVectors(t, "the header a little-endian sender writes", 0, 64, le...) },
			}
		}),
		k.Must(func() cases.Case {
			be := vs.List(validNames("be")...)
			return cases.Case{
				ID:           "doppler/3/header-written-big-endian",
				Title:        "A big-endian sender writes the same fields in its own host order, with no conversion: the magic too, so a little-endian peer sees it swapped",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#2", "doppler-streaming§3#5", "reconstructed§doppler-header#1"},
				Run:          func(t *cases.T) { encodeVectors(t, "the header a big-endian sender writes", 0, 64, be...) },
			}
		}),
		k.Must(func() cases.Case {
			all := both()
			return cases.Case{
				ID:           "doppler/3/magic-is-an-integer",
				Title:        "The magic is one integer written in the sender's byte order, not a char[8]: the two orders write it byte-swapped",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#4", "reconstructed§doppler-header#2"},
				Run:          func(t *cases.T) { encodeVectors(t, "the magic a sender writes", 0, 8, all...) },
			}
		}),
		k.Must(func() cases.Case {
			all := both()
			return cases.Case{
				ID:           "doppler/3/format-is-a-blue-code",
				Title:        "format holds the two-character BLUE code packed little-endian (first character in the low byte), and 0 for telemetry, in either byte order",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#16", "doppler-streaming§3#21", "reconstructed§doppler-formats#1"},
				Run:          func(t *cases.T) { encodeVectors(t, "the kind and format a sender writes", 16, 20, all...) },
			}
		}),
		k.Must(func() cases.Case {
			all := both()
			return cases.Case{
				ID:           "doppler/3/data-rep-names-the-order",
				Title:        "data_rep says which order the header is in with BLUE's own token: \"EEEI\" from a little-endian sender, \"IEEE\" from a big-endian one",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#8", "reconstructed§doppler-header#6"},
				Run:          func(t *cases.T) { encodeVectors(t, "the data_rep a sender writes", 20, 24, all...) },
			}
		}),
	}
}
