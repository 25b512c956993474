package meaning

import (
	"errors"
	"fmt"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// Undefined inputs. The answer to an op's input is fixed by the documents
// (or by conform.v1's own words) only for the inputs conform.v1 describes;
// Defined says, for one input entry of an op (a ReadInput, a TlvHopInput, a
// GraphScript), whether it is one. A generator of inputs sends only defined
// ones; the declaration's conditions keep a comparison from judging the
// fields an undefined input leaves open, so a case or a seed that sends one
// on purpose (an INFO case) is still safe to compare.

// Defined returns nil when the documents fix the answer to in, an op's
// input entry, and otherwise an error saying what leaves it open.
func Defined(in proto.Message) error {
	switch x := in.(type) {
	case *conformpb.ReadInput:
		return blobs(x.GetChunks()...)
	case *conformpb.WriteInput:
		return blobs(x.GetPayload())
	case *conformpb.ConnectionsInput:
		for _, s := range x.GetSegments() {
			if err := blobs(s.GetBytes()); err != nil {
				return err
			}
		}
	case *conformpb.EncodeInput:
		if !EncodeJSONDefined(x.GetMessageType(), x.GetJson()) {
			return errors.New("the JSON repeats a key, or is JSON the ProtoJSON mapping of the type does not read")
		}
	case *conformpb.QueueInput:
		for i, st := range x.GetSteps() {
			if st.GetStep() == nil {
				return fmt.Errorf("step %d is neither a push nor a pop", i)
			}
		}
	case *conformpb.PublishInput:
		if !PublishScriptDefined(x) {
			return errors.New("a step names a handle its kind of step may not name (a publish on an adopted, closed or absent stream, say)")
		}
	case *conformpb.MatchInput:
		for i, ev := range x.GetEvents() {
			if ev.GetEvent() == nil {
				return fmt.Errorf("event %d is neither an announcement, a sample nor a list", i)
			}
		}
	case *conformpb.TlvEncodeInput:
		if !EncodeTreeDefined(x.GetTree()) {
			return errors.New("the tree holds a node of type 0x00, payload bytes under PL, or children without it")
		}
	case *conformpb.TlvEditInput:
		for i, e := range x.GetEdits() {
			if e.GetEdit() == nil {
				return fmt.Errorf("edit %d is no edit", i)
			}
		}
	case *conformpb.TlvHopInput:
		if !HopDefined(x) {
			return errors.New("a link is no mount run, or inbound names no link")
		}
	case *conformpb.DopplerCheckInput:
		if !CheckDefined(x) {
			return errors.New("the bytes given are not a prefix of the transport length holding its header (and its chunk block, when the header sets CHUNKED)")
		}
	case *conformpb.DopplerChunkInput:
		if !ChunkDefined(x) {
			return errors.New("the frame is not a whole number of elements of a known type, or max_payload leaves no room for one element in a chunk")
		}
	case *conformpb.DopplerEncodeInput:
		if !EncodeHeaderDefined(x) {
			return errors.New("the order or type is unknown, or num_samples elements do not fit 64 bits")
		}
	case *conformpb.DopplerSequenceInput:
		if !SequenceDefined(x) {
			return errors.New("a step is no PUB or PUSH of a known type with whole elements, a socket changes role or type, or a PUB frame cannot be cut")
		}
	case *conformpb.GraphScript:
		for i, st := range x.GetSteps() {
			if st.GetStep() == nil {
				return fmt.Errorf("step %d is no operation", i)
			}
		}
	}
	return nil
}

// blobs checks Blobs: a fill repeats its pattern, so one with bytes to fill
// and no pattern describes nothing, and a Blob is given literally or as a
// fill, not both.
func blobs(bs ...*conformpb.Blob) error {
	for _, b := range bs {
		f := b.GetFill()
		switch {
		case f == nil:
		case f.GetLength() > 0 && len(f.GetPattern()) == 0:
			return errors.New("a Blob fill of non-zero length has an empty pattern")
		case len(b.GetData()) > 0:
			return errors.New("a Blob is given both literally and as a fill")
		}
	}
	return nil
}
