package corpus_test

import (
	"testing"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

func hexOf(t *testing.T, s string) []byte {
	t.Helper()
	var b corpus.Bytes
	if err := b.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMatchTLVs: each comparison accepts exactly what its doc comment says.
func TestMatchTLVs(t *testing.T) {
	const (
		settings     = "0b 01 00 00"                                     // SETTINGS{}
		settingsLL   = "0b 03 00 00 00 00"                               // SETTINGS{}, 6-byte header
		listAB       = "80 01 0a 00 02 00 01 00 61 02 00 01 00 62"       // BATCH{NAME a, NAME b}
		listBA       = "80 01 0a 00 02 00 01 00 62 02 00 01 00 61"       // BATCH{NAME b, NAME a}
		listBAPoint  = "07 01 0c 00 02 00 01 00 62 02 02 01 00 00 00 61" // POINT{NAME b, NAME a (LL)}
		listAA       = "80 01 0a 00 02 00 01 00 61 02 00 01 00 61"
		aclStarApp   = "05 01 16 00 02 00 01 00 2a 01 00 01 00 01 02 00 03 00 61 70 70 01 00 01 00 0b"
		aclAppStar   = "05 01 16 00 02 00 03 00 61 70 70 01 00 01 00 0b 02 00 01 00 2a 01 00 01 00 01"
		aclSwapped   = "05 01 16 00 02 00 01 00 2a 01 00 01 00 0b 02 00 03 00 61 70 70 01 00 01 00 01"
		valueX       = "01 00 01 00 78"
		valueXLL     = "01 02 01 00 00 00 78"
		valueXTS     = "01 04 01 00 78 00 00 00 00"
		valueXRunsOn = "01 00 01 00 78 00"
	)
	for _, c := range []struct {
		match, want, got string
		ok               bool
	}{
		{"", valueX, valueX, true},
		{corpus.MatchExact, valueX, valueXLL, false},
		{corpus.MatchTLV, valueX, valueXLL, true},
		{corpus.MatchTLV, settings, settingsLL, true},
		{corpus.MatchTLV, valueX, valueXTS, false},     // trailer bits at rest
		{corpus.MatchTLV, valueX, valueXRunsOn, false}, // bytes after the TLV
		{corpus.MatchTLV, listAB, listBA, false},       // children in order
		{corpus.MatchList, listAB, listBA, true},
		{corpus.MatchList, listAB, listBAPoint, true}, // any PL container, any header form
		{corpus.MatchList, listAB, listAA, false},     // a multiset, not a set
		{corpus.MatchList, listAB, valueX, false},
		{corpus.MatchPairs, aclStarApp, aclAppStar, true},
		{corpus.MatchPairs, aclStarApp, aclSwapped, false}, // pairs are kept whole
		{corpus.MatchPairs, aclStarApp, listAB, false},     // the type is judged
	} {
		if got := corpus.MatchTLVs(c.match, hexOf(t, c.want), hexOf(t, c.got)); got != c.ok {
			t.Errorf("MatchTLVs(%q, %s, %s) = %v, want %v", c.match, c.want, c.got, got, c.ok)
		}
	}
}

// TestGraphStatusWords: "refused" takes any refusal, "any" anything, and a
// code exactly itself.
func TestGraphStatusWords(t *testing.T) {
	v := &corpus.GraphVector{ID: "graph/v1/t", Steps: []corpus.GraphStep{
		{Op: "register", Path: "/a", Expect: &corpus.GraphExpect{Status: corpus.StatusRefused, Deliveries: []corpus.GraphDelivery{}}},
		{Op: "register", Path: "/b", Expect: &corpus.GraphExpect{Status: corpus.StatusAny, Deliveries: []corpus.GraphDelivery{}}},
		{Op: "register", Path: "/c", Expect: &corpus.GraphExpect{Status: "0x0021 tr::path::invalid", Deliveries: []corpus.GraphDelivery{}}},
	}}
	for _, c := range []struct {
		statuses []uint32
		bad      []int
	}{
		{[]uint32{0x10, 0, 0x21}, nil},
		{[]uint32{0, 0x51, 0x20}, []int{0, 2}},
	} {
		out := &conformpb.GraphScriptOutput{}
		for _, st := range c.statuses {
			out.Replies = append(out.Replies, &conformpb.GraphReply{Status: st})
		}
		var bad []int
		for _, m := range v.Check(out) {
			bad = append(bad, m.Step)
		}
		if len(bad) != len(c.bad) || (len(bad) > 0 && (bad[0] != c.bad[0] || bad[len(bad)-1] != c.bad[len(c.bad)-1])) {
			t.Errorf("statuses %x: mismatches at steps %v, want %v", c.statuses, bad, c.bad)
		}
	}
}

// TestGraphWakesInAnyOrder: the awaits one step completes are compared as a
// set, each with its own status.
func TestGraphWakesInAnyOrder(t *testing.T) {
	want := []corpus.GraphWakeExpect{{Step: 1, Status: "0x0020 tr::path::not_found"}, {Step: 2, Value: hexOf(t, "01 00 01 00 78"), Match: corpus.MatchTLV}}
	got := []*conformpb.GraphWake{{Step: 2, Value: hexOf(t, "01 02 01 00 00 00 78")}, {Step: 1, Status: 0x20}}
	v := &corpus.GraphVector{ID: "graph/v1/t", Steps: []corpus.GraphStep{
		{Op: "await", Path: "/a"},
		{Op: "await", Path: "/b"},
		{Op: "write", Path: "/b", Value: hexOf(t, "01 00 01 00 78"), Expect: &corpus.GraphExpect{Status: corpus.StatusAny, Deliveries: []corpus.GraphDelivery{}, Wakes: want}},
	}}
	out := &conformpb.GraphScriptOutput{Replies: []*conformpb.GraphReply{{}, {}, {Wakes: got}}}
	if ms := v.Check(out); len(ms) != 0 {
		t.Errorf("wakes in another order: %v", ms)
	}
	got[1].Status = 0x21
	if ms := v.Check(out); len(ms) != 1 || ms[0].Step != 2 {
		t.Errorf("a wake with another status: %v, want one mismatch, at step 2", ms)
	}
}

// TestGraphStepDescribe: a step's line names everything the step carries.
func TestGraphStepDescribe(t *testing.T) {
	for _, c := range []struct {
		st   corpus.GraphStep
		want string
	}{
		{corpus.GraphStep{Op: "write", Caller: "app", Path: "/v", Value: hexOf(t, "01 00 01 00 31")}, "app write /v = 01 00 01 00 31"},
		{corpus.GraphStep{Op: "acl", Path: "/v", Rights: 3, Grants: map[string]uint32{"b": 1, "a": 63}}, "acl /v default 3 a=63 b=1"},
		{corpus.GraphStep{Op: "declare", Path: "/v", Fields: []corpus.GraphAppField{{Name: "g", Access: "rw", Initial: hexOf(t, "01 00 00 00")}}}, "declare /v g(rw)=01 00 00 00"},
		{corpus.GraphStep{Op: "evict", Link: ""}, `evict ""`},
		{corpus.GraphStep{Op: "depth", Path: "/s", Keep: 4}, "depth /s 4"},
	} {
		if got := c.st.Describe(); got != c.want {
			t.Errorf("Describe() = %q, want %q", got, c.want)
		}
	}
}
