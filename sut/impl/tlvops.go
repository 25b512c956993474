package impl

import (
	"context"
	"errors"
	"fmt"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/tlv"
)

// Tree is a decoded TLV as the decode op reports it: the type, the opt byte as
// its header carries it, the payload of an opaque TLV or the children of a
// structured one, and a child's own trailer. It is the decode part's answer
// rather than a *tlv.Node so that a mutant's decoder can report what the
// reference never builds (a trailer left attached, a reserved bit kept).
type Tree struct {
	Type     uint8
	Opt      uint8
	Payload  []byte
	Children []*Tree
	Trailer  []byte
}

// TreeOf converts a reference node to a Tree, copying its bytes. A
// structured node a decoder did not walk (tlv.Decoder.Walk) is reported
// with its payload.
func TreeOf(n *tlv.Node) *Tree {
	t := &Tree{Type: uint8(n.Type()), Opt: uint8(n.Opt()), Trailer: n.Trailer().Bytes()}
	if !n.Opt().PL() || n.Children() == nil && n.Payload().Len() > 0 {
		t.Payload = n.Payload().Bytes()
		return t
	}
	for _, c := range n.Children() {
		t.Children = append(t.Children, TreeOf(c))
	}
	return t
}

// TLVParts are the TLV suite's swappable parts of an Impl.
type TLVParts struct {
	// MaxDepth is the nesting depth the decoder supports, declared in the
	// Hello and passed to Decode and Ingress.
	MaxDepth int
	// Decode decodes one frame at ingress for the decode op: the tree at
	// rest and the trailer it stripped. A refusal is a *tlv.DecodeError.
	Decode func(frame tlv.Rope, maxDepth int) (*Tree, tlv.Trailer, error)
	// Ingress decodes one frame at ingress for the ops that go on to act on
	// it (edit, hop, read_policy, egress).
	Ingress func(frame tlv.Rope, maxDepth int) (*tlv.Node, tlv.Trailer, error)
	// Encode serializes a tree as its originator does.
	Encode func(t *Tree) ([]byte, error)
	// Canonicalize returns the canonical PATH payload of a string path.
	Canonicalize func(s string) ([]byte, error)
	// ValidatePath checks a received PATH payload and returns its segments.
	ValidatePath func(payload tlv.Rope) ([]string, error)
	// Concat, Split and Insert are the view-tree edits.
	Concat func(a, b *tlv.Node) (*tlv.Node, error)
	Split  func(n *tlv.Node, k int) (*tlv.Node, *tlv.Node, error)
	Insert func(n *tlv.Node, k int, child *tlv.Node) (*tlv.Node, error)
	// Serialize is the rope-to-flat-buffer walk of a TLV.
	Serialize func(n *tlv.Node) []byte
	// Hop performs one forward hop of a FWD at rest that arrived on link
	// inbound of a node with the given links.
	Hop func(links []string, inbound int, fwd *tlv.Node) (tlv.HopResult, error)
	// Store sheds the envelope of a FWD at its terminus and returns the wire
	// form of what the graph stores: the bare payload TLV, trailer-less.
	Store func(fwd *tlv.Node) ([]byte, error)
	// Egress attaches the egress trailer e to n and returns the frame's bytes.
	Egress func(n *tlv.Node, e tlv.Egress) ([]byte, error)
	// Forward, when set, writes the frame a hop re-emits on its egress link:
	// frame, the hop's result, sent with the egress trailer e. arrived is the
	// trailer the FWD carried in on the inbound link, which a conforming
	// forwarder does not reuse (graph model §The shedding rule: a fresh
	// trailer per egress). Nil means Egress(frame, e).
	Forward func(frame *tlv.Node, arrived tlv.Trailer, e tlv.Egress) ([]byte, error)
	// PackPolicy packs a delivery policy into its 16-bit form.
	PackPolicy func(p tlv.DeliveryPolicy) (uint16, error)
	// ReadPolicy reads the delivery policy of a SUBSCRIBER record.
	ReadPolicy func(sub *tlv.Node) (tlv.DeliveryPolicy, error)
}

