package tlv

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	reftlv "github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
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
// Its fields go by conform.v1's JSON names; frame.dst, frame.src and
// frame.trailer are what the forwarded frame holds, read by the reference
// decoder.
type hopView struct {
	Refused  string `json:"refusal,omitempty"`
	Terminus bool   `json:"terminus"`
	Link     string `json:"link,omitempty"`
	Frame    string `json:"frame,omitempty"`
	Stored   string `json:"stored,omitempty"`
	Dst      string `json:"frame.dst,omitempty"`
	Src      string `json:"frame.src,omitempty"`
	Trailer  string `json:"frame.trailer,omitempty"`
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

// trailerOf returns the trailer a forwarded frame carries, its check
// verified by the reference decoder, which only parses here.
func trailerOf(frame []byte) string {
	_, tr, err := (&reftlv.Decoder{}).DecodeFrame(reftlv.NewRope(frame))
	if err != nil {
		return "the forwarded frame does not decode: " + err.Error()
	}
	return fmt.Sprintf("ts_width %d, timestamp 0x%x, crc %s, the check matching the bytes it covers", tr.TSWidth, tr.Timestamp, tr.CRC)
}

// hopField selects what a hop case judges.
type hopField uint8

const (
	hLink hopField = 1 << iota
	hFrame
	hStored
	hDst
	hSrc
	hTrailer
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
	if f&hTrailer != 0 {
		w.Trailer = trailerOf(h.Output)
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
	if f&hTrailer != 0 {
		g.Trailer = trailerOf(o.GetFrame())
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
		fl.compare(showHopInput(ins[i])+" ("+vs[i].Title+")", wantHop(vs[i], f), gotHop(out, f))
	}
	fl.done()
}

// untouched returns what a hop must re-emit of a FWD that arrives as in and
// leaves with no trailer: a FWD header in either form, the OP child and the
// payload child byte for byte as received, and two PATH routes this check
// leaves to the cases on dst and src.
func untouched(in []byte) (built, error) {
	_, _, body, _, err := splitHeader(in)
	if err != nil {
		return built{}, err
	}
	var kids [][]byte
	for len(body) > 0 {
		_, _, _, rest, err := splitHeader(body)
		if err != nil {
			return built{}, err
		}
		kids = append(kids, body[:len(body)-len(rest)])
		body = rest
	}
	if len(kids) != 4 {
		return built{}, fmt.Errorf("a FWD of %d children", len(kids))
	}
	route := built{typ: 0x06, any: true}
	return built{typ: in[0], opt: 0x01, kids: []built{asReceived(kids[0]), route, route, asReceived(kids[3])}}, nil
}

// hops is graph model §The shedding rule (mandatory) and §Graph data vs
// in-flight messages, as reconstructed§tlv-forward-hop encodes them and
// reconstructed§contradictions#3 reads the worked sequence: strip the whole
// leading dst mount run, prepend the inbound link's run to src, re-emit the
// rest untouched with a fresh trailer; at the terminus shed the envelope and
// store the bare payload, trailer-less.
func hops(k *cases.Kit, vs *vectors) []cases.Case {
	forwarding := []string{"hop-strips-mount-run", "hop-second-run", "hop-reply-leg", "hop-payload-untouched", "hop-keeps-ll", "hop-fresh-trailer",
		"hop-op-read", "hop-op-await", "hop-op-subscribe"}
	terminus := []string{"hop-terminus", "hop-terminus-trailer-less", "hop-identity-vertex"}
	hopCase := func(id, title string, reqs []string, f hopField, names ...string) cases.Case {
		return k.Must(func() cases.Case {
			hs := vs.List(names...)
			return cases.Case{
				ID: id, Title: title, Spec: "libtracer-graph-model §the-shedding-rule-mandatory", Requirements: reqs,
				Run: func(t *cases.T) { runHops(t, title, hs, f) },
			}
		})
	}
	return []cases.Case{
		hopCase("tlv/the-shedding-rule-mandatory/strip-the-whole-mount-run",
			"A hop strips the whole leading dst mount run net/<module>/<name>[/<peer>], not one segment, whatever the op",
			[]string{
				"libtracer-graph-model§the-shedding-rule-mandatory#1",
				"libtracer-graph-model§the-shedding-rule-mandatory#10",
				"libtracer-graph-model§a-worked-sequence#1",
				"libtracer-graph-model§a-worked-sequence#2",
				"libtracer-graph-model§graph-data-vs-in-flight-messages-the-fwd-envelope#2",
				"reconstructed§contradictions#3",
				"reconstructed§tlv-forward-hop#1",
				"reconstructed§tlv-forward-hop#2",
				"reconstructed§tlv-records#6",
				"reconstructed§tlv-type-codes#1",
			}, hDst, forwarding...),
		hopCase("tlv/the-shedding-rule-mandatory/prepend-the-inbound-run-to-src",
			"A hop prepends the inbound link's mount run to src, so the return route grows",
			[]string{
				"libtracer-graph-model§the-shedding-rule-mandatory#2",
				"libtracer-graph-model§a-worked-sequence#2",
				"reconstructed§contradictions#3",
				"reconstructed§tlv-forward-hop#2",
			}, hSrc, forwarding...),
		hopCase("tlv/the-shedding-rule-mandatory/forward-on-the-named-link",
			"A hop forwards on the link whose mount run leads dst, whatever the op",
			[]string{
				"libtracer-graph-model§the-shedding-rule-mandatory#3",
				"libtracer-graph-model§the-shedding-rule-mandatory#10",
				"libtracer-graph-model§a-worked-sequence#2",
				"reconstructed§tlv-forward-hop#2",
			}, hLink, forwarding...),
		k.Must(func() cases.Case {
			hs := vs.List("hop-payload-untouched", "hop-keeps-ll", "hop-strips-mount-run", "hop-op-subscribe")
			return cases.Case{
				ID: "tlv/the-shedding-rule-mandatory/rest-re-emitted-untouched",
				// The FWD and route headers change length, so the hop writes
				// them anew, in either form at this level;
				// rebuilt-headers-keep-their-form judges the form.
				Title: "A hop re-emits the OP and the payload byte for byte as received, non-minimal LL headers and inner trailers included, under a FWD header of either form",
				Spec:  "libtracer-graph-model §the-shedding-rule-mandatory, §graph-data-vs-in-flight-messages-the-fwd-envelope, §payload-invariance-across-boundaries",
				Requirements: []string{
					"libtracer-graph-model§the-shedding-rule-mandatory#3",
					"libtracer-graph-model§graph-data-vs-in-flight-messages-the-fwd-envelope#2",
					"libtracer-graph-model§payload-invariance-across-boundaries#7",
					"reconstructed§tlv-forward-hop#2",
					"reconstructed§tlv-header#5",
				},
				Run: func(t *cases.T) {
					var ins []*conformpb.TlvHopInput
					var wants []built
					for _, v := range hs {
						w, err := untouched(v.Input)
						if err != nil {
							t.Harnessf("vector %s: %v", v.ID, err)
						}
						ins, wants = append(ins, hopInput(v)), append(wants, w)
					}
					f := newFailures(t, "the rest of a forwarded frame")
					for i, out := range hop(t, ins) {
						why := ""
						switch {
						case out.GetRefusal() != nil:
							why = "refused: " + statusText(out.GetRefusal().GetStatus()) + ": " + out.GetRefusal().GetReason()
						case out.GetTerminus():
							why = "taken for the terminus"
						default:
							why = wants[i].match(out.GetFrame())
						}
						f.record(why == "", reports.Evidence{
							Message:  "the rest of a forwarded frame: " + why,
							Input:    showHopInput(ins[i]) + " (" + hs[i].Title + ")",
							Expected: "a FWD header in either form, the OP child and the payload child as received, for instance " + hexOf(hs[i].Hop.Output),
							Got:      hexOf(out.GetFrame()),
							Diff:     evidence.Format(evidence.DiffAt("frame (against the instance)", []byte(hs[i].Hop.Output), out.GetFrame())),
						})
					}
					f.done()
				},
			}
		}),
		hopCase("tlv/the-shedding-rule-mandatory/fresh-trailer-per-egress",
			"A forwarded frame carries the egress link's fresh trailer, its timestamp the egress clock and its check over the frame as re-emitted, not the trailer it arrived with",
			[]string{
				"libtracer-graph-model§the-shedding-rule-mandatory#4",
				"libtracer-graph-model§payload-invariance-across-boundaries#5",
				"reconstructed§contradictions#4",
				"reconstructed§tlv-forward-hop#2",
			}, hTrailer, "hop-fresh-trailer"),
		k.Should(func() cases.Case {
			hs := vs.List(forwarding...)
			return cases.Case{
				ID: "tlv/the-shedding-rule-mandatory/rebuilt-headers-keep-their-form",
				// "A forwarder re-emits the bytes it received" cannot hold for
				// a header whose length changed; reconstructed§tlv-header#8
				// pins the form such a header keeps, at SHOULD.
				Title: "A hop writes the FWD and route headers it must rebuild in the form they arrived in (LL kept, set when a length outgrows 16 bits): the forwarded frame is the vector's, byte for byte",
				Spec:  "libtracer-graph-model §the-shedding-rule-mandatory",
				Requirements: []string{
					"reconstructed§tlv-header#8",
				},
				Run: func(t *cases.T) { runHops(t, "a forwarded frame, byte for byte", hs, hFrame) },
			}
		}),
		hopCase("tlv/the-shedding-rule-mandatory/terminus-when-dst-is-local",
			"A dst that begins with no link's mount run, or is exactly one (the identity vertex), makes the node the terminus",
			[]string{
				"libtracer-graph-model§the-shedding-rule-mandatory#6",
				"reconstructed§tlv-forward-hop#3",
			}, 0, terminus...),
		k.Must(func() cases.Case {
			hs := vs.List(terminus...)
			return cases.Case{
				ID:    "tlv/graph-data-vs-in-flight-messages-the-fwd-envelope/terminus-stores-the-bare-payload",
				Title: "At the terminus the FWD envelope is shed and the graph stores only the bare payload TLV, trailer-less at rest",
				Spec:  "libtracer-graph-model §graph-data-vs-in-flight-messages-the-fwd-envelope, §the-shedding-rule-mandatory, §payload-invariance-across-boundaries",
				Requirements: []string{
					"libtracer-graph-model§graph-data-vs-in-flight-messages-the-fwd-envelope#1",
					"libtracer-graph-model§payload-invariance-across-boundaries#2",
					"libtracer-graph-model§the-shedding-rule-mandatory#7",
					"reconstructed§tlv-forward-hop#3",
					"reconstructed§tlv-records#6",
				},
				Run: func(t *cases.T) { runHops(t, "the payload stored at the terminus", hs, hStored) },
			}
		}),
	}
}
