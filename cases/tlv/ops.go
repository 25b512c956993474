package tlv

import (
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

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
	return cases.Batched(t, "tlv decode", ins, func(b []*conformpb.TlvDecodeInput) ([]*conformpb.TlvDecodeOutput, bool) {
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
	return cases.Batched(t, "tlv encode", ins, func(b []*conformpb.TlvEncodeInput) ([]*conformpb.TlvEncodeOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Encode{Encode: &conformpb.TlvEncode{Inputs: b}}}).GetEncode()
		return r.GetOutputs(), r != nil
	})
}

// canonicalize asks the SUT for the canonical PATH payload of each string.
// The strings travel one per request message of their own kind, so they are
// batched by count alone.
func canonicalize(t *cases.T, paths [][]byte) []*conformpb.TlvCanonicalOutput {
	var outs []*conformpb.TlvCanonicalOutput
	for start := 0; start < len(paths); start += cases.MaxBatchInputs {
		b := paths[start:min(start+cases.MaxBatchInputs, len(paths))]
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
	return cases.Batched(t, "tlv validate_path", payloads, func(b []*conformpb.TlvRope) ([]*conformpb.TlvPathVerdict, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_ValidatePath{ValidatePath: &conformpb.TlvValidatePath{Payloads: b}}}).GetValidatePath()
		return r.GetOutputs(), r != nil
	})
}

// edit asks the SUT to apply each input's edits and serialize the results.
func edit(t *cases.T, ins []*conformpb.TlvEditInput) []*conformpb.TlvEditOutput {
	return cases.Batched(t, "tlv edit", ins, func(b []*conformpb.TlvEditInput) ([]*conformpb.TlvEditOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Edit{Edit: &conformpb.TlvEdit{Inputs: b}}}).GetEdit()
		return r.GetOutputs(), r != nil
	})
}

// hop asks the SUT to perform one forward hop per input.
func hop(t *cases.T, ins []*conformpb.TlvHopInput) []*conformpb.TlvHopOutput {
	return cases.Batched(t, "tlv hop", ins, func(b []*conformpb.TlvHopInput) ([]*conformpb.TlvHopOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Hop{Hop: &conformpb.TlvHop{Inputs: b}}}).GetHop()
		return r.GetOutputs(), r != nil
	})
}

// packPolicy asks the SUT to pack each policy.
func packPolicy(t *cases.T, ps []*conformpb.TlvPolicy) []*conformpb.TlvPackedPolicy {
	return cases.Batched(t, "tlv pack_policy", ps, func(b []*conformpb.TlvPolicy) ([]*conformpb.TlvPackedPolicy, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_PackPolicy{PackPolicy: &conformpb.TlvPackPolicy{Policies: b}}}).GetPackPolicy()
		return r.GetOutputs(), r != nil
	})
}

// readPolicy asks the SUT to read each SUBSCRIBER's delivery policy.
func readPolicy(t *cases.T, subs []*conformpb.TlvRope) []*conformpb.TlvReadPolicyOutput {
	return cases.Batched(t, "tlv read_policy", subs, func(b []*conformpb.TlvRope) ([]*conformpb.TlvReadPolicyOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_ReadPolicy{ReadPolicy: &conformpb.TlvReadPolicy{Subscribers: b}}}).GetReadPolicy()
		return r.GetOutputs(), r != nil
	})
}

// egress asks the SUT to send each frame with the trailer given.
func egress(t *cases.T, ins []*conformpb.TlvEgressInput) []*conformpb.TlvEgressOutput {
	return cases.Batched(t, "tlv egress", ins, func(b []*conformpb.TlvEgressInput) ([]*conformpb.TlvEgressOutput, bool) {
		r := do(t, &conformpb.TlvOp{Op: &conformpb.TlvOp_Egress{Egress: &conformpb.TlvEgress{Inputs: b}}}).GetEgress()
		return r.GetOutputs(), r != nil
	})
}
