package cases

import "google.golang.org/protobuf/proto"

// Batches are bounded by count and by encoded size, so that a request and
// its answer (which may echo the inputs' bytes) stay far below conform.v1's
// 16 MiB frame ceiling.
const (
	MaxBatchInputs = 256
	MaxBatchBytes  = 2 << 20
)

// Batched splits inputs into requests within both bounds, sends each with
// send, and checks that each answer is the op's result (send's ok) and holds
// one output per input; a SUT that breaks either ends the case as a
// protocol error.
func Batched[I proto.Message, O any](t *T, op string, inputs []I, send func([]I) ([]O, bool)) []O {
	var outs []O
	for start := 0; start < len(inputs); {
		end, size := start, 0
		for end < len(inputs) && end-start < MaxBatchInputs && (end == start || size+proto.Size(inputs[end]) <= MaxBatchBytes) {
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
