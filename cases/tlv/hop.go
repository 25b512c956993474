package tlv

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	reftlv "github.com/conform-suite/conform/ref/tlv"
)

// hopInput is the conform.v1 input of a hop vector, the frame as one segment.
func hopInput(v *corpus.TLVVector) *conformpb.TlvHopInput {
	h := v.Hop
	return &conformpb.TlvHopInput{Links: h.Links, Inbound: uint32(h.Inbound), Frame: ropeOf(v.Input),
		Egress: egressOf(h.Egress.TSWidth, h.Egress.CRC, h.Egress.Clock)}
}

func showHopInput(in *conformpb.TlvHopInput) string {
	return fmt.Sprintf("links %q, arrived on %d; frame %s; egress ts_width %d, crc %s, clock %d", in.GetLinks(), in.GetInbound(),
		showRope(in.GetFrame()), in.GetEgress().GetTsWidth(), in.GetEgress().GetCrc(), in.GetEgress().GetClockUnixNs())
}

// hopView is what a hop did, rendered; a case fills the fields it judges.
type hopView struct {
	Refused  string `json:",omitempty"`
	Terminus bool
	Link     string `json:",omitempty"`
	Frame    string `json:",omitempty"`
	Stored   string `json:",omitempty"`
	Dst, Src string `json:",omitempty"`
}

func showHop(x any) string {
	h := x.(hopView)
	var parts []string
	switch {
	case h.Refused != "":
		return h.Refused
	case h.Terminus:
		parts = append(parts, "terminus")
	case h.Link != "":
		parts = append(parts, "forwarded on link "+h.Link)
	default:
		parts = append(parts, "forwarded")
	}
	for _, f := range []struct{ name, v string }{{"frame", h.Frame}, {"stored", h.Stored}, {"dst", h.Dst}, {"src", h.Src}} {
		if f.v != "" {
			parts = append(parts, f.name+" "+f.v)
		}
	}
	return strings.Join(parts, "; ")
}

// routes returns the dst and src PATH payloads of a forwarded FWD frame, read
// with the reference decoder (the oracle only parses; the verdict compares
// with the vector).
func routes(frame []byte) (dst, src string) {
	n, err := reftlv.Decode(reftlv.NewRope(frame))
	if err != nil {
		return "the forwarded frame does not decode: " + err.Error(), ""
	}
	f, err := reftlv.DecodeFwd(n)
	if err != nil {
		return "the forwarded frame is not a FWD: " + err.Error(), ""
	}
	return "[" + corpus.FormatHex(f.Dst.Bytes()) + "]", "[" + corpus.FormatHex(f.Src.Bytes()) + "]"
}

// hopField selects what a hop case judges.
type hopField uint8

const (
	hLink hopField = 1 << iota
	hFrame
	hStored
	hDst
	hSrc
)

func wantHop(v *corpus.TLVVector, f hopField) hopView {
	h := v.Hop
	w := hopView{Terminus: h.Terminus}
	if h.Terminus {
		if f&hStored != 0 {
			w.Stored = hexOf(h.Stored)
		}
		return w
	}
	if f&hLink != 0 {
		w.Link = fmt.Sprint(h.Link)
	}
	if f&hFrame != 0 {
		w.Frame = hexOf(h.Output)
	}
	dst, src := routes(h.Output)
	if f&hDst != 0 {
		w.Dst = dst
	}
	if f&hSrc != 0 {
		w.Src = src
	}
	return w
}

func gotHop(o *conformpb.TlvHopOutput, f hopField) hopView {
	if r := o.GetRefusal(); r != nil {
		return hopView{Refused: statusText(r.GetStatus()) + ": " + r.GetReason()}
	}
	g := hopView{Terminus: o.GetTerminus()}
	if g.Terminus {
		if f&hStored != 0 {
			g.Stored = hexOf(o.GetStored())
		}
		return g
	}
	if f&hLink != 0 {
		g.Link = fmt.Sprint(o.GetLink())
	}
	if f&hFrame != 0 {
		g.Frame = hexOf(o.GetFrame())
	}
	dst, src := routes(o.GetFrame())
	if f&hDst != 0 {
		g.Dst = dst
	}
	if f&hSrc != 0 {
		g.Src = src
	}
	return g
}

// runHops performs each vector's hop and judges the fields f.
func runHops(t *cases.T, what string, vs []*corpus.TLVVector, f hopField) {
	var ins []*conformpb.TlvHopInput
	for _, v := range vs {
		ins = append(ins, hopInput(v))
	}
	fl := newFailures(t, what)
	for i, out := range hop(t, ins) {
		fl.check(showHopInput(ins[i])+" ("+vs[i].Title+")", wantHop(vs[i], f), gotHop(out, f), showHop)
	}
	fl.done()
}

// hops is graph model §The shedding rule (mandatory) and §Graph data vs
// in-flight messages, as RECONSTRUCTED §2 (The forward hop) encodes them and
// §4 reads the worked sequence: strip the whole leading dst mount run,
// prepend the inbound link's run to src, re-emit the rest untouched with a
// fresh trailer; at the terminus shed the envelope and store the bare
// payload, trailer-less.
func (s *suite) hops() []cases.Case {
	hs := spec(secShedding, "RECONSTRUCTED §2 The forward hop", "RECONSTRUCTED §4")
	forwarding := []string{"hop-strips-mount-run", "hop-second-run", "hop-reply-leg", "hop-payload-untouched", "hop-keeps-ll", "hop-fresh-trailer"}
	terminus := []string{"hop-terminus", "hop-terminus-trailer-less", "hop-identity-vertex"}
	hopCase := func(id, title string, f hopField, names ...string) cases.Case {
		return reconstructed(must(cases.Case{
			ID: "tlv/" + secShedding + "/" + id, Title: title, Spec: hs, Vectors: ids(names...),
			Run: func(t *cases.T) { runHops(t, title, s.vecs(names...), f) },
		}))
	}
	return []cases.Case{
		hopCase("strip-the-whole-mount-run", "A hop strips the whole leading dst mount run net/<module>/<name>[/<peer>], not one segment", hDst, forwarding...),
		hopCase("prepend-the-inbound-run-to-src", "A hop prepends the inbound link's mount run to src, so the return route grows", hSrc, forwarding...),
		hopCase("forward-on-the-named-link", "A hop forwards on the link whose mount run leads dst", hLink, forwarding...),
		hopCase("rest-re-emitted-untouched", "A hop re-emits the OP and payload bytes as received, non-minimal LL headers and inner trailers included", hFrame,
			"hop-payload-untouched", "hop-keeps-ll", "hop-strips-mount-run"),
		hopCase("fresh-trailer-per-egress", "A forwarded frame carries the egress link's fresh trailer, not the one it arrived with", hFrame, "hop-fresh-trailer"),
		hopCase("terminus-when-dst-is-local", "A dst that begins with no link's mount run, or is exactly one (the identity vertex), makes the node the terminus", 0, terminus...),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secEnvelope + "/terminus-stores-the-bare-payload",
			Title:   "At the terminus the FWD envelope is shed and the graph stores only the bare payload TLV, trailer-less at rest",
			Spec:    spec(secEnvelope, "libtracer-graph-model §The shedding rule (mandatory)", "RECONSTRUCTED §2 Record layouts"),
			Vectors: ids(terminus...),
			Run: func(t *cases.T) {
				runHops(t, "the payload stored at the terminus", s.vecs(terminus...), hStored)
			},
		})),
	}
}
