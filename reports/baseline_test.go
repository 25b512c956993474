package reports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseBaseline(t *testing.T) {
	in := "# known failures of mybinding\r\n" +
		"\n" +
		"   # an indented comment\n" +
		"wire/1.3/byte-at-a-time   splits   reads\twrongly  issue=https://example.org/b/12#c3  expires=2026-03-31\r\n" +
		"\tstreams/**  expires=2026-01-01 gap accounting unimplemented\n" +
		"wire/*/max-*  a reason with a # inside and key:value words\n"
	b, err := ParseBaseline(strings.NewReader(in))
	if err != nil {
		t.Fatalf("ParseBaseline: %v", err)
	}
	want := []BaselineEntry{
		{Pattern: "wire/1.3/byte-at-a-time", Reason: "splits reads wrongly", Issue: "https://example.org/b/12#c3", Expires: day("2026-03-31"), Line: 4},
		{Pattern: "streams/**", Reason: "gap accounting unimplemented", Expires: day("2026-01-01"), Line: 5},
		{Pattern: "wire/*/max-*", Reason: "a reason with a # inside and key:value words", Line: 6},
	}
	if !slices.Equal(b.Entries, want) {
		t.Errorf("entries\n%+v\nwant\n%+v", b.Entries, want)
	}
	if got, want := b.Entries[0].String(), "wire/1.3/byte-at-a-time  splits reads wrongly  issue=https://example.org/b/12#c3  expires=2026-03-31"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	empty, err := ParseBaseline(strings.NewReader("# nothing\n\n"))
	if err != nil || len(empty.Entries) != 0 {
		t.Errorf("a baseline of comments: %+v, %v", empty, err)
	}
}

func TestParseBaselineErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // each must appear in the error
	}{
		{"no reason", "wire/1.3/x\n", []string{"line 1: wire/1.3/x has no reason"}},
		{"only tokens", "wire/1.3/x issue=https://e.org/1 expires=2026-01-01\n", []string{"line 1: wire/1.3/x has no reason"}},
		{"bad glob", "# c\nwire/[1.3/x  reason\n", []string{"line 2: bad case pattern \"wire/[1.3/x\""}},
		{"bad date", "wire/1.3/x  reason expires=2026-13-01\n", []string{"line 1: expires=2026-13-01 is not a date in the form YYYY-MM-DD"}},
		{"date in words", "wire/1.3/x  reason expires=tomorrow\n", []string{"line 1: expires=tomorrow is not a date"}},
		{"empty date", "wire/1.3/x  reason expires=\n", []string{"line 1: expires= is not a date"}},
		{"relative issue", "wire/1.3/x  reason issue=BUG-12\n", []string{"line 1: issue=BUG-12 is not an absolute URL"}},
		{"empty issue", "wire/1.3/x  reason issue=\n", []string{"line 1: issue= is not an absolute URL"}},
		{"two issues", "wire/1.3/x  reason issue=https://e.org/1 issue=https://e.org/2\n", []string{"line 1: issue= is given twice"}},
		{"two dates", "wire/1.3/x  reason expires=2026-01-01 expires=2026-01-02\n", []string{"line 1: expires= is given twice"}},
		{"token first", "issue=https://e.org/1 wire/1.3/x reason\n", []string{"line 1: the line must start with a case ID or glob"}},
		{"duplicate", "wire/1.3/x  one\n\nwire/1.3/x  two\n", []string{"line 3: wire/1.3/x is already listed on line 1"}},
		{"every error", "a/[  r\nok/1/x  fine\nb/1/y\n", []string{"line 1: bad case pattern", "line 3: b/1/y has no reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBaseline(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error; entries %+v", b.Entries)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestReadBaseline(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "known.txt")
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(good, []byte("wire/**  everything\n"), 0o644)
	os.WriteFile(bad, []byte("# c\nwire/**\n"), 0o644)
	if b, err := ReadBaseline(good); err != nil || len(b.Entries) != 1 {
		t.Errorf("ReadBaseline(good) = %+v, %v", b, err)
	}
	if _, err := ReadBaseline(bad); err == nil || !strings.Contains(err.Error(), bad+":2: wire/** has no reason") {
		t.Errorf("ReadBaseline(bad) error %v, want one naming %s:2", err, bad)
	}
	if _, err := ReadBaseline(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("ReadBaseline(missing) error %v", err)
	}
}

// ids returns the case IDs of cs.
func ids(cs []BaselineCase) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// patterns returns the patterns of es.
func patterns(es []BaselineEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Pattern)
	}
	return out
}

