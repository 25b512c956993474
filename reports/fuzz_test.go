package reports

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// allocated returns the bytes the Go runtime has allocated so far, over
// the process's life.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// allocBound is what reading n bytes of input may allocate: a multiple of
// the input and a constant. Reading never allocates on the strength of a
// number the input claims.
func allocBound(n int) uint64 { return uint64(64*n + 4<<20) }

// FuzzParseBaseline: reading any baseline never panics and allocates in
// proportion to its size; every entry it accepts reads back the same from
// its String, and applying it to a record never panics.
func FuzzParseBaseline(f *testing.F) {
	for _, s := range []string{
		"",
		"# comment\n\nwire/1.3/byte-at-a-time  splits reads  issue=https://example.org/b/1  expires=2026-03-31\n",
		"streams/**  not yet\r\nwire/*/[pc]*  old trouble\n",
		"wire/1.3/odd\\[id\\]\\*  escaped\n",
		"issue=x  no pattern\n",
		"wire/1  reason expires=2026-13-01\n",
		"wire/1 reason\nwire/1 again\n",
		"[  bad glob\n",
		strings.Repeat("a/b/c  r\n", 30),
		"**  everything\n",
	} {
		f.Add([]byte(s))
	}
	rec := fixture()
	today := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := allocated()
		b, err := ParseBaseline(bytes.NewReader(data))
		if got := allocated() - before; got > allocBound(len(data)) {
			t.Fatalf("reading %d bytes allocated %d", len(data), got)
		}
		if err != nil {
			return
		}
		for _, e := range b.Entries {
			again, err := ParseBaseline(strings.NewReader(e.String()))
			if err != nil || len(again.Entries) != 1 {
				t.Fatalf("entry %q does not read back: %v", e.String(), err)
			}
			a := again.Entries[0]
			if a.Pattern != e.Pattern || a.Reason != e.Reason || a.Issue != e.Issue || !a.Expires.Equal(e.Expires) {
				t.Fatalf("entry %q reads back as %+v", e.String(), a)
			}
		}
		res := b.ApplyWithin(rec, today, []string{"wire/9/x", "doppler/1/y"})
		_ = res.ExitCode(true)
		_ = WriteBaselineText(io.Discard, res)
		_ = WriteBaselineMarkdown(io.Discard, res)
	})
}

// FuzzParseRecord: reading any record — what conform diff and conform
// baseline read — never panics and allocates in proportion to its size;
// diffing, rendering and baselining what it accepts never panic.
func FuzzParseRecord(f *testing.F) {
	full := fixture()
	full.Lost = &Lost{Reason: "r", After: "streams/3.2/reorder", Last: &SUTFailure{Kind: KindTimeout, Message: "m"}}
	full.Summarize()
	js, err := json.Marshal(full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js)
	f.Add([]byte(`{"schema":"https://conform.invalid/schema/record/v1","cases":[{"id":"wire/1/a","outcome":"fail"}]}`))
	f.Add([]byte(`{"schema":"https://conform.invalid/schema/record/v2","sut":{"hello":{"profiles":["wire","wire"]}},"cases":[{"id":"","outcome":"weird","level":"MUST","profile":"wire"}],"declared_but_unimplemented":["x"]}`))
	f.Add([]byte(`{"schema":"x"}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"schema":"https://conform.invalid/schema/record/v2","summary":{"counts":{"pass":-5}},"exit_code":99}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		before := allocated()
		r, err := ParseRecord(data)
		if got := allocated() - before; got > allocBound(len(data)) {
			t.Fatalf("reading %d bytes allocated %d", len(data), got)
		}
		if err != nil {
			return
		}
		d := Diff(full, r)
		_ = d.HasRegressions()
		if err := WriteDiff(io.Discard, d); err != nil {
			t.Fatal(err)
		}
		_ = WriteDiff(io.Discard, Diff(r, r))
		_ = FromRecord(r)
		r.Summarize()
		_ = WriteText(io.Discard, r, true)
	})
}
