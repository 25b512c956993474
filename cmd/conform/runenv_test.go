package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunEnvUsage: a malformed live-case flag is a usage error named in one
// line, before any SUT is started.
func TestRunEnvUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sut", "builtin:reference", "--nats-url", "http://127.0.0.1:4222"}, "want nats://host:port"},
		{[]string{"--sut", "builtin:reference", "--nats-url", "nats://127.0.0.1"}, "want nats://host:port"},
		{[]string{"--peer", "127.0.0.1:7000", "--profile", "ranvier-publisher"}, "want tcp://host:port"},
		{[]string{"--peer", "tcp://127.0.0.1:7000"}, "needs --profile"},
		{[]string{"--node-cmd", "'unterminated", "--profile", "ranvier-node"}, "not a command line"},
		{[]string{"--profile", "wire"}, "--sut is required"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"run"}, tc.args...), nil, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

func TestRunEnvBroker(t *testing.T) {
	env, err := runEnv("nats://127.0.0.1:4999", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	u, err := env.Broker(context.Background())
	if err != nil || u != "nats://127.0.0.1:4999" {
		t.Errorf("named broker: %q, %v", u, err)
	}
	env, err = runEnv("", "tcp://127.0.0.1:7000", "node --flag 'a b'")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	if env.Peer != "tcp://127.0.0.1:7000" || strings.Join(env.NodeCommand, "|") != "node|--flag|a b" {
		t.Errorf("peer %q, node command %q", env.Peer, env.NodeCommand)
	}
	u, err = env.Broker(context.Background())
	if err != nil || !strings.HasPrefix(u, "nats://127.0.0.1:") {
		t.Errorf("embedded broker: %q, %v", u, err)
	}
}
