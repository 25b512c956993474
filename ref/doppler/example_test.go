package doppler_test

import (
	"fmt"

	"github.com/conform-suite/conform/ref/doppler"
)

// A receiver checks each message before reading anything else from it.
func ExampleCheck() {
	f, _ := doppler.NewFrame(doppler.TypeCF32, doppler.BigEndian, make([]byte, 8*4))
	msg := f.AppendMessage(nil, doppler.BigEndian)

	fmt.Println(doppler.Check(msg, doppler.BigEndian))
	fmt.Println(doppler.Check(msg, doppler.LittleEndian))
	fmt.Println(doppler.Check(msg[:len(msg)-1], doppler.BigEndian))
	// Output:
	// accepted
	// cross-endian
	// payload-mismatch
}

// A frame too large for the connection is chunked by PUB and rejoined by
// every subscriber; PUSH refuses it instead.
func ExampleReassembler() {
	s := doppler.NewSender(doppler.LittleEndian, 1024)
	f, _ := doppler.NewFrame(doppler.TypeCF64, doppler.LittleEndian, make([]byte, 16*200))
	msgs, _ := s.Publish(f)
	fmt.Println(len(msgs), "chunks")

	var r doppler.Reassembler
	for _, m := range msgs {
		if got, ok, err := r.Add(m); ok && err == nil {
			fmt.Println("frame", got.Header.Sequence, "of", got.Header.NumSamples, "samples")
		}
	}

	_, err := s.Send(f)
	fmt.Println(err)
	// Output:
	// 4 chunks
	// frame 0 of 200 samples
	// doppler: push: DP_ERR_TOO_LARGE [frame 1]: 3264 header and payload bytes exceed max_payload 1024, and PUSH does not chunk
}
