package impl

import (
	"context"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// TestFillsAreBoundedPerRequest: fills are a few bytes each on the wire, so
// one request could describe terabytes; the request is refused as an Error
// once its fills pass MaxExpansion, before the bytes are made.
func TestFillsAreBoundedPerRequest(t *testing.T) {
	fill := &conformpb.Blob{Fill: &conformpb.Fill{Length: MaxBlob, Pattern: []byte{0xff}}} // a TooLarge prefix: the reader holds nothing
	var in conformpb.ReadInput
	for range MaxExpansion/MaxBlob + 1 {
		in.Chunks = append(in.Chunks, fill)
	}
	resp := Reference().Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_ReadFrames{
		ReadFrames: &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{&in}},
	}})
	if e := resp.GetError(); e == nil || !strings.Contains(e.GetMessage(), "expand beyond") {
		t.Fatalf("got %v, want an Error naming the expansion bound", resp)
	}
	// Within the bound, the same chunks are read.
	in.Chunks = in.Chunks[:2]
	resp = Reference().Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_ReadFrames{
		ReadFrames: &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{&in}},
	}})
	if resp.GetReadFrames() == nil {
		t.Fatalf("two fills refused: %v", resp)
	}
}
