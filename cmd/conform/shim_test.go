package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/conform-suite/conform/internal/hang"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut"
	sutexec "github.com/conform-suite/conform/sut/exec"
)

// shimDoc is the page that states the rules a shim follows, which the
// tests below hold to the code.
var shimDoc = filepath.Join("..", "..", "docs", "shim.md")

func readShimDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(shimDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestShimRulesAnswers parses every row of docs/shim.md's table of answers
// as the harness parses a SUT's answer, and checks that conform accepts or
// refuses it as the row says — for the reason it gives, and, where the row
// says "the same answer", into the same message as the accepted row above.
func TestShimRulesAnswers(t *testing.T) {
	doc := readShimDoc(t)
	_, table, ok := strings.Cut(doc, "<!-- shim-rules:answers -->")
	table, _, ok2 := strings.Cut(table, "<!-- /shim-rules:answers -->")
	if !ok || !ok2 {
		t.Fatal("docs/shim.md has no table between <!-- shim-rules:answers --> and <!-- /shim-rules:answers -->")
	}
	row := regexp.MustCompile("^\\| `(.+)` \\| (accepted|refused)(?:: (.+?))?( \\(a Hello\\))? \\|$")
	var last proto.Message
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("a row this test cannot read: %s", line)
			continue
		}
		rows++
		answer, verdict, reason, isHello := m[1], m[2], m[3], m[4] != ""
		var msg proto.Message = new(conformpb.Response)
		if isHello {
			msg = new(conformpb.Hello)
		}
		err := sut.JSON.Unmarshal([]byte(answer), msg)
		switch {
		case verdict == "accepted" && err != nil:
			t.Errorf("%s: the page says accepted; conform refuses it: %v", answer, err)
		case verdict == "refused" && err == nil:
			t.Errorf("%s: the page says refused; conform accepts it as %v", answer, msg)
		case verdict == "refused":
			want := reason
			if f := regexp.MustCompile("^unknown field `(.+)`$").FindStringSubmatch(reason); f != nil {
				want = fmt.Sprintf("unknown field %q", f[1])
			} else if reason == "two results" {
				want = "oneof conform.v1.Response.result is already set"
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the page says refused (%s); conform's error is %q, without %q", answer, reason, err, want)
			}
		case strings.HasPrefix(reason, "the same answer"):
			if last == nil || !proto.Equal(msg, last) {
				t.Errorf("%s: the page says it is the answer above; conform reads %v, and the answer above as %v", answer, msg, last)
			}
		default:
			last = msg
		}
	}
	if rows < 10 {
		t.Errorf("only %d rows read from the table", rows)
	}
}

// TestShimRulesRequests: the requests docs/shim.md shows are what the
// harness sends for them — lowerCamelCase names, 64-bit integers as
// strings, base64, defaults omitted, a present optional zero given.
func TestShimRulesRequests(t *testing.T) {
	doc := readShimDoc(t)
	depth := uint32(0)
	want := []*conformpb.Request{
		{Id: 7, Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{
			Chunks: []*conformpb.Blob{
				{Data: []byte{0xfb, 0xff}},
				{Fill: &conformpb.Fill{Length: wire.MaxPayload, Pattern: []byte{1}}},
			},
			EndOfStream: true,
		}}}}},
		{Id: 8, Op: &conformpb.Request_DriveQueue{DriveQueue: &conformpb.DriveQueue{Inputs: []*conformpb.QueueInput{
			{Name: "gaze", Depth: &depth},
			{Name: "gaze"},
		}}}},
	}
	blocks := regexp.MustCompile("(?s)<!-- shim-rules:request -->\n```json\n(.*?)\n```").FindAllStringSubmatch(doc, -1)
	if len(blocks) != len(want) {
		t.Fatalf("docs/shim.md shows %d requests after <!-- shim-rules:request -->, this test knows %d", len(blocks), len(want))
	}
	for i, b := range blocks {
		sent, err := sut.JSON.Marshal(want[i])
		if err != nil {
			t.Fatal(err)
		}
		// protojson varies its white space on purpose: compare values.
		var got, shown any
		if err := json.Unmarshal(sent, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(b[1]), &shown); err != nil {
			t.Fatalf("request %d on the page is not JSON: %v", i, err)
		}
		if !reflect.DeepEqual(got, shown) {
			t.Errorf("the page shows\n%s\nthe harness sends\n%s", b[1], sent)
		}
	}
}

