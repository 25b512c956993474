package cases

import (
	"fmt"

	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/proto"
)

// Batches are bounded by count and by encoded size, so that a request and
// its answer (which may echo the inputs' bytes) stay far below conform.v1's
// 16 MiB frame ceiling.
const (
	MaxBatchInputs = 256
	MaxBatchBytes  = 2 << 20
)

// LimitShare is the inverse of the share of a carrier's message limit (a
// NATS broker's max_payload) that the inputs of one request may take, as
// proto.Size counts them. The rest is room for what the limit also has to
// hold: the request in JSON, which writes bytes as base64 (4/3 of their
// size) and names every field, and an answer larger than its request (a
// decoded message rendered as JSON in a string, frames a SUT generates).
// With this share the reference passes the catalogue over a broker with
// nats-server's default max_payload of 1 MiB, in either encoding.
const LimitShare = 4

// BatchBytes returns how many bytes of inputs, as proto.Size counts them,
// one request may carry on a carrier whose messages are limited to
// maxMessage bytes; zero means the carrier has no limit of its own below
// conform.v1's ceiling. On a carrier with a limit, a single input above
// maxMessage/LimitShare cannot be sent at all.
func BatchBytes(maxMessage int) int {
	if maxMessage <= 0 {
		return MaxBatchBytes
	}
	return min(MaxBatchBytes, max(1, maxMessage/LimitShare))
}

// Batched splits inputs into requests within both bounds, sends each with
// send, and checks that each answer is the op's result (send's ok) and holds
// one output per input; a SUT that breaks either ends the case as a
// protocol error.
//
// On a carrier that limits the size of a message (see T.LimitMessages), the
// bytes of one request's inputs are bounded by BatchBytes of that limit, and
// an input that does not fit even alone ends the case as a skip, before
// anything is sent: the carrier, not the SUT, cannot carry it.
func Batched[I proto.Message, O any](t *T, op string, inputs []I, send func([]I) ([]O, bool)) []O {
	budget := BatchBytes(t.maxMessage)
	if t.maxMessage > 0 {
		for _, in := range inputs {
			if n := proto.Size(in); n > t.maxMessage/LimitShare {
				panic(&Abort{Outcome: reports.Skip, Message: tooLarge(op, n, t.maxMessage)})
			}
		}
	}
	var outs []O
	for start := 0; start < len(inputs); {
		end, size := start, 0
		for end < len(inputs) && end-start < MaxBatchInputs && (end == start || size+proto.Size(inputs[end]) <= budget) {
			size += proto.Size(inputs[end])
			end++
		}
		b := inputs[start:end]
		o, ok := send(b)
		if !ok {
			t.Protocolf("%s answered with the result of another op", op)
		}
		if len(o) != len(b) {
			t.Protocolf("%s: %d inputs, %d outputs", op, len(b), len(o))
		}
		outs = append(outs, o...)
		start = end
	}
	return outs
}

// tooLarge says why an input of n bytes was not sent on a carrier whose
// messages are limited to limit bytes, and what would let it through.
func tooLarge(op string, n, limit int) string {
	return fmt.Sprintf("a %s input of %s needs a message limit of at least %s on this carrier "+
		"(room for its request and its answer), and the limit is %s. "+
		"Over NATS the limit is the broker's max_payload: raise it in nats-server's configuration "+
		"(max_payload: 64MB, what conform's embedded broker allows)",
		op, size(n), size(n*LimitShare), size(limit))
}

// size writes a byte count for a person: 4.0 MiB, 512 KiB, 900 B.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
