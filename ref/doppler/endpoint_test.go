package doppler

import (
	"errors"
	"testing"
)

// TestEndpoint derives subjects and JetStream objects from an endpoint
// (doppler §5, the doppler pins (docs/requirements.md)).
func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in, server, base string
	}{
		{"nats://127.0.0.1:4222/doppler", "nats://127.0.0.1:4222", "doppler"},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222", "doppler"},
		{"nats://127.0.0.1:4222/", "nats://127.0.0.1:4222", "doppler"},
		{"nats://rig7:4222/radar_A", "nats://rig7:4222", "radar_A"},
		{"nats://user:pw@broker:4222/b", "nats://user:pw@broker:4222", "b"},
	} {
		e, err := ParseEndpoint(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if e.Server != tc.server || e.Base != tc.base {
			t.Errorf("%q: server %q base %q, want %q %q", tc.in, e.Server, e.Base, tc.server, tc.base)
		}
	}
	for _, bad := range []string{
		"tls://h:1/b", "h:4222/b", "nats:///b", "nats://h:1/a.b", "nats://h:1/a*", "nats://h:1/a>",
		"nats://h:1/a/b", "nats://h:1/a b", "nats://h:1/b?x=1", "nats://h:1/b#f",
		// One server, never a seed list (doppler §9): the NATS client
		// would read a comma-separated authority as several servers.
		"nats://h:1,h:2/b", "nats://h:1,nats://h:2/b", "nats://u:p@h:1,h:2",
	} {
		if _, err := ParseEndpoint(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q parsed: %v", bad, err)
		}
	}

	e, _ := ParseEndpoint("nats://h:4222/sdr")
	want := map[Type]string{
		TypeCI8: "sdr.pub.ci8", TypeCI16: "sdr.pub.ci16", TypeCI32: "sdr.pub.ci32",
		TypeCF32: "sdr.pub.cf32", TypeCF64: "sdr.pub.cf64", TypeRaw: "sdr.pub.raw", TypeTLM: "sdr.pub.tlm",
	}
	for typ, subj := range want {
		if got := e.PubSubject(typ); got != subj {
			t.Errorf("PubSubject(%v) = %q, want %q", typ, got, subj)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{e.ReqSubject(), "sdr.req"},
		{e.WorkSubject(TypeCF32), "sdr.work.cf32"},
		{e.WorkWildcard(), "sdr.work.*"},
		{e.PubWildcard(), "sdr.pub.*"},
		{e.StreamName(), "DP_WORK_sdr"},
		{e.ConsumerName(), "DP_PULL_sdr"},
		{e.String(), "nats://h:4222/sdr"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestUniqueBase: two bases differ, and each makes an endpoint.
func TestUniqueBase(t *testing.T) {
	a, b := UniqueBase("conform_"), UniqueBase("conform_")
	if a == b {
		t.Errorf("UniqueBase twice = %q", a)
	}
	if ep, err := ParseEndpoint("nats://127.0.0.1:4222/" + a); err != nil || ep.Base != a {
		t.Errorf("ParseEndpoint(%q) = %v, %v", a, ep, err)
	}
}