// referenceTLV returns the reference's TLV parts and declares the profile.
func referenceTLV(im *Impl) TLVParts {
	im.Profiles = append(im.Profiles, "tlv")
	return TLVParts{
		MaxDepth: tlv.DefaultMaxDepth,
		Decode: func(frame tlv.Rope, maxDepth int) (*Tree, tlv.Trailer, error) {
			return DecodeTree(tlv.Decoder{MaxDepth: maxDepth}, frame)
		},
		Ingress: func(frame tlv.Rope, maxDepth int) (*tlv.Node, tlv.Trailer, error) {
			d := tlv.Decoder{MaxDepth: maxDepth}
			return d.DecodeFrame(frame)
		},
		Encode:       ReferenceEncode,
		Canonicalize: func(s string) ([]byte, error) { return tlv.CanonicalPath(s) },
		ValidatePath: tlv.PathSegments,
		Concat:       func(a, b *tlv.Node) (*tlv.Node, error) { return a.Concat(b) },
		Split:        func(n *tlv.Node, k int) (*tlv.Node, *tlv.Node, error) { return n.Split(k) },
		Insert:       func(n *tlv.Node, k int, c *tlv.Node) (*tlv.Node, error) { return n.Insert(k, c) },
		Serialize:    func(n *tlv.Node) []byte { return n.Bytes() },
		Hop: func(links []string, inbound int, fwd *tlv.Node) (tlv.HopResult, error) {
			r, err := tlv.NewRouter(links...)
			if err != nil {
				return tlv.HopResult{}, err
			}
			return r.Hop(fwd, inbound)
		},
		Store: func(fwd *tlv.Node) ([]byte, error) {
			f, err := tlv.DecodeFwd(fwd)
			if err != nil {
				return nil, err
			}
			return tlv.Egress{}.AppendTo(nil, f.Payload)
		},
		Egress:     func(n *tlv.Node, e tlv.Egress) ([]byte, error) { return e.AppendTo(nil, n) },
		PackPolicy: func(p tlv.DeliveryPolicy) (uint16, error) { return p.Pack() },
		ReadPolicy: func(n *tlv.Node) (tlv.DeliveryPolicy, error) {
			s, err := tlv.DecodeSubscriber(n)
			if err != nil {
				return tlv.DeliveryPolicy{}, err
			}
			return s.Policy()
		},
	}
}

// DecodeTree decodes frame with d, as the Decode part does.
func DecodeTree(d tlv.Decoder, frame tlv.Rope) (*Tree, tlv.Trailer, error) {
	n, tr, err := d.DecodeFrame(frame)
	if err != nil {
		return nil, tr, err
	}
	return TreeOf(n), tr, nil
}

// ReferenceEncode builds t with the reference's constructors (minimal
// headers, no trailer) and serializes it.
func ReferenceEncode(t *Tree) ([]byte, error) {
	n, err := NodeOf(t)
	if err != nil {
		return nil, err
	}
	return n.Bytes(), nil
}

// NodeOf builds the reference node an originator would for t: PL from t's
// opt, minimal headers, no trailer.
func NodeOf(t *Tree) (*tlv.Node, error) {
	if t == nil {
		return nil, errors.New("a missing tree")
	}
	if t.Type == uint8(tlv.TypeInvalid) {
		return nil, &tlv.DecodeError{Status: tlv.StatusMalformed, Reason: "type 0x00 is invalid"}
	}
	if tlv.Opt(t.Opt)&tlv.OptPL == 0 {
		return tlv.NewLeaf(tlv.Type(t.Type), t.Payload), nil
	}
	kids := make([]*tlv.Node, len(t.Children))
	for i, c := range t.Children {
		k, err := NodeOf(c)
		if err != nil {
			return nil, err
		}
		kids[i] = k
	}
	return tlv.NewStruct(tlv.Type(t.Type), kids...), nil
}

// TreeFromPB converts a conform.v1 node to a Tree.
func TreeFromPB(n *conformpb.TlvNode) *Tree {
	if n == nil {
		return nil
	}
	t := &Tree{Type: uint8(n.GetType()), Opt: uint8(n.GetOpt()), Payload: n.GetPayload(), Trailer: n.GetTrailer()}
	for _, c := range n.GetChildren() {
		t.Children = append(t.Children, TreeFromPB(c))
	}
	return t
}

// TreeToPB converts a Tree to conform.v1.
func TreeToPB(t *Tree) *conformpb.TlvNode {
	if t == nil {
		return nil
	}
	n := &conformpb.TlvNode{Type: uint32(t.Type), Opt: uint32(t.Opt), Payload: t.Payload, Trailer: t.Trailer}
	for _, c := range t.Children {
		n.Children = append(n.Children, TreeToPB(c))
	}
	return n
}

// RopeOf builds a rope with one link per segment of r.
func RopeOf(r *conformpb.TlvRope) tlv.Rope { return tlv.NewRope(r.GetSegments()...) }

