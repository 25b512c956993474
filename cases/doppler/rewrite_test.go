package doppler

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// TestRewriteInfoEveryINFO: the proxy filter edits every INFO the server
// sends, the opening one and any later one, and passes a message's payload
// through whole even when its bytes read like an INFO line.
func TestRewriteInfoEveryINFO(t *testing.T) {
	payload := "INFO {\"max_payload\":67108864}\r\n"
	in := "INFO {\"max_payload\":67108864,\"jetstream\":false}\r\n" +
		"PONG\r\n" +
		"MSG a.b 1 " + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n" +
		"INFO {\"max_payload\":67108864,\"jetstream\":true}\r\n" +
		"HMSG a.b 1 12 " + strconv.Itoa(12+len(payload)) + "\r\nNATS/1.0\r\n\r\n" + payload + "\r\n" +
		"PING\r\n"
	want := "INFO {\"jetstream\":false,\"max_payload\":4096}\r\n" +
		"PONG\r\n" +
		"MSG a.b 1 " + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n" +
		"INFO {\"jetstream\":true,\"max_payload\":4096}\r\n" +
		"HMSG a.b 1 12 " + strconv.Itoa(12+len(payload)) + "\r\nNATS/1.0\r\n\r\n" + payload + "\r\n" +
		"PING\r\n"
	filter := rewriteInfo(func(info map[string]any) { info["max_payload"] = 4096 })
	// One byte per read: a line or a payload split anywhere still passes.
	var out bytes.Buffer
	if err := filter(&out, iotest.OneByteReader(strings.NewReader(in))); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("filtered\n%q\nwant\n%q", out.String(), want)
	}
	// A stream cut inside the last payload ends the copy without an error.
	out.Reset()
	if err := filter(&out, strings.NewReader(in[:len(in)-40])); err != nil {
		t.Errorf("a stream cut short: %v", err)
	}
}
