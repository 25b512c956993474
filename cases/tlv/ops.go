package tlv

import (
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// Batches are bounded by count and by size, so that a request and its answer
// (which echoes a decoded tree's payloads) stay far below conform.v1's 16 MiB
// frame ceiling even for the 64 KiB LL vectors.
const (
	maxBatchInputs = 256
	maxBatchBytes  = 2 << 20
)

// batched splits inputs into requests, sends each with send and checks that
// each answer holds one output per input.
func batched[I proto.Message, O any](t *cases.T, op string, inputs []I, send func([]I) ([]O, bool)) []O {
	var outs []O
	for start := 0; start < len(inputs); {
		end, size := start, 0
		for end < len(inputs) && end-start < maxBatchInputs && (end == start || size+proto.Size(inputs[end]) <= maxBatchBytes) {
			size += proto.Size(inputs[end])
			end++
		}
		b := inputs[start:end]
		o, ok := send(b)
		if !ok {
			t.Protocolf("tlv %s answered with the result of another op", op)
		}
		if len(o) != len(b) {
			t.Protocolf("tlv %s: %d inputs, %d outputs", op, len(b), len(o))
		}
		outs = append(outs, o...)
		start = end
	}
	return outs
}

// do sends one tlv op and returns its result.
func do(t *cases.T, op *conformpb.TlvOp) *conformpb.TlvResult {
	return t.Do(&conformpb.Request{Op: &conformpb.Request_Tlv{Tlv: op}}).GetTlv()
}

// decode asks the SUT to decode each rope as one frame at ingress.
func decode(t *cases.T, frames []*conformpb.TlvRope) []*conformpb.TlvDecodeOutput {
	var ins []*conformpb.TlvDecodeInput
	for _, f := range frames {
		ins = append(ins, &conformpb.TlvDecodeInput{Frame: f})
	}
	return batched(t, "decode", ins, func(b []*conformpb.TlvDecodeInput) ([]*conformpb.TlvDecodeOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Decode{Decode: &conformpb.TlvDecode{Inputs: b}}}).GetDecode()
		return r.GetOutputs(), r != nil
	})
}

// encode asks the SUT to serialize each tree as its originator.
func encode(t *cases.T, trees []*conformpb.TlvNode) []*conformpb.TlvEncodeOutput {
	var ins []*conformpb.TlvEncodeInput
	for _, n := range trees {
		ins = append(ins, &conformpb.TlvEncodeInput{Tree: n})
	}
	return batched(t, "encode", ins, func(b []*conformpb.TlvEncodeInput) ([]*conformpb.TlvEncodeOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Encode{Encode: &conformpb.TlvEncode{Inputs: b}}}).GetEncode()
		return r.GetOutputs(), r != nil
	})
}

// canonicalize asks the SUT for the canonical PATH payload of each string.
// The strings travel one per request message of their own kind, so they are
// batched by count alone.
func canonicalize(t *cases.T, paths [][]byte) []*conformpb.TlvCanonicalOutput {
	var outs []*conformpb.TlvCanonicalOutput
	for start := 0; start < len(paths); start += maxBatchInputs {
		b := paths[start:min(start+maxBatchInputs, len(paths))]
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Canonicalize{Canonicalize: &conformpb.TlvCanonicalize{Paths: b}}}).GetCanonicalize()
		if r == nil {
			t.Protocolf("tlv canonicalize answered with the result of another op")
		}
		if len(r.GetOutputs()) != len(b) {
			t.Protocolf("tlv canonicalize: %d inputs, %d outputs", len(b), len(r.GetOutputs()))
		}
		outs = append(outs, r.GetOutputs()...)
	}
	return outs
}

// validatePath asks the SUT to check each received PATH payload.
func validatePath(t *cases.T, payloads []*conformpb.TlvRope) []*conformpb.TlvPathVerdict {
	return batched(t, "validate_path", payloads, func(b []*conformpb.TlvRope) ([]*conformpb.TlvPathVerdict, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_ValidatePath{ValidatePath: &conformpb.TlvValidatePath{Payloads: b}}}).GetValidatePath()
		return r.GetOutputs(), r != nil
	})
}

// edit asks the SUT to apply each input's edits and serialize the results.
func edit(t *cases.T, ins []*conformpb.TlvEditInput) []*conformpb.TlvEditOutput {
	return batched(t, "edit", ins, func(b []*conformpb.TlvEditInput) ([]*conformpb.TlvEditOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Edit{Edit: &conformpb.TlvEdit{Inputs: b}}}).GetEdit()
		return r.GetOutputs(), r != nil
	})
}

// hop asks the SUT to perform one forward hop per input.
func hop(t *cases.T, ins []*conformpb.TlvHopInput) []*conformpb.TlvHopOutput {
	return batched(t, "hop", ins, func(b []*conformpb.TlvHopInput) ([]*conformpb.TlvHopOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Hop{Hop: &conformpb.TlvHop{Inputs: b}}}).GetHop()
		return r.GetOutputs(), r != nil
	})
}

// packPolicy asks the SUT to pack each policy.
func packPolicy(t *cases.T, ps []*conformpb.TlvPolicy) []*conformpb.TlvPackedPolicy {
	return batched(t, "pack_policy", ps, func(b []*conformpb.TlvPolicy) ([]*conformpb.TlvPackedPolicy, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_PackPolicy{PackPolicy: &conformpb.TlvPackPolicy{Policies: b}}}).GetPackPolicy()
		return r.GetOutputs(), r != nil
	})
}

// readPolicy asks the SUT to read each SUBSCRIBER's delivery policy.
func readPolicy(t *cases.T, subs []*conformpb.TlvRope) []*conformpb.TlvReadPolicyOutput {
	return batched(t, "read_policy", subs, func(b []*conformpb.TlvRope) ([]*conformpb.TlvReadPolicyOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_ReadPolicy{ReadPolicy: &conformpb.TlvReadPolicy{Subscribers: b}}}).GetReadPolicy()
		return r.GetOutputs(), r != nil
	})
}

// egress asks the SUT to send each frame with the trailer given.
func egress(t *cases.T, ins []*conformpb.TlvEgressInput) []*conformpb.TlvEgressOutput {
	return batched(t, "egress", ins, func(b []*conformpb.TlvEgressInput) ([]*conformpb.TlvEgressOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Egress{Egress: &conformpb.TlvEgress{Inputs: b}}}).GetEgress()
		return r.GetOutputs(), r != nil
	})
}
