package tlv

import (
	"encoding/binary"
	"fmt"
)

// A DeliveryPolicy is the packed 16-bit delivery policy a SUBSCRIBER may carry
// in its SETTINGS under the key "delivery_policy" (graph model §Subscriber
// delivery policy). The zero value is the default policy, and is what an absent
// setting means.
type DeliveryPolicy struct {
	Reliability       uint8 // bits 0–1: 0 best-effort, 1 reliable, 2–3 reserved
	Priority          uint8 // bits 2–4: 0–7, 0 the default
	DurabilityRequest bool  // bit 5: deliver the latched last value on join
	DeliveryClass     uint8 // bits 6–7: 0 conflate, 1 immediate, 2 batch, 3 stream
}

// Pack returns the policy's 16-bit form, bits 8–15 zero as writers must leave
// them. A field too wide for its bits is an error rather than silently cut.
func (p DeliveryPolicy) Pack() (uint16, error) {
	if p.Reliability > policyReliabilityMask || p.Priority > policyPriorityMask || p.DeliveryClass > policyClassMask {
		return 0, fmt.Errorf("tlv: delivery policy %+v does not fit its bits", p)
	}
	v := uint16(p.Reliability)<<policyReliabilityShift |
		uint16(p.Priority)<<policyPriorityShift |
		uint16(p.DeliveryClass)<<policyClassShift
	if p.DurabilityRequest {
		v |= policyDurabilityBit
	}
	return v, nil
}

// UnpackDeliveryPolicy returns the policy packed in v. Bits 8–15 are reserved:
// they are ignored, never a reason to refuse.
func UnpackDeliveryPolicy(v uint16) DeliveryPolicy {
	return DeliveryPolicy{
		Reliability:       uint8(v>>policyReliabilityShift) & policyReliabilityMask,
		Priority:          uint8(v>>policyPriorityShift) & policyPriorityMask,
		DurabilityRequest: v&policyDurabilityBit != 0,
		DeliveryClass:     uint8(v>>policyClassShift) & policyClassMask,
	}
}

// Setting returns the delivery_policy pair for a SUBSCRIBER's SETTINGS: NAME
// "delivery_policy", then a VALUE holding the packed policy as a u16 LE.
func (p DeliveryPolicy) Setting() (Setting, error) {
	v, err := p.Pack()
	if err != nil {
		return Setting{}, err
	}
	return Setting{Key: KeyDeliveryPolicy, Value: NewLeaf(TypeValue, binary.LittleEndian.AppendUint16(nil, v))}, nil
}
