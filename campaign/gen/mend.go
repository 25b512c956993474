package gen

import (
	"encoding/json"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// mend rewrites the entries of m, a generated or mutated op input, that
// the documents do not define (meaning.Defined) into nearby ones they do:
// a campaign judges only what the documents fix, and an input outside them
// would be a wasted execution at best and a false finding at worst. What
// mend changes is what a generic mutation gets wrong most often: a Blob
// given both ways or filled from nothing, a publish on a stream that does
// not exist, a hop over a link that is no mount run, a doppler frame that is
// not whole elements, a TLV tree tlv.proto does not describe.
func mend(m protoreflect.Message) {
	switch op := m.Interface().(type) {
	case *conformpb.ReadFrames:
		for _, in := range op.Inputs {
			mendBlobs(in.Chunks...)
		}
	case *conformpb.Receive:
		for _, in := range op.Inputs {
			mendBlobs(in.Chunks...)
		}
	case *conformpb.WriteFrames:
		for _, in := range op.Inputs {
			mendBlobs(in.Payload)
		}
	case *conformpb.ReceiveConnections:
		for _, in := range op.Inputs {
			for _, s := range in.Segments {
				mendBlobs(s.Bytes)
			}
		}
	case *conformpb.Encode:
		for _, in := range op.Inputs {
			mendJSON(in)
		}
	case *conformpb.DriveQueue:
		for _, in := range op.Inputs {
			for _, st := range in.Steps {
				if st.Step == nil {
					st.Step = &conformpb.QueueStep_Pop{Pop: 1}
				}
			}
		}
	case *conformpb.Publish:
		for _, in := range op.Inputs {
			mendPublish(in)
		}
	case *conformpb.MatchAnnouncements:
		for _, in := range op.Inputs {
			for _, ev := range in.Events {
				if ev.Event == nil {
					ev.Event = &conformpb.MatchEvent_List{}
				}
			}
		}
	case *conformpb.TlvEncode:
		for _, in := range op.Inputs {
			if in.Tree == nil {
				in.Tree = &conformpb.TlvNode{Type: 1}
			}
			mendTree(in.Tree)
		}
	case *conformpb.TlvEdit:
		for _, in := range op.Inputs {
			for _, e := range in.Edits {
				if e.Edit == nil {
					e.Edit = &conformpb.TlvEditStep_Concat{Concat: &conformpb.TlvConcat{}}
				}
			}
		}
	case *conformpb.TlvHop:
		for _, in := range op.Inputs {
			mendHop(in)
		}
	case *conformpb.DopplerCheck:
		op.Order = mendOrder(op.Order)
		for _, in := range op.Inputs {
			if !meaning.CheckDefined(in) {
				in.TransportLength = nil
			}
		}
	case *conformpb.DopplerReassemble:
		op.Order = mendOrder(op.Order)
	case *conformpb.DopplerChunk:
		op.Order = mendOrder(op.Order)
		for _, in := range op.Inputs {
			in.Type = mendType(in.Type)
			in.Payload = wholeElements(in.Type, in.Payload)
			in.MaxPayload = roomFor(in.Type, in.Payload, in.MaxPayload)
		}
	case *conformpb.DopplerEncodeHeader:
		for _, in := range op.Inputs {
			in.Order, in.Type = mendOrder(in.Order), mendType(in.Type)
			if !meaning.EncodeHeaderDefined(in) {
				in.NumSamples %= 1 << 40
			}
		}
	case *conformpb.DopplerSequence:
		for _, in := range op.Inputs {
			mendSequence(in)
		}
	case *conformpb.GraphRun:
		for _, sc := range op.Scripts {
			steps := sc.Steps[:0]
			for _, st := range sc.Steps {
				if st.Step != nil {
					steps = append(steps, st)
				}
			}
			sc.Steps = steps
		}
	}
}

// mendBlobs keeps a Blob one thing: a fill (its data dropped), or its
// data; a fill of bytes from an empty pattern repeats a zero byte.
func mendBlobs(bs ...*conformpb.Blob) {
	for _, b := range bs {
		f := b.GetFill()
		if f == nil {
			continue
		}
		b.Data = nil
		if f.Length > 0 && len(f.Pattern) == 0 {
			f.Pattern = []byte{0}
		}
	}
}

// mendJSON replaces encode JSON whose meaning is open: one that repeats a
// key is read by encoding/json (the last value wins) and written again;
// JSON outside the type's mapping becomes text that is no JSON at all,
// which every encoder refuses.
func mendJSON(in *conformpb.EncodeInput) {
	if meaning.EncodeJSONDefined(in.MessageType, in.Json) {
		return
	}
	var v any
	if json.Unmarshal([]byte(in.Json), &v) == nil {
		if b, err := json.Marshal(v); err == nil && meaning.EncodeJSONDefined(in.MessageType, string(b)) {
			in.Json = string(b)
			return
		}
	}
	in.Json = "{" + in.Json
}

// mendPublish points every step at a stream it may name: a publish at a
// produced stream still open, a republish at an adopted one (with a sample
// to republish), a close at a stream still open; a step with no stream to
// name declares one instead.
func mendPublish(in *conformpb.PublishInput) {
	var produced, adopted []uint32
	handles := uint32(0)
	drop := func(list []uint32, h uint32) []uint32 {
		out := list[:0]
		for _, x := range list {
			if x != h {
				out = append(out, x)
			}
		}
		return out
	}
	for _, st := range in.Steps {
		switch x := st.Step.(type) {
		case *conformpb.PublishStep_Open:
			produced = append(produced, handles)
			handles++
		case *conformpb.PublishStep_Adopt:
			adopted = append(adopted, handles)
			handles++
		case *conformpb.PublishStep_Publish:
			if len(produced) == 0 {
				st.Step = &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: "s"}}
				produced = append(produced, handles)
				handles++
				continue
			}
			x.Publish.Stream = pickHandle(produced, x.Publish.Stream)
		case *conformpb.PublishStep_Republish:
			if len(adopted) == 0 {
				st.Step = &conformpb.PublishStep_Adopt{Adopt: &conformpb.AdoptStream{Name: "s"}}
				adopted = append(adopted, handles)
				handles++
				continue
			}
			x.Republish.Stream = pickHandle(adopted, x.Republish.Stream)
			if x.Republish.Sample == nil {
				x.Republish.Sample = &conformpb.Arrival{StreamRef: 1, Sequence: 1}
			}
		case *conformpb.PublishStep_Close:
			open := append(append([]uint32(nil), produced...), adopted...)
			if len(open) == 0 {
				st.Step = &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: "s"}}
				produced = append(produced, handles)
				handles++
				continue
			}
			x.Close = pickHandle(open, x.Close)
			produced, adopted = drop(produced, x.Close), drop(adopted, x.Close)
		default:
			st.Step = &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: "s"}}
			produced = append(produced, handles)
			handles++
		}
	}
}