// TestShimRulesFigures: the figures docs/shim.md states are conform's.
func TestShimRulesFigures(t *testing.T) {
	doc := strings.Join(strings.Fields(readShimDoc(t)), " ")
	kib := func(n int) string { return fmt.Sprintf("%d KiB", n>>10) }
	for _, f := range []struct{ what, want string }{
		{"the frame ceiling", fmt.Sprintf("at most %s bytes", commas(wire.MaxPayload))},
		{"the stderr tail kept", "keeps the last " + kib(sutexec.StderrLimit)},
		{"the stderr tail recorded", "keeps the last " + kib(reports.MaxStderr)},
		{"the Error text kept", "keeps the first " + kib(reports.MaxMessage)},
		{"the default timeout", fmt.Sprintf("(`--timeout`, %v by default)", runner.DefaultTimeout)},
		{"the timeouts before lost", fmt.Sprintf("After %d ops in a row go unanswered", runner.DefaultMaxTimeouts)},
	} {
		if !strings.Contains(doc, f.want) {
			t.Errorf("%s: docs/shim.md does not say %q", f.what, f.want)
		}
	}
}

// commas writes n with thousands separators, as the docs do.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// scriptedSUT is a SUT in a goroutine that speaks conform.v1 in JSON on a
// pair of pipes, answering each frame with the next answer of a script;
// it records the frames it was sent.
type scriptedSUT struct {
	sent chan []byte
}

func startScripted(t *testing.T, answers ...string) (*sut.Session, error, *scriptedSUT) {
	t.Helper()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reqR.Close(); reqW.Close(); ansR.Close(); ansW.Close() })
	s := &scriptedSUT{sent: make(chan []byte, len(answers))}
	go func() {
		for _, a := range answers {
			var prefix [4]byte
			if _, err := io.ReadFull(reqR, prefix[:]); err != nil {
				return
			}
			body := make([]byte, binary.BigEndian.Uint32(prefix[:]))
			if _, err := io.ReadFull(reqR, body); err != nil {
				return
			}
			s.sent <- body
			frame, _ := wire.AppendFrame(nil, []byte(a))
			if _, err := ansW.Write(frame); err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), hang.Guard(t, time.Minute))
	t.Cleanup(cancel)
	sess, err := sut.Open(ctx, ansR, reqW)
	return sess, err, s
}

