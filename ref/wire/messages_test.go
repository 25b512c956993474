package wire_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
)

// The inner bytes of the §4.5 sample: monotonic_timestamp_ns = 1 (fixed64,
// little-endian), sequence = 1, values = "A", stream_ref = 1.
var (
	sampleFields   = h("09 01 00 00 00 00 00 00 00 10 01 1a 01 41 28 01")
	reversedFields = h("28 01 1a 01 41 10 01 09 01 00 00 00 00 00 00 00")
	wantSample     = &messagepb.Sample{MonotonicTimestampNs: 1, Sequence: 1, Values: []byte("A"), StreamRef: 1}
)

const (
	frameName     = "ranvier.message.v1.Frame"
	sampleName    = "ranvier.message.v1.Sample"
	streamName    = "ranvier.message.v1.StreamInfo"
	toRuntimeName = "ranvier.control.v1.ToRuntime"
	toNodeName    = "ranvier.control.v1.ToNode"
	refuseName    = "ranvier.control.v1.Refuse"
)

// TestMessageTypeNames: reconstructed§ranvier-fields — every message of the two
// packages can be named, and only those.
func TestMessageTypeNames(t *testing.T) {
	want := []string{
		"ranvier.control.v1.Alive", "ranvier.control.v1.Bind", "ranvier.control.v1.BindingInfo",
		"ranvier.control.v1.Endpoint", "ranvier.control.v1.Listening", "ranvier.control.v1.Refuse",
		"ranvier.control.v1.Register", "ranvier.control.v1.Stop", "ranvier.control.v1.Stopping",
		"ranvier.control.v1.ToNode", "ranvier.control.v1.ToRuntime", "ranvier.control.v1.Transport",
		"ranvier.message.v1.Authorisation", "ranvier.message.v1.Frame", "ranvier.message.v1.Identity",
		"ranvier.message.v1.Production", "ranvier.message.v1.Request", "ranvier.message.v1.Sample",
		"ranvier.message.v1.SchemaInfo", "ranvier.message.v1.Setting", "ranvier.message.v1.StreamInfo",
	}
	got := wire.MessageTypeNames()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if !slices.IsSorted(got) {
		t.Error("names not sorted")
	}
	for _, name := range got {
		mt, err := wire.MessageType(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(mt.Descriptor().FullName()) != name {
			t.Errorf("%s: type is %s", name, mt.Descriptor().FullName())
		}
	}
	for _, bad := range []string{"", "Frame", "ranvier.message.v1.Nope", "ranvier.message.v2.Frame", "google.protobuf.Empty"} {
		if _, err := wire.MessageType(bad); err == nil {
			t.Errorf("MessageType(%q) succeeded", bad)
		}
		if _, err := wire.Decode(bad, nil); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}

// TestDecodeTable pins the decoding rules of ranvier-wire §7 (and the field
// order freedom of §4.6) against hand-built payloads.
func TestDecodeTable(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		payload []byte
		want    proto.Message
		unknown bool // the payload carries fields the decoder must skip
	}{
		{"§4.5/sample as printed", frameName, samplePayload,
			&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}, false},
		{"§1.2/fixed64 is little-endian inside", sampleName, h("09 00 00 00 00 00 00 00 01"),
			&messagepb.Sample{MonotonicTimestampNs: 1 << 56}, false},
		{"§4.6/fields in any order", sampleName, reversedFields, wantSample, false},
		{"§4.6/fields interleaved", sampleName, h("1a 01 41 09 01 00 00 00 00 00 00 00 28 01 10 01"), wantSample, false},
		{"§4.6/frame of reversed sample", frameName, cat(h("12 10"), reversedFields),
			&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}, false},
		{"§7.2/known beside unknown varint field 9", sampleName, cat(sampleFields, h("48 07")), wantSample, true},
		{"§7.2/unknown field first", sampleName, cat(h("48 07"), sampleFields), wantSample, true},
		{"§7.2/unknown length-delimited and fixed32", sampleName, cat(h("7a 02 ab cd"), sampleFields, h("a5 01 01 02 03 04")), wantSample, true},
		{"§7.2/unknown field inside the frame's sample", frameName, cat(h("12 12"), sampleFields, h("48 07")),
			&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}, true},
		{"§7.2/streaminfo unknown field 12", streamName, h("0a 01 73 62 01 78 50 01"),
			&messagepb.StreamInfo{Name: "s", StreamRef: 1}, true},
		{"§7.3/frame unknown variant", frameName, h("3a 00"), &messagepb.Frame{}, true},
		{"§7.3/frame unknown variant with content", frameName, h("3a 02 08 01"), &messagepb.Frame{}, true},
		{"§7.3/known variant beside unknown", frameName, cat(h("12 10"), sampleFields, h("3a 02 08 01")),
			&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}, true},
		{"§7.3/unknown variant before known", frameName, cat(h("3a 00 12 10"), sampleFields),
			&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}, true},
		{"§7.3/to-runtime unknown variant", toRuntimeName, h("4a 00"), &controlpb.ToRuntime{}, true},
		{"§7.3/to-node unknown variant", toNodeName, h("4a 02 08 01"), &controlpb.ToNode{}, true},
		{"§5.3/alive at the default", toRuntimeName, h("1a 00"),
			&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{}}}, false},
		{"§5.3/alive seven", toRuntimeName, h("1a 02 08 07"),
			&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{Sequence: 7}}}, false},
		{"§7.4/undeclared origin kept", streamName, h("0a 01 73 20 09"),
			&messagepb.StreamInfo{Name: "s", Origin: 9}, false},
		{"§7.4/undeclared asserted_by kept", streamName, h("42 02 10 2a"),
			&messagepb.StreamInfo{Operator: &messagepb.Identity{AssertedBy: 42}}, false},
		{"§7.4/undeclared refuse reason kept", refuseName, h("08 63"),
			&controlpb.Refuse{Reason: 99}, false},
		{"§7.4/undeclared transport action kept", toNodeName, h("1a 02 08 07"),
			&controlpb.ToNode{Message: &controlpb.ToNode_Transport{Transport: &controlpb.Transport{Action: 7}}}, false},
		{"§7.4/negative enum value kept", refuseName, h("08 ff ff ff ff ff ff ff ff ff 01"),
			&controlpb.Refuse{Reason: -1}, false},
		{"§7.5/empty frame", frameName, nil, &messagepb.Frame{}, false},
		{"§7.5/empty sample reads as the absent values", sampleName, []byte{}, &messagepb.Sample{}, false},
		{"§4.5/request gaze", "ranvier.message.v1.Request", h("0a 04 67 61 7a 65"),
			&messagepb.Request{StreamName: "gaze"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wire.Decode(tt.typ, tt.payload)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			// Compare known fields; unknown ones are checked separately.
			known := proto.Clone(got)
			clearUnknown(known)
			if diff := cmp.Diff(tt.want, known, protocmp.Transform()); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if hasUnknown(got) != tt.unknown {
				t.Errorf("unknown fields kept: %v, want %v", hasUnknown(got), tt.unknown)
			}
			if tt.typ == frameName {
				f, err := wire.DecodeFrame(tt.payload)
				if err != nil || !proto.Equal(f, got) {
					t.Errorf("DecodeFrame disagrees with Decode: %v, %v", f, err)
				}
			}
		})
	}
}