func TestBaselineApply(t *testing.T) {
	// The fixture's cases: pass wire/1.2/prefix-big-endian,
	// wire/2/ceiling-accepted, streams/3.4/window-is-64; fail
	// wire/1.3/byte-at-a-time, streams/3.1/keyed-on-pair; warn
	// wire/6.4/unreadable-counted; info wire/8/large-descriptor; skip
	// streams/5/gap-report; error streams/3.2/reorder.
	today := time.Date(2026, 3, 1, 23, 30, 0, 0, time.FixedZone("UTC-10", -10*3600))
	tests := []struct {
		name     string
		strict   bool
		baseline string
		known    []string
		new      []string
		passes   []string
		stale    []string
		expired  []string
		unimpl   []string // gaps no entry accepts
		allow    bool     // --allow-unimplemented
		exit     int      // without --strict-baseline
		strictEx int      // with --strict-baseline
	}{
		{
			name:     "no baseline",
			new:      []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder"},
			unimpl:   []string{"streams/5/gap-report"},
			exit:     1,
			strictEx: 1,
		},
		{
			name:     "every failure known",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/3.*/**  streams are hard\nstreams/5/gap-report  gap reports come later\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			exit:     0,
			strictEx: 0,
		},
		{
			name:     "a new failure",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/3.2/reorder  hangs\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.2/reorder"},
			new:      []string{"streams/3.1/keyed-on-pair"},
			unimpl:   []string{"streams/5/gap-report"},
			exit:     1,
			strictEx: 1,
		},
		{
			name:     "unexpected pass of an exact entry",
			baseline: "wire/**  wire is broken\nstreams/  so are streams\nstreams/3.4/window-is-64  window\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			passes:   []string{"streams/3.4/window-is-64"},
			exit:     0,
			strictEx: 1,
		},
		{
			name:     "a glob that still excuses a failure reports no pass",
			baseline: "wire/*/*  some wire cases fail\nstreams/**  streams\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			exit:     0,
			strictEx: 0,
		},
		{
			name:     "a glob that excuses nothing reports its passes",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/**  streams\nwire/*/[pc]*  old trouble\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			passes:   []string{"wire/1.2/prefix-big-endian", "wire/2/ceiling-accepted"},
			exit:     0,
			strictEx: 1,
		},
		{
			name:     "stale entries",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/**  streams\nwire/9/retired  gone\ndoppler/**  not run\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			stale:    []string{"wire/9/retired", "doppler/**"},
			exit:     0,
			strictEx: 1,
		},
		{
			name:     "entries matching skip, info and warn only are neither stale nor passes",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/3.*/**  streams\nstreams/5/gap-report  gaps\nwire/8/large-descriptor  big\nwire/6.4/unreadable-counted  counts\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			exit:     0,
			strictEx: 0,
		},
		{
			name:     "expiry is inclusive of its day, in the caller's zone",
			baseline: "wire/1.3/byte-at-a-time  splits  expires=2026-03-01\nstreams/**  streams  expires=2026-02-28\n",
			known:    []string{"wire/1.3/byte-at-a-time"},
			new:      []string{"streams/3.1/keyed-on-pair", "streams/3.2/reorder"},
			expired:  []string{"streams/**"},
			unimpl:   []string{"streams/5/gap-report"},
			exit:     1,
			strictEx: 1,
		},
		{
			name:     "an expired entry reported even when nothing else is wrong",
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/**  streams\nwire/2/ceiling-accepted  old  expires=2025-12-31\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			expired:  []string{"wire/2/ceiling-accepted"},
			exit:     0,
			strictEx: 1,
		},
		{
			name:     "an unexpired entry excuses what an expired one no longer does",
			baseline: "streams/3.1/keyed-on-pair  old  expires=2020-01-01\nstreams/**  streams\nwire/1.3/byte-at-a-time  splits\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			expired:  []string{"streams/3.1/keyed-on-pair"},
			exit:     0,
			strictEx: 1,
		},
		{
			name:     "warn is a failure under --strict",
			strict:   true,
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/**  streams\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			new:      []string{"wire/6.4/unreadable-counted"},
			exit:     1,
			strictEx: 1,
		},
		{
			name:     "a known warn under --strict",
			strict:   true,
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/**  streams\nwire/6.4/*  counting\n",
			known:    []string{"wire/1.3/byte-at-a-time", "wire/6.4/unreadable-counted", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "streams/5/gap-report"},
			exit:     0,
			strictEx: 0,
		},
		{
			name:     "--allow-unimplemented accepts every gap",
			allow:    true,
			baseline: "wire/1.3/byte-at-a-time  splits\nstreams/3.*/**  streams are hard\n",
			known:    []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder"},
			exit:     0,
			strictEx: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixture()
			r.Strict = tt.strict
			r.AllowUnimplemented = tt.allow
			b, err := ParseBaseline(strings.NewReader(tt.baseline))
			if err != nil {
				t.Fatalf("ParseBaseline: %v", err)
			}
			res := b.Apply(r, today)
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s: %q, want %q", what, got, want)
				}
			}
			check("known failures", ids(res.Known), tt.known)
			check("new failures", ids(res.New), tt.new)
			check("unexpected passes", ids(res.UnexpectedPasses), tt.passes)
			check("stale entries", patterns(res.Stale), tt.stale)
			check("expired entries", patterns(res.Expired), tt.expired)
			check("unaccepted gaps", ids(res.Unimplemented), tt.unimpl)
			if got := res.ExitCode(false); got != tt.exit {
				t.Errorf("ExitCode(false) = %d, want %d", got, tt.exit)
			}
			if got := res.ExitCode(true); got != tt.strictEx {
				t.Errorf("ExitCode(true) = %d, want %d", got, tt.strictEx)
			}
			for _, c := range res.Known {
				if c.Entry == nil || c.Entry.ExpiredOn(today) || !MatchID(c.Entry.Pattern, c.ID) {
					t.Errorf("known failure %s has entry %+v", c.ID, c.Entry)
				}
			}
			for _, c := range res.UnexpectedPasses {
				if c.Entry == nil || c.Outcome != Pass {
					t.Errorf("unexpected pass %s: %+v", c.ID, c)
				}
			}
			var text strings.Builder
			if err := WriteBaselineText(&text, res); err != nil {
				t.Fatal(err)
			}
			for _, id := range slices.Concat(tt.new, tt.passes, tt.unimpl) {
				if !strings.Contains(text.String(), id) {
					t.Errorf("the terminal report does not name %s:\n%s", id, text.String())
				}
			}
		})
	}
}

