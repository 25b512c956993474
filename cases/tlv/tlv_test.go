package tlv_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/conform-suite/conform/cases"
	tlvcases "github.com/conform-suite/conform/cases/tlv"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
)

func catalogue(t *testing.T) []cases.Case {
	t.Helper()
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	return tlvcases.Catalogue(set)
}

// outcomes runs the tlv catalogue against im and returns each case's outcome.
func outcomes(t *testing.T, name string, im *impl.Impl) map[string]*reports.CaseResult {
	t.Helper()
	rec := runner.Run(context.Background(), runner.Config{Spec: name, Client: builtin.New(name, im), Cases: catalogue(t), Seed: 1})
	out := map[string]*reports.CaseResult{}
	for i := range rec.Cases {
		out[rec.Cases[i].ID] = &rec.Cases[i]
	}
	return out
}

// TestReferencePasses: the reference passes the tlv catalogue on its own, a
// quick check while working on one suite. That every mutant is caught and
// every MUST case catches one is the suites package's TestMutationTable.
func TestReferencePasses(t *testing.T) {
	passed := 0
	for id, c := range outcomes(t, "builtin:reference", suites.Default().Reference()) {
		if c.Outcome != reports.Pass {
			t.Errorf("reference: %s is %s: %s %v", id, c.Outcome, c.Message, c.Evidence)
		} else {
			passed++
		}
	}
	if passed < 50 {
		t.Errorf("the reference passes %d tlv cases, want at least 50", passed)
	}
}

// TestCasesNameTheirRequirements: every case names the requirements it
// judges, each written as an index ID, and cites sections by slug.
func TestCasesNameTheirRequirements(t *testing.T) {
	for _, c := range catalogue(t) {
		if len(c.Requirements) == 0 {
			t.Errorf("%s names no requirement", c.ID)
		}
		for _, r := range c.Requirements {
			if !requirementID.MatchString(r) {
				t.Errorf("%s: %q is not a requirement ID of libtracer-graph-model or reconstructed", c.ID, r)
			}
		}
		if !specCitation.MatchString(c.Spec) {
			t.Errorf("%s: Spec %q does not cite libtracer-graph-model sections by slug", c.ID, c.Spec)
		}
	}
}

// The header forms a writer may choose: every header in the 6-byte LL form,
// and a forwarder that writes the headers it rebuilds in the minimal form
// whatever form they arrived in. Both break only SHOULDs
// (reconstructed§tlv-header#3 and the reading of #5 for a rebuilt header),
// so no MUST case may fail them.

// reframe returns n with its header written by form, over the same payload.
func reframe(t *testing.T, n *tlv.Node, ll bool) *tlv.Node {
	opt := n.Opt() &^ tlv.OptLL
	if ll || n.Payload().Len() > 0xFFFF {
		opt |= tlv.OptLL
	}
	b := tlv.StandardHeader{}.Append(nil, n.Type(), opt, n.Payload().Len())
	b = n.Payload().AppendTo(b)
	r, err := tlv.Decode(tlv.NewRope(b))
	if err != nil {
		t.Fatalf("reframing %s: %v", n, err)
	}
	return r
}

// llHeader is the header format that always writes the 6-byte LL header.
type llHeader struct{ tlv.StandardHeader }

func (llHeader) Size(tlv.Opt) int { return 6 }

func (llHeader) Append(dst []byte, typ tlv.Type, opt tlv.Opt, length int) []byte {
	return tlv.StandardHeader{}.Append(dst, typ, opt|tlv.OptLL, length)
}

// withHeaders returns the reference whose originated, edited and forwarded
// headers are written long (every one LL) or, for a forwarder's rebuilt
// headers only, minimal.
func withHeaders(t *testing.T, long bool) *impl.Impl {
	im := suites.Default().Reference()
	p := &im.TLV
	if long {
		p.Encode = func(tr *impl.Tree) ([]byte, error) {
			n, err := impl.NodeOf(tr)
			if err != nil {
				return nil, err
			}
			return tlv.Encoder{Header: llHeader{}}.AppendTo(nil, n), nil
		}
		concat, split, insert := p.Concat, p.Split, p.Insert
		p.Concat = func(a, b *tlv.Node) (*tlv.Node, error) {
			c, err := concat(a, b)
			if err != nil {
				return nil, err
			}
			return reframe(t, c, true), nil
		}
		p.Split = func(n *tlv.Node, k int) (*tlv.Node, *tlv.Node, error) {
			h, tl, err := split(n, k)
			if err != nil {
				return nil, nil, err
			}
			return reframe(t, h, true), reframe(t, tl, true), nil
		}
		p.Insert = func(n *tlv.Node, k int, c *tlv.Node) (*tlv.Node, error) {
			r, err := insert(n, k, c)
			if err != nil {
				return nil, err
			}
			return reframe(t, r, true), nil
		}
	}
	hop := p.Hop
	p.Hop = func(links []string, inbound int, fwd *tlv.Node) (tlv.HopResult, error) {
		res, err := hop(links, inbound, fwd)
		if err != nil || res.Terminus {
			return res, err
		}
		kids := res.Frame.Children()
		var body []byte
		for i, k := range kids {
			if i == 1 || i == 2 { // the routes, whose lengths changed
				k = reframe(t, k, long)
			}
			body = k.AppendTo(body)
		}
		res.Frame = reframe(t, tlv.NewLeaf(res.Frame.Type(), body), long)
		// NewLeaf makes the FWD opaque; give it back its PL bit.
		b := res.Frame.Bytes()
		b[1] |= byte(tlv.OptPL)
		if res.Frame, err = tlv.Decode(tlv.NewRope(b)); err != nil {
			t.Fatalf("reframing a FWD: %v", err)
		}
		return res, nil
	}
	return im
}

// TestHeaderFormIsNoMust: a SUT that writes every header long, or forwards
// with minimal rebuilt headers, fails no MUST case; the SHOULD cases on the
// form warn.
func TestHeaderFormIsNoMust(t *testing.T) {
	for _, tc := range []struct {
		name string
		long bool
		warn []string
	}{
		{"every header LL", true, []string{
			"tlv/nested-tlv-structure/encode-minimal-ll",
			"tlv/the-shedding-rule-mandatory/rebuilt-headers-keep-their-form",
		}},
		{"rebuilt headers minimal", false, []string{
			"tlv/the-shedding-rule-mandatory/rebuilt-headers-keep-their-form",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outcomes(t, tc.name, withHeaders(t, tc.long))
			want := map[string]bool{}
			for _, id := range tc.warn {
				want[id] = true
			}
			for id, c := range got {
				switch {
				case want[id] && c.Outcome != reports.Warn:
					t.Errorf("%s is %s, want warn", id, c.Outcome)
				case !want[id] && c.Outcome != reports.Pass:
					t.Errorf("%s (%s) is %s: %s %v", id, c.Level, c.Outcome, c.Message, c.Evidence)
				}
			}
		})
	}
}

var (
	requirementID = regexp.MustCompile(`^(libtracer-graph-model§[a-z0-9-]+|reconstructed§[a-z0-9-]+)#[0-9]+$`)
	specCitation  = regexp.MustCompile(`^libtracer-graph-model §[a-z0-9-]+(, §[a-z0-9-]+)*$`)
)