// clearUnknown drops the unknown fields of m and of every message in it.
func clearUnknown(m proto.Message) {
	r := m.ProtoReflect()
	r.SetUnknown(nil)
	r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			clearUnknown(v.Message().Interface())
		}
		if fd.Message() != nil && fd.IsList() {
			for i := 0; i < v.List().Len(); i++ {
				clearUnknown(v.List().Get(i).Message().Interface())
			}
		}
		return true
	})
}

// hasUnknown reports whether m or any message in it kept unknown fields.
func hasUnknown(m proto.Message) bool {
	r := m.ProtoReflect()
	found := len(r.GetUnknown()) > 0
	r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() && hasUnknown(v.Message().Interface()) {
			found = true
		}
		return !found
	})
	return found
}

// TestDecodeTruncated: §7.5 — a payload that ends mid-field is a decode
// failure (and the error names the type).
func TestDecodeTruncated(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		payload []byte
	}{
		{"frame claims 16 bytes of sample, has 2", frameName, h("12 10 09 01")},
		{"sample cut mid fixed64", sampleName, h("09 01 00 00")},
		{"sample cut after a tag", sampleName, h("09")},
		{"varint with no value", sampleName, h("10")},
		{"varint cut mid value", sampleName, h("10 ff")},
		{"bytes cut short", sampleName, h("1a 05 41 42")},
		{"length beyond the payload", "ranvier.message.v1.Request", h("0a 04 67 61 7a")},
		{"§4.5 sample missing its last byte", frameName, samplePayload[:len(samplePayload)-1]},
		{"unknown field cut short", sampleName, cat(sampleFields, h("7a 05 00"))},
		{"field number zero", sampleName, h("00 01")},
		{"invalid wire type", sampleName, h("0e 01")},
		{"varint over ten bytes", sampleName, h("10 ff ff ff ff ff ff ff ff ff ff 01")},
		{"to-runtime alive cut", toRuntimeName, h("1a 02 08")},
	}
	for _, tt := range tests {
		got, err := wire.Decode(tt.typ, tt.payload)
		if err == nil {
			t.Errorf("%s: decoded % x as %v", tt.name, tt.payload, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.typ) {
			t.Errorf("%s: error %q does not name %s", tt.name, err, tt.typ)
		}
		if tt.typ == frameName {
			if _, err := wire.DecodeFrame(tt.payload); err == nil {
				t.Errorf("%s: DecodeFrame accepted it", tt.name)
			}
		}
	}
}

