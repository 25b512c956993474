package queue

import (
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	good := []struct {
		in   string
		want Endpoint
	}{
		{"nats://127.0.0.1:4222/nightly", Endpoint{URL: "nats://127.0.0.1:4222", Campaign: "nightly"}},
		{"nats://rig-3.lab:4222/wire_2026-11-30", Endpoint{URL: "nats://rig-3.lab:4222", Campaign: "wire_2026-11-30"}},
		{"nats://broker/c1", Endpoint{URL: "nats://broker", Campaign: "c1"}},
		{"tls://user:pw@broker:4443/C", Endpoint{URL: "tls://user:pw@broker:4443", Campaign: "C"}},
		{"NATS://[::1]:4222/x", Endpoint{URL: "nats://[::1]:4222", Campaign: "x"}},
		{"nats://h:1/" + strings.Repeat("a", maxCampaignLen), Endpoint{URL: "nats://h:1", Campaign: strings.Repeat("a", maxCampaignLen)}},
	}
	for _, tc := range good {
		got, err := ParseEndpoint(tc.in)
		if err != nil {
			t.Errorf("ParseEndpoint(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseEndpoint(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		again, err := ParseEndpoint(got.String())
		if err != nil || again != got {
			t.Errorf("ParseEndpoint(%q).String() = %q does not parse back: %+v, %v", tc.in, got.String(), again, err)
		}
	}

	bad := []struct{ in, why string }{
		{"", "empty"},
		{"nats://127.0.0.1:4222", "no campaign"},
		{"nats://127.0.0.1:4222/", "empty campaign"},
		{"http://127.0.0.1:4222/c", "wrong scheme"},
		{"127.0.0.1:4222/c", "no scheme"},
		{"nats:///c", "no host"},
		{"nats://h:4222/c?x=1", "query"},
		{"nats://h:4222/c#frag", "fragment"},
		{"nats://h:4222/a/b", "two path segments"},
		{"nats://h:4222/a.b", "dot splits the subject"},
		{"nats://h:4222/a*", "wildcard"},
		{"nats://h:4222/>", "full wildcard"},
		{"nats://h:4222/a%20b", "space"},
		{"nats://h:4222/a%2Fb", "escaped slash"},
		{"nats://h:4222/a%00", "NUL"},
		{"nats://h:4222/caf%C3%A9", "non-ASCII"},
		{"nats://h:4222/$SYS", "dollar"},
		{"nats://h:4222/" + strings.Repeat("a", maxCampaignLen+1), "too long"},
		{"nats://h:port/c", "bad port"},
	}
	for _, tc := range bad {
		if got, err := ParseEndpoint(tc.in); err == nil {
			t.Errorf("ParseEndpoint(%q) = %+v, want an error (%s)", tc.in, got, tc.why)
		}
	}
}

func TestStreamNames(t *testing.T) {
	ep := Endpoint{URL: "nats://h:1", Campaign: "c-1"}
	for got, want := range map[string]string{
		ep.UnitsStream():                  "CONFORM_FUZZ_c-1_UNITS",
		ep.FindingsStream():               "CONFORM_FUZZ_c-1_FINDINGS",
		ep.DoneStream():                   "CONFORM_FUZZ_c-1_DONE",
		ep.subject("units", token("a.b")): "conform.fuzz.c-1.units.YS5i",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for _, id := range []string{"wire.read-frames/000017", "a b.c*>", "\u00e9"} {
		got, ok := idFromSubject(ep.subject("done", token(id)))
		if !ok || got != id {
			t.Errorf("idFromSubject(subject(token(%q))) = %q, %v", id, got, ok)
		}
	}
}
