package tlv

import (
	"encoding/binary"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
)

// unpacked is the policy a 16-bit value packs, by the graph model's table:
// bits 0-1 reliability, 2-4 priority, 5 durability_request, 6-7
// delivery_class, 8-15 reserved.
func unpacked(v uint16) *conformpb.TlvPolicy {
	return &conformpb.TlvPolicy{Reliability: uint32(v & 0x3), Priority: uint32(v>>2) & 0x7, DurabilityRequest: v&0x20 != 0, DeliveryClass: uint32(v>>6) & 0x3}
}

// subscriberWith returns a SUBSCRIBER{PATH /alpha, SETTINGS{…}} frame whose
// settings hold the given pairs (NAME key, VALUE value), or no SETTINGS when
// settings is nil.
func subscriberWith(settings [][2][]byte) []byte {
	alpha := []byte{0x06, 0x00, 0x06, 0x00, 0x05, 'a', 'l', 'p', 'h', 'a'}
	kids := alpha
	if settings != nil {
		var body []byte
		for _, kv := range settings {
			body = append(body, header(0x02, 0, len(kv[0]))...)
			body = append(body, kv[0]...)
			body = append(body, header(0x01, 0, len(kv[1]))...)
			body = append(body, kv[1]...)
		}
		kids = append(append(kids, header(0x0b, 0x01, len(body))...), body...)
	}
	return append(header(0x04, 0x01, len(kids)), kids...)
}

func policySubscriber(v uint16) []byte {
	return subscriberWith([][2][]byte{{[]byte("delivery_policy"), binary.LittleEndian.AppendUint16(nil, v)}})
}

// checkReadPolicy asks the SUT to read each SUBSCRIBER and judges the policy.
func checkReadPolicy(t *cases.T, what string, subs [][]byte, wants []*conformpb.TlvPolicy) {
	var ropes []*conformpb.TlvRope
	for _, b := range subs {
		ropes = append(ropes, ropeOf(b))
	}
	f := newFailures(t, what)
	for i, out := range readPolicy(t, ropes) {
		// The all-zero policy may be answered as an empty or an absent
		// TlvPolicy alike (tlv.proto: all zero when absent).
		judged := out
		if out.GetPolicy() == nil && out.GetRefusal() == nil {
			judged = &conformpb.TlvReadPolicyOutput{Policy: &conformpb.TlvPolicy{}}
		}
		f.answerAs(hexOf(subs[i]), nil, &conformpb.TlvReadPolicyOutput{Policy: wants[i]}, judged, out)
	}
	f.done()
}

