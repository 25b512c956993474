package streams

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// track feeds each input's arrivals to a fresh tracker of the SUT's.
func track(t *cases.T, inputs []*conformpb.TrackInput) []*conformpb.TrackOutput {
	return cases.Batched(t, "track", inputs, func(b []*conformpb.TrackInput) ([]*conformpb.TrackOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Track{Track: &conformpb.Track{Inputs: b}}}).GetTrack()
		return r.GetOutputs(), r != nil
	})
}

// driveQueue runs each script on a fresh subscription of the SUT's.
func driveQueue(t *cases.T, inputs []*conformpb.QueueInput) []*conformpb.QueueOutput {
	return cases.Batched(t, "drive_queue", inputs, func(b []*conformpb.QueueInput) ([]*conformpb.QueueOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_DriveQueue{DriveQueue: &conformpb.DriveQueue{Inputs: b}}}).GetDriveQueue()
		return r.GetOutputs(), r != nil
	})
}

// receiveConnections plays each input's connections to the SUT.
func receiveConnections(t *cases.T, inputs []*conformpb.ConnectionsInput) []*conformpb.ConnectionsOutput {
	return cases.Batched(t, "receive_connections", inputs, func(b []*conformpb.ConnectionsInput) ([]*conformpb.ConnectionsOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_ReceiveConnections{ReceiveConnections: &conformpb.ReceiveConnections{Inputs: b}}}).GetReceiveConnections()
		return r.GetOutputs(), r != nil
	})
}

// publish runs each input's steps on a fresh runtime of the SUT's, and
// checks that the answer has one event per step.
func publish(t *cases.T, inputs []*conformpb.PublishInput) []*conformpb.PublishOutput {
	outs := cases.Batched(t, "publish", inputs, func(b []*conformpb.PublishInput) ([]*conformpb.PublishOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Publish{Publish: &conformpb.Publish{Inputs: b}}}).GetPublish()
		return r.GetOutputs(), r != nil
	})
	for i, o := range outs {
		if len(o.Events) != len(inputs[i].Steps) {
			t.Protocolf("publish: %d steps, %d events", len(inputs[i].Steps), len(o.Events))
		}
	}
	return outs
}

// readAnnouncements asks the SUT to read each StreamInfo payload.
func readAnnouncements(t *cases.T, payloads [][]byte) []*conformpb.ReadAnnouncementOutput {
	var inputs []*conformpb.ReadAnnouncementInput
	for _, p := range payloads {
		inputs = append(inputs, &conformpb.ReadAnnouncementInput{StreamInfo: p})
	}
	return cases.Batched(t, "read_announcements", inputs, func(b []*conformpb.ReadAnnouncementInput) ([]*conformpb.ReadAnnouncementOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_ReadAnnouncements{ReadAnnouncements: &conformpb.ReadAnnouncements{Inputs: b}}}).GetReadAnnouncements()
		return r.GetOutputs(), r != nil
	})
}

// matchAnnouncements plays each input's events to the SUT and checks that
// each event has an answer.
func matchAnnouncements(t *cases.T, inputs []*conformpb.MatchInput) []*conformpb.MatchOutput {
	outs := cases.Batched(t, "match_announcements", inputs, func(b []*conformpb.MatchInput) ([]*conformpb.MatchOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_MatchAnnouncements{MatchAnnouncements: &conformpb.MatchAnnouncements{Inputs: b}}}).GetMatchAnnouncements()
		return r.GetOutputs(), r != nil
	})
	for i, o := range outs {
		if len(o.Answers) != len(inputs[i].Events) {
			t.Protocolf("match_announcements: %d events, %d answers", len(inputs[i].Events), len(o.Answers))
		}
	}
	return outs
}

// latency hands each input's samples over and reads the percentiles.
func latency(t *cases.T, inputs []*conformpb.LatencyInput) []*conformpb.LatencyOutput {
	return cases.Batched(t, "latency", inputs, func(b []*conformpb.LatencyInput) ([]*conformpb.LatencyOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Latency{Latency: &conformpb.Latency{Inputs: b}}}).GetLatency()
		return r.GetOutputs(), r != nil
	})
}

// arrival builds one Arrival.
func arrival(conn uint64, ref uint32, seq, ns uint64) *conformpb.Arrival {
	return &conformpb.Arrival{Connection: conn, StreamRef: ref, Sequence: seq, MonotonicTimestampNs: ns}
}

// trackInput builds the tracker input of a vector.
func trackInput(v *corpus.StreamsVector) *conformpb.TrackInput {
	in := &conformpb.TrackInput{Name: v.Name}
	for _, a := range v.AllArrivals() {
		in.Arrivals = append(in.Arrivals, arrival(a.Conn, a.Ref, a.Seq, a.Ns))
	}
	return in
}

// describeArrivals prints arrivals compactly: a run on connection 1,
// stream_ref 1 stamped with its sequences as the sequences alone, anything
// else as connection/stream_ref/sequence@ns. A long run is elided in the
// middle.
func describeArrivals(as []*conformpb.Arrival) string {
	simple := true
	for _, a := range as {
		if a.Connection != 1 || a.StreamRef != 1 || a.MonotonicTimestampNs != a.Sequence {
			simple = false
		}
	}
	show := func(a *conformpb.Arrival) string {
		if simple {
			return fmt.Sprint(a.Sequence)
		}
		return fmt.Sprintf("%d/%d/%d@%d", a.Connection, a.StreamRef, a.Sequence, a.MonotonicTimestampNs)
	}
	var parts []string
	for i, a := range as {
		if len(as) > 64 && i == 48 {
			parts = append(parts, fmt.Sprintf("… %d more …", len(as)-56))
		}
		if len(as) > 64 && i >= 48 && i < len(as)-8 {
			continue
		}
		parts = append(parts, show(a))
	}
	if simple {
		return "sequences " + strings.Join(parts, ", ") + " (connection 1, stream_ref 1, each stamped with its sequence)"
	}
	return "arrivals (connection/stream_ref/sequence@ns) " + strings.Join(parts, ", ")
}