// pickHandle keeps h when it is one of hs, else picks one of hs by h.
func pickHandle(hs []uint32, h uint32) uint32 {
	for _, x := range hs {
		if x == h {
			return h
		}
	}
	return hs[int(h)%len(hs)]
}

// mendTree makes a TLV tree one tlv.proto describes: a type code whose low
// byte is not 0x00, and a node's content the kind its PL bit says.
func mendTree(n *conformpb.TlvNode) {
	if byte(n.Type) == 0 {
		n.Type |= 1
	}
	if n.Opt&uint32(tlv.OptPL) != 0 {
		n.Payload = nil
	} else {
		n.Children = nil
	}
	for _, k := range n.Children {
		mendTree(k)
	}
}

// mountRuns are links a hop input may name.
var mountRuns = []string{"/net/eth/link", "/net/eth/link/peer", "/net/bus/n1/p2", "/net/tcp/l0"}

// mendHop names every link by a mount run and the inbound link by its
// index.
func mendHop(in *conformpb.TlvHopInput) {
	if len(in.Links) == 0 {
		in.Links = []string{mountRuns[0]}
	}
	for i, l := range in.Links {
		if !meaning.HopDefined(&conformpb.TlvHopInput{Links: []string{l}}) {
			in.Links[i] = mountRuns[i%len(mountRuns)]
		}
	}
	in.Inbound %= uint32(len(in.Links))
}

func mendOrder(o conformpb.DopplerByteOrder) conformpb.DopplerByteOrder {
	if o > conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN {
		return conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_LITTLE_ENDIAN
	}
	return o
}

func mendType(t conformpb.DopplerFrameType) conformpb.DopplerFrameType {
	if t == conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED || !doppler.Type(t).Valid() {
		return conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CI8
	}
	return t
}

// wholeElements cuts a payload to a whole number of the type's elements.
func wholeElements(t conformpb.DopplerFrameType, p []byte) []byte {
	elem := doppler.Type(t).ElemSize()
	return p[:len(p)-len(p)%elem]
}

// roomFor raises a max_payload that leaves no room for one element in a
// chunk, when the frame must be chunked.
func roomFor(t conformpb.DopplerFrameType, p []byte, maxPayload uint64) uint64 {
	need := uint64(doppler.HeaderSize + doppler.ChunkBlockSize + doppler.Type(t).ElemSize())
	if uint64(doppler.HeaderSize)+uint64(len(p)) > maxPayload && maxPayload < need {
		return need
	}
	return maxPayload
}

// mendSequence makes each step a PUB or PUSH of a known type with whole
// elements, each socket keeping the role and type it first had.
func mendSequence(in *conformpb.DopplerSequenceInput) {
	in.Order = mendOrder(in.Order)
	type sock struct {
		role conformpb.DopplerSendRole
		typ  conformpb.DopplerFrameType
	}
	socks := map[uint32]sock{}
	for _, st := range in.Steps {
		if st.Role != conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB && st.Role != conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUSH {
			st.Role = conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB
		}
		st.Type = mendType(st.Type)
		if s, ok := socks[st.Socket]; ok {
			st.Role, st.Type = s.role, s.typ
		}
		socks[st.Socket] = sock{st.Role, st.Type}
		st.Payload = wholeElements(st.Type, st.Payload)
		if st.Role == conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB {
			in.MaxPayload = roomFor(st.Type, st.Payload, in.MaxPayload)
		}
	}
}