// policies is graph model §Subscriber delivery policy: one packed 16-bit
// value under the key delivery_policy in a SUBSCRIBER's SETTINGS; bits 8-15
// are written 0 and ignored on read, never rejected; absent means all zero.
// The record around it is reconstructed§tlv-records' (SUBSCRIBER, SETTINGS
// pairs, the delivery_policy pair).
func policies(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "tlv/subscriber-delivery-policy/pack-fields-at-their-bits",
				Title: "Packing places reliability at bits 0-1, priority at 2-4, durability_request at 5, delivery_class at 6-7, and writes bits 8-15 as 0",
				Spec:  "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{
					"libtracer-graph-model§subscriber-delivery-policy#2",
					"libtracer-graph-model§subscriber-delivery-policy#3",
					"libtracer-graph-model§subscriber-delivery-policy#4",
					"libtracer-graph-model§subscriber-delivery-policy#5",
					"libtracer-graph-model§subscriber-delivery-policy#6",
					"reconstructed§delivery-policy#1",
				},
				Run: func(t *cases.T) {
					var ins []*conformpb.TlvPolicy
					var wants []uint32
					for r := range uint32(4) {
						for p := range uint32(8) {
							for _, d := range []bool{false, true} {
								for c := range uint32(4) {
									if (r+p+c)%3 != 0 && !(r == 3 && p == 7 && d && c == 3) {
										continue // a third of the space, and every field at its maximum
									}
									ins = append(ins, &conformpb.TlvPolicy{Reliability: r, Priority: p, DurabilityRequest: d, DeliveryClass: c})
									w := r | p<<2 | c<<6
									if d {
										w |= 1 << 5
									}
									wants = append(wants, w)
								}
							}
						}
					}
					f := newFailures(t, "packing a delivery policy")
					for i, out := range packPolicy(t, ins) {
						f.answer(meaning.Render(ins[i]), ins[i], &conformpb.TlvPackedPolicy{Packed: wants[i]}, out)
					}
					f.done()
				},
			}
		}),
		k.Must(func() cases.Case {
			printed := vs.Get("nested-depth-3")
			return cases.Case{
				ID: "tlv/subscriber-delivery-policy/read-fields-at-their-bits",
				// Whether a SUBSCRIBER carries a policy is the sender's MAY
				// (subscriber-delivery-policy#1); a reader given one MUST read
				// each field at its bits, which is what this case judges.
				Title: "A SUBSCRIBER's delivery_policy VALUE is read as a u16 little-endian with each field at its bits",
				Spec:  "libtracer-graph-model §subscriber-delivery-policy, §the-six-layer-model",
				Requirements: []string{
					"libtracer-graph-model§subscriber-delivery-policy#2",
					"libtracer-graph-model§subscriber-delivery-policy#3",
					"libtracer-graph-model§subscriber-delivery-policy#4",
					"libtracer-graph-model§subscriber-delivery-policy#5",
					"libtracer-graph-model§the-six-layer-model#1",
					"reconstructed§delivery-policy#1",
					"reconstructed§tlv-records#1",
					"reconstructed§tlv-records#2",
					"reconstructed§tlv-records#4",
					"reconstructed§tlv-type-codes#1",
				},
				Run: func(t *cases.T) {
					subs := [][]byte{printed.Input}
					wants := []*conformpb.TlvPolicy{unpacked(0x0025)}
					for _, v := range []uint16{0x0001, 0x0002, 0x0004, 0x0010, 0x001C, 0x0020, 0x0040, 0x0080, 0x00C0, 0x00FF, 0x0000} {
						subs = append(subs, policySubscriber(v))
						wants = append(wants, unpacked(v))
					}
					checkReadPolicy(t, "reading a SUBSCRIBER's delivery policy", subs, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "tlv/subscriber-delivery-policy/reserved-bits-ignored-on-read",
				Title: "A delivery policy with any of bits 8-15 set is read by its low bits, never rejected",
				Spec:  "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{
					"libtracer-graph-model§subscriber-delivery-policy#7",
					"reconstructed§delivery-policy#1",
				},
				Run: func(t *cases.T) {
					var subs [][]byte
					var wants []*conformpb.TlvPolicy
					for _, v := range []uint16{0x0100, 0x8000, 0xFF25, 0xA5C3, 0xFFFF} {
						subs = append(subs, policySubscriber(v))
						wants = append(wants, unpacked(v))
					}
					checkReadPolicy(t, "reading a policy with reserved bits set", subs, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			bare := vs.Get("nested-depth-2")
			return cases.Case{
				ID:    "tlv/subscriber-delivery-policy/absent-policy-is-all-zero",
				Title: "A SUBSCRIBER with no SETTINGS, or with SETTINGS but no delivery_policy, has the all-zero policy",
				Spec:  "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{
					"libtracer-graph-model§subscriber-delivery-policy#8",
					"reconstructed§delivery-policy#1",
					"reconstructed§tlv-records#4",
				},
				Run: func(t *cases.T) {
					subs := [][]byte{
						bare.Input,
						subscriberWith([][2][]byte{}),
						subscriberWith([][2][]byte{{[]byte("delivery_compact"), {0x01}}}),
					}
					checkReadPolicy(t, "reading a SUBSCRIBER without a delivery policy", subs, []*conformpb.TlvPolicy{{}, {}, {}})
				},
			}
		}),
	}
}
