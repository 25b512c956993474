package streams

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// streamInfo builds a StreamInfo under name "gaze" from node "tracker" with
// stream_ref ref, changed by f.
func streamInfo(ref uint32, f func(*messagepb.StreamInfo)) *messagepb.StreamInfo {
	m := &messagepb.StreamInfo{Name: "gaze", Node: "tracker", StreamRef: ref}
	if f != nil {
		f(m)
	}
	return m
}

func marshal(m proto.Message) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(err) // only well-formed messages are built here
	}
	return b
}

func str(s string) *string { return &s }

// readRow is one announcement and how a consumer must read it.
type readRow struct {
	what string
	in   *messagepb.StreamInfo
	want *conformpb.AnnouncementRead
}

// read is one announcement's bytes, as the SUT is given them, and how a
// consumer must read them.
type read struct {
	what    string
	payload []byte
	input   string // the payload described for the evidence
	want    *conformpb.AnnouncementRead
}

// readBase is how the base announcement reads: name, node and reference.
func readBase(ref uint32, f func(*conformpb.AnnouncementRead)) *conformpb.AnnouncementRead {
	a := &conformpb.AnnouncementRead{Name: str("gaze"), Node: str("tracker"), StreamRef: ref}
	if f != nil {
		f(a)
	}
	return a
}

// checkReads asks the SUT to read each row's announcement, marshalled, and
// compares the read form with the row's.
func checkReads(t *cases.T, rows []readRow) {
	var rs []read
	for _, r := range rows {
		b := marshal(r.in)
		in, _ := protojson.Marshal(r.in)
		rs = append(rs, read{what: r.what, payload: b, input: string(in) + " = " + showHex(b), want: r.want})
	}
	checkReadBytes(t, rs)
}

// readVectors asks the SUT to read each vector's announcement, the bytes as
// the vector writes them, and compares the read form with the vector's.
func readVectors(t *cases.T, vs ...*corpus.StreamsVector) {
	var rs []read
	for _, v := range vs {
		want := new(conformpb.AnnouncementRead)
		if err := protojson.Unmarshal(v.ExpectRead, want); err != nil {
			t.Harnessf("vector %s: expect_read: %v", v.ID, err)
		}
		rs = append(rs, read{what: v.ID + ": " + v.Title, payload: v.Announcement, input: showHex(v.Announcement), want: want})
	}
	checkReadBytes(t, rs)
}

func checkReadBytes(t *cases.T, rs []read) {
	var payloads [][]byte
	for _, r := range rs {
		payloads = append(payloads, r.payload)
	}
	for i, out := range readAnnouncements(t, payloads) {
		in := &conformpb.ReadAnnouncementInput{StreamInfo: payloads[i]}
		want := &conformpb.ReadAnnouncementOutput{Announcement: rs[i].want}
		what := rs[i].what
		if out.Refused {
			what += ": the announcement was refused"
		}
		t.CheckAnswer(what, rs[i].input, in, want, out, meaning.MUST)
	}
}

