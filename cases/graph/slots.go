package graph

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
)

// slots are the :subscribers slot vector's finer rules: what a record holds
// when it is read back, where an append lands, what a slot read past the
// end and a malformed record answer (§The payload-discriminating
// :subscribers[N] write; §Subscriber delivery policy).
func slots(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subscriber-delivery-policy/policy-read-back-as-written",
				Title:        "reliability and priority are carried and read back: :subscribers[N] serves the SUBSCRIBER with its delivery policy exactly as written, reserved bits included",
				Spec:         "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{"libtracer-graph-model§subscriber-delivery-policy#10", "libtracer-graph-model§subscriber-delivery-policy#7", "reconstructed§tlv-lists#2", "reconstructed§tlv-records#2"},
				Run: func(t *cases.T) {
					reliable := subscriberPolicy("/obs", 0x000d) // reliable, priority 3
					reserved := subscriberPolicy("/other", 0x4d0d)
					sc := newScript()
					sc.register("/v")
					sc.subscribeWith("", "/v", reliable)
					sc.subscribeWith("", "/v", reserved)
					r0 := sc.read("", "/v:subscribers[0]")
					r1 := sc.read("", "/v:subscribers[1]")
					ls := sc.read("", "/v:subscribers[]")
					r := run1(t, sc)
					r.value(r0, reliable, "the read of slot 0")
					r.value(r1, reserved, "the read of slot 1")
					r.entries(ls, "the list", reliable, reserved)
				},
			}
		}),
		k.May(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/an-append-reuses-the-lowest-empty-slot",
				Title:        "where an append lands once a slot was cleared (the new record may land in a different slot; the reference reuses the lowest empty slot)",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§the-payload-discriminating-subscribers-write#10", "reconstructed§graph-choices#6"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/a")
					sc.subscribe("", "/v", "/b")
					sc.subscribe("", "/v", "/c")
					sc.write("", "/v:subscribers[1]", emptyStatus())
					sc.write("", "/v:subscribers[0]", emptyStatus())
					sc.subscribe("", "/v", "/new")
					var reads []int
					for n := range 4 {
						reads = append(reads, sc.read("", fmt.Sprintf("/v:subscribers[%d]", n)))
					}
					r := run1(t, sc)
					var seen []string
					landed := -1
					for n, i := range reads {
						rep := r.reply(i)
						if rep.GetStatus() != stOK {
							seen = append(seen, fmt.Sprintf("[%d] %s", n, statusText(rep.GetStatus())))
							continue
						}
						seen = append(seen, fmt.Sprintf("[%d] %s", n, render(rep.GetValue())))
						if string(rep.GetValue()) == string(subscriber("/new")) {
							landed = n
						}
					}
					switch landed {
					case 0:
						t.Note("the append landed in slot 0, the lowest empty slot, as the reference's: %s", strings.Join(seen, "; "))
					default:
						t.Note("the append landed in slot %d, not in the lowest empty slot 0: %s", landed, strings.Join(seen, "; "))
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "graph/the-payload-discriminating-subscribers-write/a-read-past-the-last-slot",
				Title: "what a read of :subscribers[N] answers for an N no slot answers to (the document gives the write's answer, INVALID_PATH, not the read's; the reference answers the same)",
				Spec:  "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/a")
					rd := sc.read("", "/v:subscribers[1]")
					rd2 := sc.read("", "/v:subscribers[70000]")
					r := run1(t, sc)
					t.Note("a read of slot 1 of 1 answered %s %s; of slot 70000, %s %s", r.statusOf(rd), show(r.reply(rd).GetValue()), r.statusOf(rd2), show(r.reply(rd2).GetValue()))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "graph/the-payload-discriminating-subscribers-write/a-slot-index-with-a-leading-zero",
				Title: "what :subscribers[01] names (N is decimal; whether a leading zero spells slot 1 is open; the reference answers tr::path::invalid)",
				Spec:  "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/a")
					sc.subscribe("", "/v", "/b")
					rd := sc.read("", "/v:subscribers[01]")
					w := sc.write("", "/v:subscribers[01]", emptyStatus())
					after := sc.read("", "/v:subscribers[1]")
					r := run1(t, sc)
					t.Note("read :subscribers[01] answered %s %s; a clear of it %s; slot 1 then reads %s %s",
						r.statusOf(rd), show(r.reply(rd).GetValue()), r.statusOf(w), r.statusOf(after), show(r.reply(after).GetValue()))
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/a-malformed-subscriber-installs-nothing",
				Title:        "a SUBSCRIBER that does not follow its layout — no PATH target, an invalid PATH payload, a delivery policy that is not 16 bits, two SETTINGS, a leaf — is refused, appended or written to a slot, and installs nothing",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write; §subscriber-delivery-policy",
				Requirements: []string{"reconstructed§tlv-path#4", "reconstructed§tlv-records#2", "reconstructed§tlv-records#4"},
				Run: func(t *cases.T) {
					policy := func(b ...byte) []byte {
						return node(tSettings, name("delivery_policy"), leaf(tValue, b))
					}
					bad := []struct {
						what string
						rec  []byte
					}{
						{"an empty SUBSCRIBER", node(tSubscriber)},
						{"a SUBSCRIBER whose first child is no PATH", node(tSubscriber, value("/obs"))},
						{"a PATH payload with a zero-length record", node(tSubscriber, leaf(tPath, []byte{0x00, 0x03, 'o', 'b', 's'}))},
						{"a PATH payload whose record runs past its end", node(tSubscriber, leaf(tPath, []byte{0x05, 'o', 'b'}))},
						{"a PATH record holding \"/\"", node(tSubscriber, leaf(tPath, []byte{0x03, 'a', '/', 'b'}))},
						{"a delivery policy of one byte", node(tSubscriber, pathTLV("/obs"), policy(0x01))},
						{"a delivery policy of three bytes", node(tSubscriber, pathTLV("/obs"), policy(0x01, 0x00, 0x00))},
						{"two SETTINGS", node(tSubscriber, pathTLV("/obs"), node(tSettings), node(tSettings))},
						{"a SUBSCRIBER that is a leaf", leaf(tSubscriber, pathTLV("/obs"))},
					}
					type probe struct{ appended, replaced, list, slot, delivered int }
					sc := newScript()
					sc.register("/v")
					var probes []probe
					for i, b := range bad {
						p := fmt.Sprintf("/v%d", i)
						sc.register(p)
						sc.subscribe("", p, "/keep")
						var pr probe
						pr.appended = sc.write("", p+":subscribers[]", b.rec)
						pr.replaced = sc.write("", p+":subscribers[0]", b.rec)
						pr.list = sc.read("", p+":subscribers[]")
						pr.slot = sc.read("", p+":subscribers[0]")
						pr.delivered = sc.write("", p, value("1"))
						probes = append(probes, pr)
					}
					r := run1(t, sc)
					var seen []string
					for i, pr := range probes {
						p, what := fmt.Sprintf("/v%d", i), bad[i].what
						r.refused(pr.appended, "the append of "+what)
						r.refused(pr.replaced, "the write of "+what+" to slot 0")
						r.entries(pr.list, "the list after "+what, subscriber("/keep"))
						r.value(pr.slot, subscriber("/keep"), "slot 0 after "+what)
						r.deliveries(pr.delivered, "a write after "+what, dl{p, "/keep", value("1")})
						seen = append(seen, fmt.Sprintf("%s: %s / %s", what, r.statusOf(pr.appended), r.statusOf(pr.replaced)))
					}
					t.Note("the appends and slot writes were refused with:\n%s", strings.Join(seen, "\n"))
				},
			}
		}),
	}
}
