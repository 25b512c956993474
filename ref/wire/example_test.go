package wire_test

import (
	"fmt"

	"github.com/conform-suite/conform/ref/wire"
)

// A Reader turns the bytes of a connection into frames however they are
// chunked: here the §4.5 sample arrives split in two reads, followed by the
// empty frame and three bytes of a prefix the connection never completes.
func ExampleReader() {
	conn := [][]byte{
		{0x00, 0x00, 0x00, 0x12, 0x12, 0x10, 0x09, 0x01},
		{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x01, 0x1a, 0x01, 0x41, 0x28, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
	}
	var r wire.Reader
	for i, read := range conn {
		r.Write(read)
		for {
			payload, ok, err := r.Next()
			if err != nil {
				fmt.Println("framing error, closing:", err)
				return
			}
			if !ok {
				break // not yet: wait for the next read
			}
			fmt.Printf("read %d: frame of %d bytes [% x]\n", i, len(payload), payload)
		}
	}
	fmt.Println("at end of stream:", r.End(), "with", r.Buffered(), "bytes buffered")
	// Output:
	// read 1: frame of 18 bytes [12 10 09 01 00 00 00 00 00 00 00 10 01 1a 01 41 28 01]
	// read 1: frame of 0 bytes []
	// at end of stream: ranvier frame: stream ended inside a frame with 3 bytes buffered
}

// AppendFrame frames a payload; a Subscriber receives frames and says what
// it did with each.
func ExampleSubscriber() {
	var conn []byte
	for _, payload := range [][]byte{
		{0x12, 0x03, 0x1a, 0x01, 0x41}, // Frame{sample{values: "A"}}
		{},                             // Frame{}: no variant
		{0x12, 0x10, 0x09},             // ends mid-field
	} {
		conn, _ = wire.AppendFrame(conn, payload)
	}
	var s wire.Subscriber
	s.Receive(conn, func(ev wire.Event) {
		fmt.Println(ev.Index, ev.Action, ev.Frame.GetSample().GetValues())
	})
	fmt.Println("unreadable:", s.Unreadable(), "end:", s.End())
	// Output:
	// 0 delivered [65]
	// 1 skipped_no_variant []
	// 2 skipped_undecodable []
	// unreadable: 2 end: <nil>
}
