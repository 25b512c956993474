package streams_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// TestReadAnnouncement is each rule of ranvier-streams §6.6.
func TestReadAnnouncement(t *testing.T) {
	base := streams.StreamInfo{Name: "gaze", Node: "tracker", StreamRef: 3}
	with := func(f func(*streams.StreamInfo)) streams.StreamInfo {
		i := base
		f(&i)
		return i
	}
	want := func(f func(*streams.Announcement)) streams.Announcement {
		a := streams.Announcement{Name: "gaze", Node: "tracker", StreamRef: 3}
		f(&a)
		return a
	}
	nothing := func(*streams.Announcement) {}
	tests := []struct {
		name string
		in   streams.StreamInfo
		want streams.Announcement
	}{
		{"bare", base, want(nothing)},
		{"schema with neither id nor descriptor is none",
			with(func(i *streams.StreamInfo) { i.Schema = &streams.SchemaInfo{} }), want(nothing)},
		{"schema with an empty descriptor is none",
			with(func(i *streams.StreamInfo) { i.Schema = &streams.SchemaInfo{Descriptor: []byte{}} }), want(nothing)},
		{"schema with an id only",
			with(func(i *streams.StreamInfo) { i.Schema = &streams.SchemaInfo{SchemaID: "x.v1.A"} }),
			want(func(a *streams.Announcement) { a.Schema = &streams.Schema{ID: "x.v1.A"} })},
		{"schema with a descriptor only",
			with(func(i *streams.StreamInfo) { i.Schema = &streams.SchemaInfo{Descriptor: []byte{1, 2}} }),
			want(func(a *streams.Announcement) { a.Schema = &streams.Schema{Descriptor: []byte{1, 2}} })},
		{"host and boot both present",
			with(func(i *streams.StreamInfo) { i.HostID, i.BootID = "h", "b" }),
			want(func(a *streams.Announcement) { a.Clock = &streams.HostClock{HostID: "h", BootID: "b"} })},
		{"host without boot is neither",
			with(func(i *streams.StreamInfo) { i.HostID = "h" }), want(nothing)},
		{"boot without host is neither",
			with(func(i *streams.StreamInfo) { i.BootID = "b" }), want(nothing)},
		{"empty clock domain is absent",
			with(func(i *streams.StreamInfo) { i.SourceClockDomain = "" }), want(nothing)},
		{"clock domain present",
			with(func(i *streams.StreamInfo) { i.SourceClockDomain = "device.7" }),
			want(func(a *streams.Announcement) { a.SourceClockDomain = "device.7" })},
		{"known origin",
			with(func(i *streams.StreamInfo) { i.Origin = 2 }),
			want(func(a *streams.Announcement) { a.Origin = streams.OriginDerived })},
		{"unknown origin reads unspecified",
			with(func(i *streams.StreamInfo) { i.Origin = 17 }), want(nothing)},
		{"negative origin reads unspecified",
			with(func(i *streams.StreamInfo) { i.Origin = -1 }), want(nothing)},
		{"unknown assertion method reads unspecified",
			with(func(i *streams.StreamInfo) { i.Operator = &streams.Identity{Name: "ana", AssertedBy: 40} }),
			want(func(a *streams.Announcement) { a.Operator = &streams.Operator{Name: "ana"} })},
		{"known assertion method",
			with(func(i *streams.StreamInfo) { i.Operator = &streams.Identity{Name: "ana", AssertedBy: 2} }),
			want(func(a *streams.Announcement) {
				a.Operator = &streams.Operator{Name: "ana", AssertedBy: streams.AssertionOperatingSystem}
			})},
		{"an identity stating nothing is no operator",
			with(func(i *streams.StreamInfo) { i.Operator = &streams.Identity{AssertedBy: 99} }), want(nothing)},
		{"authorisation and production carried",
			with(func(i *streams.StreamInfo) {
				i.Authorisation = &streams.Authorisation{Authority: "irb", ValidFromUnixNs: 5}
				i.Production = &streams.Production{Settings: []streams.Setting{{"gain", "2"}}}
			}),
			want(func(a *streams.Announcement) {
				a.Authorisation = &streams.Authorisation{Authority: "irb", ValidFromUnixNs: 5}
				a.Production = []streams.Setting{{"gain", "2"}}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, streams.ReadAnnouncement(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadAnnouncementDoesNotAlias: the read form is the reader's own; a
// later change to the decoded message does not reach it.
func TestReadAnnouncementDoesNotAlias(t *testing.T) {
	in := streams.StreamInfo{
		Name: "n", StreamRef: 1,
		Authorisation: &streams.Authorisation{Authority: "a"},
		Production:    &streams.Production{Settings: []streams.Setting{{"k", "v"}}},
	}
	a := streams.ReadAnnouncement(in)
	in.Authorisation.Authority = "changed"
	in.Production.Settings[0].Value = "changed"
	if a.Authorisation.Authority != "a" || a.Production[0].Value != "v" {
		t.Errorf("read announcement aliases its input: %+v", a)
	}
}

// TestMatchByReference is §6.5 and §6.7: announcements are matched to
// samples by (connection, stream_ref), never by name; every publisher's
// announcement under a name is readable; no second announcement updates a
// stream (§6.4).
func TestMatchByReference(t *testing.T) {
	var as streams.Announcements
	if got := as.ByName("trial.events"); len(got) != 0 {
		t.Errorf("before any announcement: %v, want empty (§6.7: not an error)", got)
	}
	stim := streams.Announcement{Name: "trial.events", Node: "stimulus", StreamRef: 1, Schema: &streams.Schema{ID: "a.v1.Stim"}}
	btn := streams.Announcement{Name: "trial.events", Node: "buttons", StreamRef: 1, Schema: &streams.Schema{ID: "a.v1.Btn"}}
	block2 := streams.Announcement{Name: "trial.events", Node: "stimulus", StreamRef: 2}
	for _, add := range []struct {
		conn streams.ConnID
		a    streams.Announcement
	}{{1, stim}, {2, btn}, {1, block2}} {
		if ok, err := as.Add(add.conn, add.a); !ok || err != nil {
			t.Fatalf("Add(%d, %+v) = %v, %v", add.conn, add.a, ok, err)
		}
	}

	// Two processes both announce reference 1: the connection tells them
	// apart.
	if a, ok := as.Lookup(1, 1); !ok || a.Node != "stimulus" {
		t.Errorf("Lookup(1, 1) = %+v, %v; want the stimulus stream", a, ok)
	}
	if a, ok := as.Lookup(2, 1); !ok || a.Node != "buttons" {
		t.Errorf("Lookup(2, 1) = %+v, %v; want the buttons stream", a, ok)
	}
	// §6.5: a reference nobody announced is unknown; no fallback by name,
	// though the name has three announcements.
	if a, ok := as.Lookup(2, 2); ok {
		t.Errorf("Lookup(2, 2) = %+v; want unknown", a)
	}
	// §6.7: every publisher's announcement, and two streams of one node
	// under one name are two streams.
	if diff := cmp.Diff([]streams.Announcement{stim, btn, block2}, as.ByName("trial.events")); diff != "" {
		t.Errorf("ByName (-want +got):\n%s", diff)
	}
	// §6.4: a second announcement for a heard reference is not an update.
	changed := stim
	changed.Schema = &streams.Schema{ID: "other.v1.X"}
	if ok, err := as.Add(1, changed); ok || err != nil {
		t.Errorf("re-announcement: Add = %v, %v; want false, nil", ok, err)
	}
	if a, _ := as.Lookup(1, 1); a.Schema.ID != "a.v1.Stim" {
		t.Errorf("after re-announcement schema = %q, want the first", a.Schema.ID)
	}
	if _, err := as.Add(1, streams.Announcement{Name: "x"}); !errors.Is(err, streams.ErrNoStreamRef) {
		t.Errorf("Add with stream_ref 0: %v, want ErrNoStreamRef", err)
	}
	if as.Len() != 3 {
		t.Errorf("Len() = %d, want 3", as.Len())
	}
}
