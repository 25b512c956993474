package graph_test

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	graphcases "github.com/conform-suite/conform/cases/graph"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
)

// longGraph is the reference graph writing every TLV it synthesizes — a
// field read other than a stored app field or SUBSCRIBER record, a composed
// branch read, a FWD{REPLY} — with 6-byte headers: a SUT that breaks the
// SHOULD of minimal headers and no MUST.
type longGraph struct{ *graph.Graph }

func (g longGraph) Read(c graph.Caller, addr string) (*tlv.Node, error) {
	n, err := g.Graph.Read(c, addr)
	if err != nil {
		return n, err
	}
	a, _ := graph.ParseAddress(addr)
	stored := !a.HasField || strings.HasPrefix(a.Field, "settings.app.") || n.Type() == tlv.TypeSubscriber
	if info, _ := g.Vertex(graph.Address{Path: a.Path}.String()); !a.HasField && info.Branch {
		stored = false
	}
	if stored {
		return n, err
	}
	return long(n), nil
}

func (g longGraph) ApplyFwd(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
	rep, w, err := g.Graph.ApplyFwd(c, frame)
	if rep != nil {
		rep = long(rep)
	}
	return rep, w, err
}

// long re-encodes n with every header in the 6-byte form, but a VALUE's.
func long(n *tlv.Node) *tlv.Node {
	var enc func(b []byte) []byte
	enc = func(b []byte) []byte {
		var out []byte
		for len(b) >= 4 {
			opt, h := b[1], 4
			l := int(binary.LittleEndian.Uint16(b[2:4]))
			if opt&0x02 != 0 {
				l, h = int(binary.LittleEndian.Uint32(b[2:6])), 6
			}
			body := b[h : h+l]
			if b[0] == 0x01 && opt&0x01 == 0 {
				// A VALUE is stored and served verbatim, never synthesized.
				out, b = append(out, b[:h+l]...), b[h+l:]
				continue
			}
			if opt&0x01 != 0 {
				body = enc(body)
			}
			out = binary.LittleEndian.AppendUint32(append(out, b[0], opt|0x02), uint32(len(body)))
			out = append(out, body...)
			b = b[h+l:]
		}
		return out
	}
	m, err := tlv.Decode(tlv.NewRope(enc(n.Bytes())))
	if err != nil {
		panic(err)
	}
	return m
}

// TestLongHeadersBreakOnlyTheShould: a SUT that writes the 6-byte header
// wherever it synthesizes a TLV passes every MUST case — a reader accepts the
// 6-byte header (reconstructed§tlv-header#4) — and warns on the one SHOULD
// case that judges the 4-byte form (reconstructed§tlv-header#3).
func TestLongHeadersBreakOnlyTheShould(t *testing.T) {
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	im := suites.Default().Reference()
	im.Graph.New = func() impl.GraphModel { return longGraph{graph.New(graph.Config{})} }
	rec := runner.Run(context.Background(), runner.Config{Spec: "builtin:long", Client: builtin.New("builtin:long", im), Cases: graphcases.Catalogue(set), Seed: 1})
	warned := false
	for _, c := range rec.Cases {
		switch {
		case c.ID == "graph/nested-tlv-structure/synthesized-headers-are-minimal":
			warned = c.Outcome == reports.Warn
		case c.Outcome != reports.Pass && c.Outcome != reports.Info:
			t.Errorf("%s is %s against 6-byte headers: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
		}
	}
	if !warned {
		t.Error("the minimal-header SHOULD case does not warn on 6-byte headers")
	}
}