// refusalOf turns an error into a TlvRefusal: the status the error carries,
// or tr::tlv::malformed for one that carries none.
func refusalOf(err error) *conformpb.TlvRefusal {
	r := &conformpb.TlvRefusal{Status: uint32(tlv.StatusMalformed), Reason: err.Error()}
	var de *tlv.DecodeError
	if errors.As(err, &de) {
		r.Offset = uint64(max(de.Offset, 0))
	}
	if s, ok := tlv.StatusOf(err); ok {
		r.Status = uint32(s)
	}
	return r
}

// egressOf converts a conform.v1 egress trailer, with its injected clock.
func egressOf(e *conformpb.TlvEgressTrailer) tlv.Egress {
	clock := time.Unix(0, int64(e.GetClockUnixNs()))
	return tlv.Egress{TSWidth: int(e.GetTsWidth()), CRC: tlv.CRC(e.GetCrc()), Clock: func() time.Time { return clock }}
}

// tlv answers one TLV op.
func (im *Impl) tlv(_ context.Context, op *conformpb.TlvOp) (*conformpb.TlvResult, error) {
	p := &im.TLV
	switch o := op.GetOp().(type) {
	case *conformpb.TlvOp_Decode:
		res := new(conformpb.TlvDecodeResult)
		for _, in := range o.Decode.GetInputs() {
			out := new(conformpb.TlvDecodeOutput)
			root, tr, err := p.Decode(RopeOf(in.GetFrame()), p.MaxDepth)
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				out.Root = TreeToPB(root)
				out.Trailer = &conformpb.TlvTrailer{TsWidth: uint32(tr.TSWidth), Timestamp: tr.Timestamp,
					Crc: conformpb.TlvCrc(tr.CRC), Check: tr.Check}
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Decode{Decode: res}}, nil

	case *conformpb.TlvOp_Encode:
		res := new(conformpb.TlvEncodeResult)
		for _, in := range o.Encode.GetInputs() {
			out := new(conformpb.TlvEncodeOutput)
			b, err := p.Encode(TreeFromPB(in.GetTree()))
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				out.Frame = b
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Encode{Encode: res}}, nil

	case *conformpb.TlvOp_Canonicalize:
		res := new(conformpb.TlvCanonicalizeResult)
		for _, s := range o.Canonicalize.GetPaths() {
			out := new(conformpb.TlvCanonicalOutput)
			b, err := p.Canonicalize(string(s))
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				out.Payload = b
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Canonicalize{Canonicalize: res}}, nil

	case *conformpb.TlvOp_ValidatePath:
		res := new(conformpb.TlvValidatePathResult)
		for _, in := range o.ValidatePath.GetPayloads() {
			out := new(conformpb.TlvPathVerdict)
			segs, err := p.ValidatePath(RopeOf(in))
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				for _, s := range segs {
					out.Segments = append(out.Segments, []byte(s))
				}
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_ValidatePath{ValidatePath: res}}, nil

	case *conformpb.TlvOp_Edit:
		res := new(conformpb.TlvEditResult)
		for _, in := range o.Edit.GetInputs() {
			res.Outputs = append(res.Outputs, im.tlvEdit(in))
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Edit{Edit: res}}, nil

	case *conformpb.TlvOp_Hop:
		res := new(conformpb.TlvHopResult)
		for _, in := range o.Hop.GetInputs() {
			res.Outputs = append(res.Outputs, im.tlvHop(in))
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Hop{Hop: res}}, nil

	case *conformpb.TlvOp_PackPolicy:
		res := new(conformpb.TlvPackPolicyResult)
		for _, in := range o.PackPolicy.GetPolicies() {
			out := new(conformpb.TlvPackedPolicy)
			if in.GetReliability() > 0xFF || in.GetPriority() > 0xFF || in.GetDeliveryClass() > 0xFF {
				out.Refused = true
			} else if v, err := p.PackPolicy(tlv.DeliveryPolicy{Reliability: uint8(in.GetReliability()),
				Priority: uint8(in.GetPriority()), DurabilityRequest: in.GetDurabilityRequest(),
				DeliveryClass: uint8(in.GetDeliveryClass())}); err != nil {
				out.Refused = true
			} else {
				out.Packed = uint32(v)
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_PackPolicy{PackPolicy: res}}, nil

	case *conformpb.TlvOp_ReadPolicy:
		res := new(conformpb.TlvReadPolicyResult)
		for _, in := range o.ReadPolicy.GetSubscribers() {
			out := new(conformpb.TlvReadPolicyOutput)
			n, _, err := p.Ingress(RopeOf(in), p.MaxDepth)
			var pol tlv.DeliveryPolicy
			if err == nil {
				pol, err = p.ReadPolicy(n)
			}
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				out.Policy = &conformpb.TlvPolicy{Reliability: uint32(pol.Reliability), Priority: uint32(pol.Priority),
					DurabilityRequest: pol.DurabilityRequest, DeliveryClass: uint32(pol.DeliveryClass)}
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_ReadPolicy{ReadPolicy: res}}, nil

	case *conformpb.TlvOp_Egress:
		res := new(conformpb.TlvEgressResult)
		for _, in := range o.Egress.GetInputs() {
			out := new(conformpb.TlvEgressOutput)
			n, _, err := p.Ingress(RopeOf(in.GetFrame()), p.MaxDepth)
			var b []byte
			if err == nil {
				b, err = p.Egress(n, egressOf(in.GetTrailer()))
			}
			if err != nil {
				out.Refusal = refusalOf(err)
			} else {
				out.Frame = b
			}
			res.Outputs = append(res.Outputs, out)
		}
		return &conformpb.TlvResult{Result: &conformpb.TlvResult_Egress{Egress: res}}, nil
	}
	return nil, &UnimplementedError{Detail: fmt.Sprintf("TLV op %T is not implemented by %s", op.GetOp(), im.Name)}
}

// tlvEdit runs one edit input: decode the starting TLVs, apply the edits in
// order, serialize every TLV.
func (im *Impl) tlvEdit(in *conformpb.TlvEditInput) *conformpb.TlvEditOutput {
	p := &im.TLV
	refuse := func(edit int, err error) *conformpb.TlvEditOutput {
		return &conformpb.TlvEditOutput{Refusal: refusalOf(err), RefusedEdit: int32(edit)}
	}
	var list []*tlv.Node
	for _, r := range in.GetTlvs() {
		n, _, err := p.Ingress(RopeOf(r), p.MaxDepth)
		if err != nil {
			return refuse(-1, err)
		}
		list = append(list, n)
	}
	get := func(i uint32) (*tlv.Node, error) {
		if int(i) >= len(list) {
			return nil, fmt.Errorf("no TLV %d in a list of %d", i, len(list))
		}
		return list[i], nil
	}
	for k, e := range in.GetEdits() {
		var err error
		switch s := e.GetEdit().(type) {
		case *conformpb.TlvEditStep_Concat:
			var a, b, c *tlv.Node
			if a, err = get(s.Concat.GetFirst()); err == nil {
				if b, err = get(s.Concat.GetSecond()); err == nil {
					if c, err = p.Concat(a, b); err == nil {
						list = append(list, c)
					}
				}
			}
		case *conformpb.TlvEditStep_Split:
			var a, h, t *tlv.Node
			if a, err = get(s.Split.GetContainer()); err == nil {
				if h, t, err = p.Split(a, int(s.Split.GetAt())); err == nil {
					list = append(list, h, t)
				}
			}
		case *conformpb.TlvEditStep_Insert:
			var a, c, r *tlv.Node
			if a, err = get(s.Insert.GetContainer()); err == nil {
				if c, err = get(s.Insert.GetChild()); err == nil {
					if r, err = p.Insert(a, int(s.Insert.GetAt()), c); err == nil {
						list = append(list, r)
					}
				}
			}
		default:
			err = fmt.Errorf("edit %d names no edit", k)
		}
		if err != nil {
			return refuse(k, err)
		}
	}
	out := new(conformpb.TlvEditOutput)
	for _, n := range list {
		out.Tlvs = append(out.Tlvs, p.Serialize(n))
	}
	return out
}

// tlvHop runs one hop input: ingress, the hop, then egress of the forwarded
// frame or, at the terminus, the bare payload at rest.
func (im *Impl) tlvHop(in *conformpb.TlvHopInput) *conformpb.TlvHopOutput {
	p := &im.TLV
	out := new(conformpb.TlvHopOutput)
	fwd, arrived, err := p.Ingress(RopeOf(in.GetFrame()), p.MaxDepth)
	if err != nil {
		out.Refusal = refusalOf(err)
		return out
	}
	hr, err := p.Hop(in.GetLinks(), int(in.GetInbound()), fwd)
	if err != nil {
		out.Refusal = refusalOf(err)
		return out
	}
	if hr.Terminus {
		stored, err := p.Store(fwd)
		if err != nil {
			out.Refusal = refusalOf(err)
			return out
		}
		out.Terminus, out.Stored = true, stored
		return out
	}
	var b []byte
	if p.Forward != nil {
		b, err = p.Forward(hr.Frame, arrived, egressOf(in.GetEgress()))
	} else {
		b, err = p.Egress(hr.Frame, egressOf(in.GetEgress()))
	}
	if err != nil {
		out.Refusal = refusalOf(err)
		return out
	}
	out.Link, out.Frame = uint32(hr.Link), b
	return out
}