func TestBaselineExpiredNewFailureNamesItsEntry(t *testing.T) {
	b, err := ParseBaseline(strings.NewReader("wire/1.3/byte-at-a-time  splits  expires=2026-01-31\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := b.Apply(fixture(), day("2026-02-01"))
	i := slices.IndexFunc(res.New, func(c BaselineCase) bool { return c.ID == "wire/1.3/byte-at-a-time" })
	if i < 0 || res.New[i].Entry == nil || res.New[i].Entry.Line != 1 {
		t.Fatalf("the new failure does not name its expired entry: %+v", res.New)
	}
	var text, md strings.Builder
	WriteBaselineText(&text, res)
	WriteBaselineMarkdown(&md, res)
	for _, out := range []string{text.String(), md.String()} {
		if !strings.Contains(out, "expired on 2026-01-31") {
			t.Errorf("the report does not say the entry expired:\n%s", out)
		}
	}
}

func TestBaselineRecordVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		modify func(r *Record)
		want   int
	}{
		{"no SUT", func(r *Record) { r.ExitCode = 3 }, 3},
		{"interrupted", func(r *Record) { r.Interrupted = true }, 1},
		{"clean", func(r *Record) {}, 0},
	}
	b, err := ParseBaseline(strings.NewReader("**  everything is known\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixture()
			tt.modify(r)
			if got := b.Apply(r, day("2026-01-01")).ExitCode(false); got != tt.want {
				t.Errorf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
	var nilBaseline *Baseline
	if res := nilBaseline.Apply(fixture(), day("2026-01-01")); len(res.New) != 3 {
		t.Errorf("a nil baseline: %d new failures, want 3", len(res.New))
	}
}

func TestFromRecord(t *testing.T) {
	r := fixture()
	r.Cases[1].Message = "issue=https://x.org/1 expires=2027-01-01 broke\nacross lines"
	r.Cases = append(r.Cases, CaseResult{ID: "wire/1.3/odd[id]*", Level: MUST, Outcome: Fail, Message: "odd"})
	r.Summarize()
	text := FromRecord(r)
	for _, want := range []string{
		"# conform baseline: the known failures of ./mybinding (mybinding 1.2.3 (c))\n",
		"wire/1.3/byte-at-a-time    fail: issue:https://x.org/1 expires:2027-01-01 broke across lines\n",
		"streams/3.2/reorder        error (timeout): the SUT did not answer within 10s\n",
		`wire/1.3/odd\[id\]\*       fail: odd` + "\n",
		"streams/5/gap-report       declared, not implemented: unimplemented: gap reports\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the baseline lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "wire/6.4/unreadable-counted") {
		t.Error("a warn is listed without --strict")
	}
	b, err := ParseBaseline(strings.NewReader(text))
	if err != nil {
		t.Fatalf("FromRecord's output does not parse: %v\n%s", err, text)
	}
	res := b.Apply(r, time.Now())
	if len(res.New) != 0 || !res.Clean() || res.ExitCode(true) != 0 {
		t.Errorf("FromRecord's baseline applied to its record: %+v", res)
	}
	if len(res.Known) != 5 {
		t.Errorf("%d known failures, want 5 (4 failing cases and 1 declared, unimplemented)", len(res.Known))
	}
	if b.Entries[0].Issue != "" || !b.Entries[0].Expires.IsZero() {
		t.Errorf("words of a message became tokens: %+v", b.Entries[0])
	}

	r.Strict = true
	if !strings.Contains(FromRecord(r), "wire/6.4/unreadable-counted") {
		t.Error("a warn is not listed under --strict")
	}
	clean := fixture()
	clean.Cases = clean.Cases[:1]
	if got := FromRecord(clean); !strings.Contains(got, "# No case failed") {
		t.Errorf("a clean record's baseline:\n%s", got)
	}
}

func TestWriteBaselineMarkdown(t *testing.T) {
	b, err := ParseBaseline(strings.NewReader(
		"wire/1.3/byte-at-a-time  splits  issue=https://example.org/b/1\n" +
			"streams/3.4/window-is-64  window\nwire/9/gone  gone\n"))
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := WriteBaselineMarkdown(&md, b.Apply(fixture(), day("2026-01-01"))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1 known failure(s), **2 new failure(s)**, 1 unaccepted unimplemented, 1 unexpected pass(es), 1 stale entr(ies), 0 expired entr(ies).",
		"- ❌ unimplemented `streams/5/gap-report` in a declared profile, accepted by no entry",
		"- ❌ new failure `streams/3.1/keyed-on-pair` fail",
		"- 🎉 unexpected pass `streams/3.4/window-is-64`: remove line 2",
		"- stale entry on line 3: `wire/9/gone` matches no case",
		"- `wire/1.3/byte-at-a-time` fail — splits ([issue](<https://example.org/b/1>))",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md.String())
		}
	}
}
