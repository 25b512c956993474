package tlv_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

func mustPath(t testing.TB, s string) tlv.Rope {
	t.Helper()
	p, err := tlv.CanonicalPath(s)
	if err != nil {
		t.Fatal(err)
	}
	return tlv.NewRope(p)
}

// Delivery policy packing (graph model §Subscriber delivery policy, pinned):
// bits 0–1 reliability, 2–4 priority, 5 durability_request, 6–7 delivery_class,
// 8–15 reserved — written 0, ignored on read, never rejected.
func TestDeliveryPolicy(t *testing.T) {
	tests := []struct {
		p    tlv.DeliveryPolicy
		bits uint16
	}{
		{tlv.DeliveryPolicy{}, 0x0000},
		{tlv.DeliveryPolicy{Reliability: 1}, 0x0001},
		{tlv.DeliveryPolicy{Reliability: 3}, 0x0003},
		{tlv.DeliveryPolicy{Priority: 7}, 0x001C},
		{tlv.DeliveryPolicy{Priority: 1}, 0x0004},
		{tlv.DeliveryPolicy{DurabilityRequest: true}, 0x0020},
		{tlv.DeliveryPolicy{DeliveryClass: 3}, 0x00C0},
		{tlv.DeliveryPolicy{DeliveryClass: 2}, 0x0080},
		{tlv.DeliveryPolicy{Reliability: 1, Priority: 5, DurabilityRequest: true, DeliveryClass: 1}, 0x0075},
	}
	for _, tt := range tests {
		got, err := tt.p.Pack()
		if err != nil || got != tt.bits {
			t.Errorf("Pack(%+v) = 0x%04x, %v; want 0x%04x", tt.p, got, err, tt.bits)
		}
		if back := tlv.UnpackDeliveryPolicy(tt.bits); back != tt.p {
			t.Errorf("Unpack(0x%04x) = %+v", tt.bits, back)
		}
		// Reserved bits are ignored on read, whatever they hold.
		if back := tlv.UnpackDeliveryPolicy(tt.bits | 0xFF00); back != tt.p {
			t.Errorf("Unpack(0x%04x) = %+v, reserved bits not ignored", tt.bits|0xFF00, back)
		}
	}
	for _, bad := range []tlv.DeliveryPolicy{{Reliability: 4}, {Priority: 8}, {DeliveryClass: 4}} {
		if _, err := bad.Pack(); err == nil {
			t.Errorf("Pack(%+v) accepted a field too wide", bad)
		}
	}
}

// SUBSCRIBER: PATH target, then an optional SETTINGS with delivery_policy as
// NAME "delivery_policy", VALUE u16 LE (reconstructed§tlv-records).
func TestSubscriberRecord(t *testing.T) {
	pol := tlv.DeliveryPolicy{Reliability: 1, DurabilityRequest: true}
	set, err := pol.Setting()
	if err != nil {
		t.Fatal(err)
	}
	s := tlv.Subscriber{Target: mustPath(t, "/sink"), HasSettings: true, Settings: []tlv.Setting{set}}
	want := tlvBytes(0x04, true,
		tlvBytes(0x06, false, hx(`04 "sink"`)),
		tlvBytes(0x0b, true, tlvBytes(0x02, false, []byte("delivery_policy")), tlvBytes(0x01, false, hx("21 00"))))
	got := s.Node().Bytes()
	if !bytes.Equal(got, want) {
		t.Fatalf("SUBSCRIBER\n got % x\nwant % x", got, want)
	}
	back, err := tlv.DecodeSubscriber(mustDecode(t, bytewise(got)))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := back.Policy(); err != nil || p != pol || !back.Target.EqualBytes(hx(`04 "sink"`)) {
		t.Fatalf("decoded %+v policy %+v %v", back, p, err)
	}
	// Reserved policy bits from a peer are ignored, never rejected.
	peer := tlvBytes(0x04, true,
		tlvBytes(0x06, false, hx(`04 "sink"`)),
		tlvBytes(0x0b, true, tlvBytes(0x02, false, []byte("delivery_policy")), tlvBytes(0x01, false, hx("21 ff"))))
	back, err = tlv.DecodeSubscriber(mustDecode(t, tlv.NewRope(peer)))
	if p, perr := back.Policy(); err != nil || perr != nil || p != pol {
		t.Fatalf("reserved bits: %+v %v %v", p, err, perr)
	}
	// Absent ⇒ all zero.
	bare := tlv.Subscriber{Target: mustPath(t, "/sink")}
	back, err = tlv.DecodeSubscriber(bare.Node())
	if p, perr := back.Policy(); err != nil || perr != nil || p != (tlv.DeliveryPolicy{}) || back.HasSettings {
		t.Fatalf("absent policy: %+v %v %v", p, err, perr)
	}
}