// TestShimRulesSession: the rules of the session that are not about
// parsing — Hello first, answering the empty opening frame; the id echoed,
// as a string or a number; exactly one result.
func TestShimRulesSession(t *testing.T) {
	hello := `{"implementation":"scripted","profiles":["wire"]}`
	req := func() *conformpb.Request {
		return &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}
	}
	ctx := context.Background()

	t.Run("hello first, ids echoed", func(t *testing.T) {
		sess, err, s := startScripted(t, hello, `{"id":"1","unimplemented":{}}`, `{"id":2,"unimplemented":{}}`)
		if err != nil {
			t.Fatal(err)
		}
		if first := <-s.sent; len(first) != 0 {
			t.Errorf("the harness opened with %q, not an empty frame", first)
		}
		if sess.Encoding() != sut.JSON {
			t.Errorf("a Hello starting with { is sniffed as %v", sess.Encoding())
		}
		for i := 1; i <= 2; i++ {
			resp, err := sess.Do(ctx, req())
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if sent := <-s.sent; !bytes.Contains(sent, []byte(fmt.Sprintf(`"id":"%d"`, i))) {
				t.Errorf("request %d was sent as %s: want the id as a string", i, sent)
			}
			if resp.GetUnimplemented() == nil {
				t.Errorf("request %d: %v", i, resp)
			}
		}
	})
	for _, tc := range []struct{ name, answer, want string }{
		{"another id", `{"id":"9","unimplemented":{}}`, "answer carries id 9, the request was 1"},
		{"no result", `{"id":"1"}`, "answer to request 1 carries no result"},
		{"a null result", `{"id":"1","readFrames":null}`, "answer to request 1 carries no result"},
		{"an unknown field", `{"id":"1","unimplemented":{},"note":"x"}`, `unknown field "note"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, err, _ := startScripted(t, hello, tc.answer)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sess.Do(ctx, req())
			var se *sut.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &se) || se.Kind != reports.KindProtocol {
				t.Errorf("answer %s: error %v, want a protocol error saying %q", tc.answer, err, tc.want)
			}
		})
	}
	t.Run("a Hello that does not parse", func(t *testing.T) {
		_, err, _ := startScripted(t, `{"implementation":"scripted","profiles":["wire"],"debug":true}`)
		if err == nil || !strings.Contains(err.Error(), "the SUT's first answer is not a Hello") {
			t.Errorf("error %v, want the Hello refused", err)
		}
	})
}

// answersSUT answers readFrames with Error and every other op with
// Unimplemented.
type answersSUT struct{}

func (answersSUT) Hello() *conformpb.Hello {
	return &conformpb.Hello{Implementation: "answers", Profiles: []string{"wire"}}
}

func (answersSUT) Handle(_ context.Context, req *conformpb.Request) *conformpb.Response {
	if req.GetReadFrames() != nil {
		return &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: "the binding threw"}}}
	}
	return &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{Detail: "not yet"}}}
}

// TestShimRulesUnimplementedAndError: an op answered Unimplemented skips
// its cases and leaves a declared profile incomplete (exit 1); one
// answered Error ends its cases in error, kind op-error, and the session
// goes on.
func TestShimRulesUnimplementedAndError(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.json")
	code, out, errOut := runMain(t, "run", "--sut", serveTCP(t, answersSUT{}), "--profile", "wire", "--json", rec)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	r := readRecord(t, rec)
	var errored, skipped int
	for _, c := range r.Cases {
		switch c.Outcome {
		case reports.Error:
			errored++
			if c.ErrorKind != reports.KindOpError || c.Message != "the SUT answered Error: the binding threw" {
				t.Errorf("%s: error kind %q, message %q", c.ID, c.ErrorKind, c.Message)
			}
		case reports.Skip:
			skipped++
			if c.Message != "unimplemented: not yet" {
				t.Errorf("%s: skip message %q", c.ID, c.Message)
			}
		default:
			t.Errorf("%s: %s", c.ID, c.Outcome)
		}
	}
	if errored == 0 || skipped == 0 || r.Lost != nil {
		t.Errorf("%d errors, %d skips, lost %v: want both, and the SUT never lost", errored, skipped, r.Lost)
	}
	if len(r.Summary.ByProfile) != 1 || r.Summary.ByProfile[0].MustUnimplemented == 0 {
		t.Errorf("profile verdicts %+v: want wire with unimplemented MUST cases", r.Summary.ByProfile)
	}
}

// TestShimRulesSessionEnd: over exec: conform ends a session by killing
// the SUT, not by closing its standard input. The SUT is conform's own
// reference on stdio, which exits when its input ends, wrapped in a shell
// that marks that exit; run by hand with its input closed it marks it,
// run by conform it does not.
func TestShimRulesSessionEnd(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "ended")
	wrapper := fmt.Sprintf("%s reference --json; echo eof > %s", bin, mark)

	// By hand: the input ends at once, the reference exits, the mark is
	// written.
	cmd := exec.Command("sh", "-c", wrapper)
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the wrapper by hand: %v\n%s", err, out)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the wrapper leaves no mark when its input ends: %v", err)
	}
	os.Remove(mark)

	r := conform(t, 2*time.Minute, nil, "run", "--sut", "exec:sh -c '"+wrapper+"'", "--case", "wire/1.3/clean-end")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the SUT saw its input end: docs/shim.md says conform kills it instead")
	}
}