func showHex(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// Events of a match script.
func announceEv(conn uint64, m *messagepb.StreamInfo) *conformpb.MatchEvent {
	return &conformpb.MatchEvent{Connection: conn, Event: &conformpb.MatchEvent_Announce{Announce: marshal(m)}}
}

func sampleEv(conn uint64, ref uint32) *conformpb.MatchEvent {
	return &conformpb.MatchEvent{Connection: conn, Event: &conformpb.MatchEvent_SampleRef{SampleRef: ref}}
}

func listEv(name string) *conformpb.MatchEvent {
	return &conformpb.MatchEvent{Event: &conformpb.MatchEvent_List{List: name}}
}

// label names an announcement as read by its node, reference and schema, the
// fields that tell two publishers under one name apart.
func label(a *conformpb.AnnouncementRead) string {
	if a == nil {
		return "nothing"
	}
	return fmt.Sprintf("%s/%s#%d[%s]", a.GetName(), a.GetNode(), a.GetStreamRef(), a.GetSchema().GetSchemaId())
}

// answerLabel renders one answer for comparison: the matched stream or
// "unknown" for a sample, the listed streams for a list.
func answerLabel(ev *conformpb.MatchEvent, a *conformpb.MatchAnswer) string {
	switch ev.Event.(type) {
	case *conformpb.MatchEvent_SampleRef:
		if a.SchemaUnknown {
			return "unknown"
		}
		return label(a.Matched)
	case *conformpb.MatchEvent_List:
		var ls []string
		for _, l := range a.Listed {
			ls = append(ls, label(l))
		}
		return "[" + strings.Join(ls, " ") + "]"
	}
	return "-"
}

func describeEvents(evs []*conformpb.MatchEvent) string {
	var parts []string
	for _, ev := range evs {
		switch e := ev.Event.(type) {
		case *conformpb.MatchEvent_Announce:
			m := new(messagepb.StreamInfo)
			_ = proto.Unmarshal(e.Announce, m)
			parts = append(parts, fmt.Sprintf("connection %d announces %s/%s#%d[%s]", ev.Connection, m.Name, m.Node, m.StreamRef, m.GetSchema().GetSchemaId()))
		case *conformpb.MatchEvent_SampleRef:
			parts = append(parts, fmt.Sprintf("connection %d delivers a sample of stream_ref %d", ev.Connection, e.SampleRef))
		case *conformpb.MatchEvent_List:
			parts = append(parts, fmt.Sprintf("list %q", e.List))
		}
	}
	return strings.Join(parts, "; ")
}

// checkMatch plays events to the SUT and compares each sample's and list's
// answer with want ("-" for an announcement).
func checkMatch(t *cases.T, what string, evs []*conformpb.MatchEvent, want []string) {
	out := matchAnnouncements(t, []*conformpb.MatchInput{{Events: evs}})[0]
	var got []string
	for i, a := range out.Answers {
		got = append(got, answerLabel(evs[i], a))
	}
	// The answers as labels: name/node#stream_ref[schema_id] of what was
	// matched or listed, "unknown" for schema_unknown, "-" for an
	// announcement's own answer.
	type labels struct {
		Answers []string `json:"answers"`
	}
	t.FailCompare(what, describeEvents(evs), labels{want}, labels{got})
}

func withSchema(id string) func(*messagepb.StreamInfo) {
	return func(m *messagepb.StreamInfo) { m.Schema = &messagepb.SchemaInfo{SchemaId: id} }
}

func onNode(node, schema string) func(*messagepb.StreamInfo) {
	return func(m *messagepb.StreamInfo) {
		m.Name, m.Node = "trial.events", node
		m.Schema = &messagepb.SchemaInfo{SchemaId: schema}
	}
}

// announcements is ranvier-streams §4.3 and §6: reading an announcement and
// matching it to samples.
func announcements(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			explicit := vecs.List("announcement-explicit-empties", "announcement-explicit-empty-pair")
			return cases.Case{
				ID:           "streams/6.6/empty-string-is-absent",
				Title:        "An empty string in an announcement is read as absent, not as an empty value, whether the wire omits it or writes it empty",
				Spec:         "ranvier-streams §6.6, §6.1",
				Requirements: []string{"ranvier-streams§6.6#1", "ranvier-streams§4.3#2"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"an empty node", streamInfo(3, func(m *messagepb.StreamInfo) { m.Node = "" }),
							readBase(3, func(a *conformpb.AnnouncementRead) { a.Node = nil })},
						{"an authorisation with an empty authority", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Authorisation = &messagepb.Authorisation{Reference: "IRB-2026-17", ValidFromUnixNs: 5}
						}), readBase(3, func(a *conformpb.AnnouncementRead) {
							a.Authorisation = &conformpb.ReadAuthorisation{Reference: str("IRB-2026-17"), ValidFromUnixNs: 5}
						})},
						{"an operator with a method and an empty name", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Operator = &messagepb.Identity{AssertedBy: messagepb.AssertionMethod(1)}
						}), readBase(3, func(a *conformpb.AnnouncementRead) { a.Operator = &conformpb.ReadOperator{AssertedBy: 1} })},
					})
					// A marshaller omits an empty string, so the rows above
					// never carry one on the wire; these vectors write each
					// as an explicit empty value (a tag and a zero length),
					// which a decoder with field presence would keep.
					readVectors(t, explicit...)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.3/empty-clock-domain-means-none",
				Title:        "An empty source_clock_domain is read as: this stream carries no source timestamps",
				Spec:         "ranvier-streams §4.3, §6.6",
				Requirements: []string{"ranvier-streams§4.3#2"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"no clock domain", streamInfo(3, nil), readBase(3, nil)},
						{"a named clock domain", streamInfo(3, func(m *messagepb.StreamInfo) { m.SourceClockDomain = "device.A1-0042" }),
							readBase(3, func(a *conformpb.AnnouncementRead) { a.SourceClockDomain = str("device.A1-0042") })},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.6/empty-schema-is-none",
				Title:        "A schema with neither an identity nor a descriptor is read as no schema",
				Spec:         "ranvier-streams §6.6",
				Requirements: []string{"ranvier-streams§6.6#2"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"an empty schema", streamInfo(3, func(m *messagepb.StreamInfo) { m.Schema = &messagepb.SchemaInfo{} }), readBase(3, nil)},
						{"a schema with an identity only", streamInfo(3, withSchema("ranvier.example.v1.PointerSample")),
							readBase(3, func(a *conformpb.AnnouncementRead) {
								a.Schema = &conformpb.ReadSchema{SchemaId: str("ranvier.example.v1.PointerSample")}
							})},
						{"a schema with a descriptor only", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Schema = &messagepb.SchemaInfo{Descriptor_: []byte{0x0a, 0x02, 0x08, 0x01}}
						}), readBase(3, func(a *conformpb.AnnouncementRead) {
							a.Schema = &conformpb.ReadSchema{Descriptor_: []byte{0x0a, 0x02, 0x08, 0x01}}
						})},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.6/host-and-boot-as-a-pair",
				Title:        "host_id and boot_id are read as a pair: both, or neither",
				Spec:         "ranvier-streams §6.6, §4.1",
				Requirements: []string{"ranvier-streams§6.6#3"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"a host without a boot", streamInfo(3, func(m *messagepb.StreamInfo) { m.HostId = "rig-7" }), readBase(3, nil)},
						{"a boot without a host", streamInfo(3, func(m *messagepb.StreamInfo) { m.BootId = "b1f0" }), readBase(3, nil)},
						{"both", streamInfo(3, func(m *messagepb.StreamInfo) { m.HostId, m.BootId = "rig-7", "b1f0" }),
							readBase(3, func(a *conformpb.AnnouncementRead) { a.Clock = &conformpb.HostClock{HostId: "rig-7", BootId: "b1f0"} })},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.6/unknown-origin-reads-unspecified",
				Title:        "An unrecognised origin is read as unspecified, and the announcement is still read",
				Spec:         "ranvier-streams §6.6",
				Requirements: []string{"ranvier-streams§6.1#6", "ranvier-streams§6.6#4", "ranvier-wire§4.4#20"},
				Run: func(t *cases.T) {
					rows := []readRow{{"a known origin", streamInfo(3, func(m *messagepb.StreamInfo) { m.Origin = messagepb.Origin(2) }),
						readBase(3, func(a *conformpb.AnnouncementRead) { a.Origin = 2 })}}
					for _, o := range []int32{4, 9, 1000} {
						rows = append(rows, readRow{fmt.Sprintf("origin %d, from a later contract", o),
							streamInfo(3, func(m *messagepb.StreamInfo) { m.Origin = messagepb.Origin(o) }), readBase(3, nil)})
					}
					checkReads(t, rows)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.6/unknown-assertion-reads-unspecified",
				Title:        "An unrecognised assertion method is read as unspecified, and the announcement is still read",
				Spec:         "ranvier-streams §6.6",
				Requirements: []string{"ranvier-streams§6.6#4"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"a known method", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Operator = &messagepb.Identity{Name: "ana", AssertedBy: messagepb.AssertionMethod(3)}
						}), readBase(3, func(a *conformpb.AnnouncementRead) {
							a.Operator = &conformpb.ReadOperator{Name: str("ana"), AssertedBy: 3}
						})},
						{"method 9, from a later contract", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Operator = &messagepb.Identity{Name: "ana", AssertedBy: messagepb.AssertionMethod(9)}
						}), readBase(3, func(a *conformpb.AnnouncementRead) { a.Operator = &conformpb.ReadOperator{Name: str("ana")} })},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.2/descriptor-carried-unparsed",
				Title:        "The descriptor bytes are carried to the reader exactly, never parsed (bytes that are no FileDescriptorSet included)",
				Spec:         "ranvier-streams §6.2",
				Requirements: []string{"ranvier-streams§6.2#2", "ranvier-wire§4.4#17"},
				Run: func(t *cases.T) {
					junk := []byte{0xff, 0x00, 0x13, 0x37, 0x80}
					checkReads(t, []readRow{{"a descriptor that does not parse", streamInfo(3, func(m *messagepb.StreamInfo) {
						m.Schema = &messagepb.SchemaInfo{SchemaId: "x.v1.A", Descriptor_: junk}
					}), readBase(3, func(a *conformpb.AnnouncementRead) {
						a.Schema = &conformpb.ReadSchema{SchemaId: str("x.v1.A"), Descriptor_: junk}
					})}})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.1/absent-is-not-a-claim",
				Title:        "An absent production or authorisation is read as absent, never as an empty one",
				Spec:         "ranvier-streams §6.1, §4.4",
				Requirements: []string{"ranvier-streams§6.1#5", "ranvier-streams§6.1#6"},
				Run: func(t *cases.T) {
					checkReads(t, []readRow{
						{"nothing stated", streamInfo(3, nil), readBase(3, nil)},
						{"a production in the producer's order", streamInfo(3, func(m *messagepb.StreamInfo) {
							m.Production = &messagepb.Production{Settings: []*messagepb.Setting{{Key: "gain", Value: "2"}, {Key: "filter", Value: "lowpass"}}}
						}), readBase(3, func(a *conformpb.AnnouncementRead) {
							a.Production = &conformpb.ReadProduction{Settings: []*conformpb.ProductionSetting{{Key: "gain", Value: "2"}, {Key: "filter", Value: "lowpass"}}}
						})},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.4/second-announcement-is-not-an-update",
				Title:        "A second announcement carrying a stream's reference is not an update: samples still match the first",
				Spec:         "ranvier-streams §6.4",
				Requirements: []string{"ranvier-streams§6.4#3"},
				Run: func(t *cases.T) {
					checkMatch(t, "a stream announced twice on one connection", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(1, withSchema("x.v1.First"))), sampleEv(1, 1),
						announceEv(1, streamInfo(1, withSchema("x.v1.Second"))), sampleEv(1, 1),
					}, []string{"-", "gaze/tracker#1[x.v1.First]", "-", "gaze/tracker#1[x.v1.First]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.5/unannounced-reference-is-unknown",
				Title:        "A sample whose reference has no announcement is handled and its schema reported unknown",
				Spec:         "ranvier-streams §6.5",
				Requirements: []string{"ranvier-streams§6.5#1", "ranvier-streams§6.5#2", "ranvier-wire§4.2#5"},
				Run: func(t *cases.T) {
					checkMatch(t, "a sample of a stream nobody announced", []*conformpb.MatchEvent{
						sampleEv(1, 1), announceEv(1, streamInfo(1, withSchema("x.v1.A"))), sampleEv(1, 2), sampleEv(1, 1),
					}, []string{"unknown", "-", "unknown", "gaze/tracker#1[x.v1.A]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.5/no-fallback-on-name",
				Title:        "A sample with no announcement is never matched to another announcement under the same name",
				Spec:         "ranvier-streams §6.5, §6.7",
				Requirements: []string{"ranvier-streams§6.5#3", "ranvier-wire§4.2#6"},
				Run: func(t *cases.T) {
					checkMatch(t, "two announced streams under one name and a third unannounced", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(1, onNode("stimulus", "x.v1.Stim"))), announceEv(1, streamInfo(2, onNode("buttons", "x.v1.Press"))),
						sampleEv(1, 3), sampleEv(1, 2),
					}, []string{"-", "-", "unknown", "trial.events/buttons#2[x.v1.Press]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.7/every-publisher-readable",
				Title:        "A subscriber to a name can read every publisher's announcement, not one of them",
				Spec:         "ranvier-streams §6.7",
				Requirements: []string{"ranvier-streams§6.7#1"},
				Run: func(t *cases.T) {
					checkMatch(t, "three publishers, two under trial.events", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(1, onNode("stimulus", "x.v1.Stim"))), announceEv(1, streamInfo(2, withSchema("x.v1.Gaze"))),
						announceEv(2, streamInfo(1, onNode("buttons", "x.v1.Press"))), listEv("trial.events"),
					}, []string{"-", "-", "-", "[trial.events/stimulus#1[x.v1.Stim] trial.events/buttons#1[x.v1.Press]]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.7/matched-by-reference",
				Title:        "Samples are matched to announcements by stream_ref, never by name",
				Spec:         "ranvier-streams §6.7",
				Requirements: []string{"ranvier-streams§6.7#2", "ranvier-wire§4.2#7"},
				Run: func(t *cases.T) {
					checkMatch(t, "two publishers' samples interleaved under one name", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(1, onNode("stimulus", "x.v1.Stim"))), announceEv(1, streamInfo(2, onNode("buttons", "x.v1.Press"))),
						sampleEv(1, 2), sampleEv(1, 1), sampleEv(1, 2),
					}, []string{"-", "-", "trial.events/buttons#2[x.v1.Press]", "trial.events/stimulus#1[x.v1.Stim]", "trial.events/buttons#2[x.v1.Press]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.7/one-node-two-streams",
				Title:        "Two streams one node publishes under one name are two streams, never deduplicated by (name, node)",
				Spec:         "ranvier-streams §6.7",
				Requirements: []string{"ranvier-streams§6.7#4"},
				Run: func(t *cases.T) {
					checkMatch(t, "one node, one name, two streams", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(4, onNode("camera", "x.v1.Left"))), announceEv(1, streamInfo(5, onNode("camera", "x.v1.Right"))),
						listEv("trial.events"), sampleEv(1, 5), sampleEv(1, 4),
					}, []string{"-", "-", "[trial.events/camera#4[x.v1.Left] trial.events/camera#5[x.v1.Right]]",
						"trial.events/camera#5[x.v1.Right]", "trial.events/camera#4[x.v1.Left]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.7/empty-before-any-announcement",
				Title:        "Before any publisher has announced, the announcement list is empty, which is not an error",
				Spec:         "ranvier-streams §6.7",
				Requirements: []string{"ranvier-streams§6.7#5"},
				Run: func(t *cases.T) {
					checkMatch(t, "a subscriber at startup", []*conformpb.MatchEvent{
						listEv("gaze"), announceEv(1, streamInfo(1, withSchema("x.v1.A"))), listEv("pupil"), listEv("gaze"),
					}, []string{"[]", "-", "[]", "[gaze/tracker#1[x.v1.A]]"})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.7/reference-resolves-per-connection",
				Title:        "A stream_ref resolves against announcements from the runtime that sent it: the same reference on two connections is two streams",
				Spec:         "ranvier-streams §6.7, §1, §2.2",
				Requirements: []string{"ranvier-streams§1#3", "ranvier-wire§4.3#19"},
				Run: func(t *cases.T) {
					checkMatch(t, "stream_ref 1 announced by two runtimes", []*conformpb.MatchEvent{
						announceEv(1, streamInfo(1, onNode("stimulus", "x.v1.Stim"))), announceEv(2, streamInfo(1, onNode("buttons", "x.v1.Press"))),
						sampleEv(2, 1), sampleEv(1, 1), sampleEv(3, 1),
					}, []string{"-", "-", "trial.events/buttons#1[x.v1.Press]", "trial.events/stimulus#1[x.v1.Stim]", "unknown"})
				},
			}
		}),
	}
}
