package cases_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/proto"
)

// blobs returns n inputs of size bytes each.
func blobs(n, size int) []*conformpb.Blob {
	out := make([]*conformpb.Blob, n)
	for i := range out {
		out[i] = &conformpb.Blob{Data: make([]byte, size)}
	}
	return out
}

// batched runs Batched over inputs on a carrier limited to limit bytes
// (zero: none), answering each input with its own size, and returns the
// outputs, the size in bytes of the inputs of each request sent, and the
// Abort that ended the case, if any.
func batched(limit int, inputs []*conformpb.Blob) (outs []int, requests []int, abort *cases.Abort) {
	t := cases.NewT(context.Background(), &conformpb.Hello{}, 1, nil)
	t.LimitMessages(limit)
	defer func() {
		if p := recover(); p != nil {
			if !errors.As(p.(error), &abort) {
				panic(p)
			}
		}
	}()
	outs = cases.Batched(t, "read_frames", inputs, func(b []*conformpb.Blob) ([]int, bool) {
		n := 0
		var o []int
		for _, in := range b {
			n += proto.Size(in)
			o = append(o, len(in.Data))
		}
		requests = append(requests, n)
		return o, true
	})
	return outs, requests, nil
}

func TestBatchedSizesRequestsToTheCarrier(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		limit    int
		inputs   []*conformpb.Blob
		maxBytes int // bound on the inputs' bytes of any request
		requests int
	}{
		// Without a limit, the bounds are conform.v1's: 256 inputs, 2 MiB.
		{"no limit, by count", 0, blobs(600, 10), 256 * 12, 3},
		{"no limit, by bytes", 0, blobs(40, 100<<10), cases.MaxBatchBytes, 2},
		{"no limit, one large input alone", 0, blobs(1, 4*mib), 4*mib + 8, 1},
		// A broker's 64 MiB changes nothing.
		{"64 MiB broker", 64 * mib, blobs(40, 100<<10), cases.MaxBatchBytes, 2},
		// nats-server's default 1 MiB: a quarter of it per request.
		{"1 MiB broker", mib, blobs(40, 100<<10), mib / cases.LimitShare, 20},
		{"1 MiB broker, an input at the share", mib, blobs(3, mib/cases.LimitShare-4), mib / cases.LimitShare, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outs, requests, abort := batched(tc.limit, tc.inputs)
			if abort != nil {
				t.Fatalf("aborted: %v", abort)
			}
			if len(outs) != len(tc.inputs) {
				t.Fatalf("%d outputs for %d inputs", len(outs), len(tc.inputs))
			}
			for i, o := range outs {
				if o != len(tc.inputs[i].Data) {
					t.Fatalf("output %d answers another input", i)
				}
			}
			if len(requests) != tc.requests {
				t.Errorf("%d requests, want %d", len(requests), tc.requests)
			}
			for i, n := range requests {
				if n > tc.maxBytes {
					t.Errorf("request %d carries %d bytes of inputs, above %d", i, n, tc.maxBytes)
				}
			}
		})
	}
}

// TestBatchedSkipsWhatCannotFit: an input that cannot fit the carrier's
// limit even alone ends the case as a skip that says why and what to raise,
// before anything is sent — never as an error of the SUT.
func TestBatchedSkipsWhatCannotFit(t *testing.T) {
	inputs := append(blobs(3, 10), &conformpb.Blob{Data: make([]byte, 4<<20)})
	_, requests, abort := batched(1<<20, inputs)
	if abort == nil {
		t.Fatal("the case went on")
	}
	if abort.Outcome != reports.Skip || abort.Unimplemented {
		t.Errorf("outcome %s (unimplemented %v), want a skip", abort.Outcome, abort.Unimplemented)
	}
	for _, want := range []string{"read_frames input of 4.0 MiB", "at least 16.0 MiB", "limit is 1.0 MiB", "max_payload"} {
		if !strings.Contains(abort.Message, want) {
			t.Errorf("reason %q does not say %q", abort.Message, want)
		}
	}
	if len(requests) != 0 {
		t.Errorf("%d requests were sent before the skip", len(requests))
	}
}

func TestBatchBytes(t *testing.T) {
	for limit, want := range map[int]int{
		0:        cases.MaxBatchBytes,
		-1:       cases.MaxBatchBytes,
		1 << 20:  1 << 18,
		64 << 20: cases.MaxBatchBytes,
		3:        1,
	} {
		if got := cases.BatchBytes(limit); got != want {
			t.Errorf("BatchBytes(%d) = %d, want %d", limit, got, want)
		}
	}
}
