package reports

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// This file holds what the JUnit, Markdown and HTML renderings share: the
// verdict of a record, the grouping of cases by suite, and the shaping of
// evidence text.

// Failing reports whether c counts as a failure of the run it belongs to:
// its outcome is fail or error, or warn when strict is set (under --strict a
// broken SHOULD is a failure).
func Failing(c CaseResult, strict bool) bool {
	switch c.Outcome {
	case Fail, Error:
		return true
	case Warn:
		return strict
	}
	return false
}

// SectionOf returns the section of a case ID, its part between the first and
// the second '/', or "" when the ID has no second part.
func SectionOf(id string) string {
	_, rest, ok := strings.Cut(id, "/")
	if !ok {
		return ""
	}
	sec, _, _ := strings.Cut(rest, "/")
	return sec
}

// suiteGroup is the cases of one suite, in record order.
type suiteGroup struct {
	Name  string
	Cases []CaseResult
}

// groupBySuite groups r's cases by suite, suites in the order their first
// case appears in the record.
func groupBySuite(r *Record) []suiteGroup {
	var groups []suiteGroup
	index := map[string]int{}
	for _, c := range r.Cases {
		s := SuiteOf(c.ID)
		i, ok := index[s]
		if !ok {
			i = len(groups)
			index[s] = i
			groups = append(groups, suiteGroup{Name: s})
		}
		groups[i].Cases = append(groups[i].Cases, c)
	}
	return groups
}

// suiteNames returns the suites of r in record order, followed by any suite
// the summary counts that has no case in the record.
func suiteNames(r *Record) []string {
	var names []string
	seen := map[string]bool{}
	for _, g := range groupBySuite(r) {
		names = append(names, g.Name)
		seen[g.Name] = true
	}
	var extra []string
	for s := range r.Summary.BySuite {
		if !seen[s] {
			extra = append(extra, s)
		}
	}
	slices.Sort(extra)
	return append(names, extra...)
}

// helloInfo is what the renderings show of the SUT's Hello.
type helloInfo struct {
	Implementation string   `json:"implementation"`
	Version        string   `json:"version"`
	Language       string   `json:"language"`
	Profiles       []string `json:"profiles"`
}

// hello decodes the parts of r's Hello the renderings show; it returns the
// zero value when the SUT sent none.
func hello(r *Record) helloInfo {
	var h helloInfo
	if len(r.SUT.Hello) > 0 {
		_ = json.Unmarshal(r.SUT.Hello, &h) // a malformed Hello shows as none
	}
	return h
}

// String returns "implementation version (language)", or "" without a
// Hello.
func (h helloInfo) String() string {
	s := strings.TrimSpace(h.Implementation + " " + h.Version)
	if h.Language != "" {
		s += " (" + h.Language + ")"
	}
	return strings.TrimSpace(s)
}

// oneLine folds s onto a single line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// firstMessage returns the first evidence message of c, or its message.
func firstMessage(c CaseResult) string {
	for _, e := range c.Evidence {
		if e.Message != "" {
			return e.Message
		}
	}
	return c.Message
}

// evidenceText renders c's message, evidence, notes and reproduce command
// as plain text, blocks separated by blank lines, each field clipped to
// limit bytes (no clipping when limit <= 0).
func evidenceText(c CaseResult, limit int) string {
	clip := func(s string) string {
		if limit > 0 {
			s = Clip(s, limit)
		}
		return Visible(s)
	}
	var blocks []string
	var b strings.Builder
	if c.Message != "" {
		fmt.Fprintf(&b, "%s\n", clip(c.Message))
	}
	if c.ErrorKind != "" {
		fmt.Fprintf(&b, "error kind: %s\n", c.ErrorKind)
	}
	flush := func() {
		if b.Len() > 0 {
			blocks = append(blocks, b.String())
			b.Reset()
		}
	}
	flush()
	for i, e := range c.Evidence {
		fmt.Fprintf(&b, "evidence %d: %s\n", i+1, clip(e.Message))
		for _, f := range evidenceFields(e) {
			v := strings.TrimRight(clip(f.Value), "\n")
			if strings.Contains(v, "\n") {
				fmt.Fprintf(&b, "  %s:\n    %s\n", f.Name, strings.ReplaceAll(v, "\n", "\n    "))
			} else {
				fmt.Fprintf(&b, "  %s: %s\n", f.Name, v)
			}
		}
		flush()
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "note: %s\n", clip(n))
	}
	flush()
	if c.Reproduce != "" {
		fmt.Fprintf(&b, "reproduce: %s\n", c.Reproduce)
	}
	flush()
	return strings.Join(blocks, "\n")
}

// field is one named part of an evidence entry.
type field struct{ Name, Value string }

// evidenceFields returns the non-empty fields of e in display order.
func evidenceFields(e Evidence) []field {
	var fs []field
	for _, f := range []field{{"input", e.Input}, {"expected", e.Expected}, {"got", e.Got}, {"diff", e.Diff}, {"stderr", e.Stderr}} {
		if f.Value != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// hexDump lays out s as a classic hex dump — offset, sixteen bytes, their
// ASCII — when s is a space-separated run of hex bytes longer than one line,
// with " | " marking read boundaries (as the wire cases write their input)
// and "<…>" markers such as "<end of stream>" kept on lines of their own.
// Anything else comes back unchanged.
func hexDump(s string) string {
	chunks := strings.Split(s, " | ")
	type chunk struct {
		bytes  []byte
		marker string
	}
	var parsed []chunk
	total := 0
	for _, ch := range chunks {
		ch = strings.TrimSpace(ch)
		if strings.HasPrefix(ch, "<") && strings.HasSuffix(ch, ">") && !strings.ContainsAny(ch[1:len(ch)-1], "<>") {
			parsed = append(parsed, chunk{marker: ch})
			continue
		}
		words := strings.Fields(ch)
		if len(words) == 0 {
			return s
		}
		bs := make([]byte, 0, len(words))
		for _, w := range words {
			if len(w) != 2 || !isHex(w[0]) || !isHex(w[1]) {
				return s
			}
			bs = append(bs, unhex(w[0])<<4|unhex(w[1]))
		}
		total += len(bs)
		parsed = append(parsed, chunk{bytes: bs})
	}
	if total <= 16 {
		return s
	}
	var b strings.Builder
	reads := 0
	for _, ch := range parsed {
		if ch.bytes != nil {
			reads++
		}
	}
	n := 0
	for _, ch := range parsed {
		if ch.marker != "" {
			b.WriteString(ch.marker + "\n")
			continue
		}
		if reads > 1 {
			n++
			fmt.Fprintf(&b, "read %d (%d bytes)\n", n, len(ch.bytes))
		}
		for off := 0; off < len(ch.bytes); off += 16 {
			line := ch.bytes[off:min(off+16, len(ch.bytes))]
			fmt.Fprintf(&b, "%08x  ", off)
			for i := 0; i < 16; i++ {
				if i < len(line) {
					fmt.Fprintf(&b, "%02x ", line[i])
				} else {
					b.WriteString("   ")
				}
				if i == 7 {
					b.WriteString(" ")
				}
			}
			b.WriteString(" |")
			for _, c := range line {
				if c >= 0x20 && c < 0x7f {
					b.WriteByte(c)
				} else {
					b.WriteByte('.')
				}
			}
			b.WriteString("|\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