// TestDecodeEmptyEveryType: §1.2, §7.5 — zero bytes are a valid message of
// every type, with every field at its default.
func TestDecodeEmptyEveryType(t *testing.T) {
	for _, name := range wire.MessageTypeNames() {
		m, err := wire.Decode(name, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		mt, _ := wire.MessageType(name)
		if !proto.Equal(m, mt.Zero().Interface()) && !proto.Equal(m, mt.New().Interface()) {
			t.Errorf("%s: empty payload decoded to %v", name, m)
		}
		if enc, err := wire.Encode(m); err != nil || len(enc) != 0 {
			t.Errorf("%s: re-encoded as % x, %v", name, enc, err)
		}
	}
}

// TestDecodeDoesNotAliasPayload: a decoded message owns its bytes, so it
// survives the reader reusing the buffer its payload came from.
func TestDecodeDoesNotAliasPayload(t *testing.T) {
	p := bytes.Clone(samplePayload)
	f, err := wire.DecodeFrame(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		p[i] = 0
	}
	if !proto.Equal(f.GetSample(), wantSample) {
		t.Errorf("decoded sample changed with its payload: %v", f.GetSample())
	}
}

// TestEncode: reconstructed§ranvier-fields's printed vectors with one encoding are
// reproduced exactly; the sample (whose field order is the encoder's
// choice, §4.6) round-trips.
func TestEncode(t *testing.T) {
	exact := []struct {
		name string
		m    proto.Message
		want []byte
	}{
		{"request gaze", &messagepb.Request{StreamName: "gaze"}, h("0a 04 67 61 7a 65")},
		{"frame with no variant", &messagepb.Frame{}, nil},
		{"alive{}", &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{}}}, h("1a 00")},
		{"alive{7}", &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{Sequence: 7}}}, h("1a 02 08 07")},
		{"ascending field order", wantSample, sampleFields},
	}
	for _, tt := range exact {
		got, err := wire.Encode(tt.m)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: Encode = % x, %v; want % x", tt.name, got, err, tt.want)
		}
		framed, err := wire.AppendFrame(nil, got)
		if err != nil {
			t.Fatal(err)
		}
		if tt.name == "alive{}" && !bytes.Equal(framed, h("00 00 00 02 1a 00")) {
			t.Errorf("framed alive{} = % x", framed)
		}
	}
	frame := &messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}
	enc, err := wire.Encode(frame)
	if err != nil {
		t.Fatal(err)
	}
	back, err := wire.DecodeFrame(enc)
	if err != nil || !proto.Equal(back, frame) {
		t.Errorf("round trip: %v, %v", back, err)
	}
	// Unknown fields survive a decode and re-encode in this implementation
	// (§7.2 makes that a MAY; §8 leaves it open).
	m, err := wire.Decode(sampleName, cat(sampleFields, h("48 07")))
	if err != nil {
		t.Fatal(err)
	}
	if enc, err := wire.Encode(m); err != nil || !bytes.Equal(enc, cat(sampleFields, h("48 07"))) {
		t.Logf("informational: re-encoding an unknown field gave % x, %v", enc, err)
	}
}
