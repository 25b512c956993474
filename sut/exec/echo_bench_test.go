package exec_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/suites"
	"google.golang.org/protobuf/proto"
)

// envEcho makes the test binary a raw frame echo: it reads each frame from
// stdin and writes the same bytes back, with no decoding. It is the floor
// that the exec carrier's round trip is measured against: two processes, two
// pipes, one frame each way, nothing else.
const envEcho = "CONFORM_TEST_ECHO"

// init runs before exec_test.go's TestMain, so the echo child never reaches
// the test framework.
func init() {
	if os.Getenv(envEcho) == "" {
		return
	}
	if err := echo(os.Stdin, os.Stdout); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// echo copies frames from r to w one at a time, as a SUT answers one
// request at a time.
func echo(r io.Reader, w io.Writer) error {
	buf := make([]byte, 64<<10)
	for {
		if _, err := io.ReadFull(r, buf[:wire.PrefixLen]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(buf[:wire.PrefixLen]))
		if n+wire.PrefixLen > len(buf) {
			buf = make([]byte, n+wire.PrefixLen)
		}
		if _, err := io.ReadFull(r, buf[wire.PrefixLen:wire.PrefixLen+n]); err != nil {
			return err
		}
		if _, err := w.Write(buf[:wire.PrefixLen+n]); err != nil {
			return err
		}
	}
}

// echoChild is a running echo process and the harness's ends of its pipes.
type echoChild struct {
	cmd  *osexec.Cmd
	in   io.WriteCloser
	out  io.ReadCloser
	back []byte
}

func startEcho(b *testing.B, argv ...string) *echoChild {
	b.Helper()
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envEcho+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	e := &echoChild{cmd: cmd, in: in, out: out}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return e
}

// roundTrip sends frame and reads the same number of bytes back.
func (e *echoChild) roundTrip(frame []byte) error {
	if _, err := e.in.Write(frame); err != nil {
		return err
	}
	if cap(e.back) < len(frame) {
		e.back = make([]byte, len(frame))
	}
	_, err := io.ReadFull(e.out, e.back[:len(frame)])
	return err
}

// framed returns req, numbered as a session would, encoded and framed: the
// bytes the exec carrier writes for it.
func framed(b *testing.B, req *conformpb.Request) []byte {
	b.Helper()
	req = proto.Clone(req).(*conformpb.Request)
	req.Id = 1
	payload, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	frame, err := wire.AppendFrame(nil, payload)
	if err != nil {
		b.Fatal(err)
	}
	return frame
}

func batched256Req() *conformpb.Request {
	req := &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}
	frame := []byte{0, 0, 0, 0x12, 0x12, 0x10, 0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 1, 0x1a, 1, 0x41, 0x28, 1}
	for range 256 {
		req.GetReadFrames().Inputs = append(req.GetReadFrames().Inputs, &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: frame[:7]}, {Data: frame[7:]}}})
	}
	return req
}

// BenchmarkRawPipeEcho is the floor for BenchmarkRoundTrip and
// BenchmarkBatched256: the same request frames, echoed by a second process
// over the same kind of pipes, with no protocol work on either side. Two
// echoes are measured: this test binary as a frame-aware echo (a Go process,
// like the reference SUT), and cat(1).
//
// The exec carrier's per-round-trip figure is meant to stay within 2x of the
// frame echo's; the benchmark reports, it does not assert.
func BenchmarkRawPipeEcho(b *testing.B) {
	sizes := []struct {
		name string
		req  *conformpb.Request
	}{
		{"op", decodeReq()},
		{"batched256", batched256Req()},
	}
	children := []struct {
		name string
		argv []string
	}{
		{"frame-echo", []string{os.Args[0]}},
		{"cat", []string{"cat"}},
	}
	for _, ch := range children {
		if _, err := osexec.LookPath(ch.argv[0]); err != nil {
			continue
		}
		for _, sz := range sizes {
			b.Run(ch.name+"/"+sz.name, func(b *testing.B) {
				e := startEcho(b, ch.argv...)
				frame := framed(b, sz.req)
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				for b.Loop() {
					if err := e.roundTrip(frame); err != nil {
						b.Fatal(err)
					}
				}
				if sz.name == "batched256" {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/input")
				}
			})
		}
	}
}

// BenchmarkExecVsEcho measures the exec carrier and the frame echo side by
// side in one benchmark, so the ratio is read off one run: exec/op against
// echo/op, exec/batched256 against echo/batched256.
func BenchmarkExecVsEcho(b *testing.B) {
	ctx := context.Background()
	for _, sz := range []struct {
		name string
		req  func() *conformpb.Request
	}{
		{"op", decodeReq},
		{"batched256", batched256Req},
	} {
		b.Run("exec/"+sz.name, func(b *testing.B) {
			c := start(b, "reference")
			req := sz.req()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Do(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("echo/"+sz.name, func(b *testing.B) {
			e := startEcho(b, os.Args[0])
			frame := framed(b, sz.req())
			b.ReportAllocs()
			for b.Loop() {
				if err := e.roundTrip(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReferenceWork is the reference SUT's own share of an exec round
// trip, without any carrier: decode the request, handle it, encode the
// response, as sut.Serve does in the child. Subtracted from
// BenchmarkExecVsEcho/exec, it leaves what the carrier itself costs.
func BenchmarkReferenceWork(b *testing.B) {
	ctx := context.Background()
	h := suites.Default().Reference()
	for _, sz := range []struct {
		name string
		req  *conformpb.Request
	}{
		{"op", decodeReq()},
		{"batched256", batched256Req()},
	} {
		b.Run(sz.name, func(b *testing.B) {
			payload, err := proto.Marshal(sz.req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				req := new(conformpb.Request)
				if err := proto.Unmarshal(payload, req); err != nil {
					b.Fatal(err)
				}
				resp := h.Handle(ctx, req)
				resp.Id = req.Id
				if _, err := proto.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