func TestRecordLayoutFaults(t *testing.T) {
	value := tlv.NewLeaf(tlv.TypeValue, []byte{1})
	name := tlv.NameNode("k")
	badPath := tlv.NewLeaf(tlv.TypePath, hx(`03 "a/b"`))
	tests := []struct {
		name   string
		err    error
		status tlv.Status
	}{
		{"SETTINGS with a dangling key", errOf(tlv.DecodeSettings(tlv.NewStruct(tlv.TypeSettings, name))), tlv.StatusMalformed},
		{"SETTINGS keyed by a VALUE", errOf(tlv.DecodeSettings(tlv.NewStruct(tlv.TypeSettings, value, value))), tlv.StatusMalformed},
		{"SETTINGS that is opaque", errOf(tlv.DecodeSettings(tlv.NewLeaf(tlv.TypeSettings, nil))), tlv.StatusMalformed},
		{"SUBSCRIBER without a PATH", errOf(tlv.DecodeSubscriber(tlv.NewStruct(tlv.TypeSubscriber, value))), tlv.StatusMalformed},
		{"SUBSCRIBER with a bad PATH", errOf(tlv.DecodeSubscriber(tlv.NewStruct(tlv.TypeSubscriber, badPath))), tlv.StatusPathInvalid},
		{"POINT without a NAME", errOf(tlv.DecodePoint(tlv.NewStruct(tlv.TypePoint, value))), tlv.StatusMalformed},
		{"POINT with a stray child", errOf(tlv.DecodePoint(tlv.NewStruct(tlv.TypePoint, name, value, value))), tlv.StatusMalformed},
		{"FWD with three children", errOf(tlv.DecodeFwd(tlv.NewStruct(tlv.TypeFwd, value, value, value))), tlv.StatusMalformed},
		{"FWD with op 6", errOf(tlv.DecodeFwd(tlv.Fwd{Op: 6, Payload: value}.Node())), tlv.StatusMalformed},
		{"FWD with a bad dst", errOf(tlv.DecodeFwd(tlv.NewStruct(tlv.TypeFwd, tlv.NewLeaf(tlv.TypeOp, []byte{1}), badPath, tlv.NewLeaf(tlv.TypePath, nil), value))), tlv.StatusPathInvalid},
		{"STATUS of 1 byte", errOf(tlv.DecodeStatus(tlv.NewLeaf(tlv.TypeStatus, []byte{1}))), tlv.StatusMalformed},
		{"RESULT with two answers", errOf(tlv.DecodeReply(tlv.NewStruct(tlv.TypeResult, value, value))), tlv.StatusMalformed},
		{"reply of a VALUE", errOf(tlv.DecodeReply(value)), tlv.StatusMalformed},
	}
	for _, tt := range tests {
		if got, ok := tlv.StatusOf(tt.err); !ok || got != tt.status {
			t.Errorf("%s: %v, want %s", tt.name, tt.err, tt.status)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

// POINT: NAME, optional VALUE, optional TIME, child POINTs (the TLV pins (docs/requirements.md)).
func TestPointRecord(t *testing.T) {
	p := tlv.Point{Name: "wheel", Children: []tlv.Point{
		{Name: "left", Value: tlv.NewLeaf(tlv.TypeValue, []byte{1, 2}), HasTime: true, Time: 0x1122334455667788},
		{Name: "right"},
	}}
	got := p.Node().Bytes()
	want := tlvBytes(0x07, true,
		tlvBytes(0x02, false, []byte("wheel")),
		tlvBytes(0x07, true, tlvBytes(0x02, false, []byte("left")), tlvBytes(0x01, false, hx("01 02")),
			tlvBytes(0x03, false, hx("88 77 66 55 44 33 22 11"))),
		tlvBytes(0x07, true, tlvBytes(0x02, false, []byte("right"))))
	if !bytes.Equal(got, want) {
		t.Fatalf("POINT\n got % x\nwant % x", got, want)
	}
	back, err := tlv.DecodePoint(mustDecode(t, bytewise(got)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Node().Bytes(), got) || back.Children[0].Time != 0x1122334455667788 {
		t.Fatalf("round trip: %+v", back)
	}
}

// FWD: OP, PATH dst, PATH src, payload; REPLY's payload a RESULT or a STATUS
// (reconstructed§tlv-records).
func TestFwdAndReply(t *testing.T) {
	req := tlv.Fwd{Op: tlv.OpRead, Dst: mustPath(t, "/wheel/left"), Src: mustPath(t, "/net/can/can0/stm"), Payload: tlv.NewStruct(tlv.TypeResult)}
	b := req.Node().Bytes()
	want := tlvBytes(0x0f, true, hx("0a 00 01 00 02"),
		tlvBytes(0x06, false, hx(`05 "wheel" 04 "left"`)),
		tlvBytes(0x06, false, hx(`03 "net" 03 "can" 04 "can0" 03 "stm"`)),
		hx("0c 01 00 00"))
	if !bytes.Equal(b, want) {
		t.Fatalf("FWD\n got % x\nwant % x", b, want)
	}
	f, err := tlv.DecodeFwd(mustDecode(t, bytewise(b)))
	if err != nil || f.Op != tlv.OpRead || !f.Dst.Equal(req.Dst) || !f.Src.Equal(req.Src) {
		t.Fatalf("DecodeFwd: %+v %v", f, err)
	}

	answer := tlv.NewLeaf(tlv.TypeValue, []byte{7})
	for _, r := range []tlv.Reply{{}, {Answer: answer}, {Status: tlv.StatusPathNotFound}} {
		reply, err := tlv.DecodeFwd(tlv.ReplyTo(f, r))
		if err != nil || reply.Op != tlv.OpReply || !reply.Dst.Equal(req.Src) || reply.Src.Len() != 0 {
			t.Fatalf("ReplyTo: %+v %v", reply, err)
		}
		back, err := tlv.DecodeReply(reply.Payload)
		if err != nil || back.Status != r.Status || !back.Answer.Equal(r.Answer) {
			t.Fatalf("DecodeReply: %+v %v, want %+v", back, err, r)
		}
	}
	// STATUS: empty is OK (pinned `09 00 00 00`); else a u16 LE code.
	if b := tlv.StatusNode(tlv.StatusPathNotFound).Bytes(); !bytes.Equal(b, hx("09 00 02 00 20 00")) {
		t.Fatalf("STATUS not_found % x", b)
	}
	if b := tlv.StatusNode(tlv.StatusOK).Bytes(); !bytes.Equal(b, hx("09 00 00 00")) {
		t.Fatalf("STATUS ok % x", b)
	}
	if r, err := tlv.DecodeReply(tlv.NewLeaf(tlv.TypeResult, nil)); err != nil || r.Answer != nil {
		t.Fatalf("opaque empty RESULT: %+v %v", r, err)
	}
}

func TestStatusNames(t *testing.T) {
	if s := tlv.StatusNestingTooDeep.String(); s != "tr::tlv::nesting_too_deep" {
		t.Error(s)
	}
	if s := tlv.Status(0x1234).String(); s != "status(0x1234)" {
		t.Error(s)
	}
	if s := tlv.Type(0x99).String(); s != "TYPE(0x99)" {
		t.Error(s)
	}
}
