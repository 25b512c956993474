package meaning_test

import (
	"fmt"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
)

// A case judges a SUT's answer against the answer it expects through Diff,
// so that it fails only on what the documents fix, at the level they fix
// it. Here the reader was fed a prefix over the ceiling: end and claimed
// are judged, buffered means nothing on TOO_LARGE, and the optional
// trailing yields entry may be absent.
func ExampleDiff() {
	in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0x01, 0x00, 0x00, 0x01}}}, EndOfStream: true}
	want := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 16777217}
	got := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}, {}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 16777216, Buffered: 4}
	for _, d := range meaning.Diff(in, want, got, meaning.Options{}) {
		fmt.Println(d)
	}
	// Output:
	// claimed: want 16777217, got 16777216 (MUST)
}

// A case that judges part of an answer keeps the differences under the
// fields it is about, and a SHOULD case those at its level.
func ExampleDifferences_Under() {
	want := &conformpb.QueueOutput{Depth: 4, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST, Dropped: 6, Peak: 4}
	got := &conformpb.QueueOutput{Depth: 4, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST, Dropped: 5, Peak: 3}
	in := &conformpb.QueueInput{Depth: new(uint32), Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
	*in.Depth = 4
	ds := meaning.Diff(in, want, got, meaning.Options{})
	fmt.Println(ds.Under("dropped"))
	fmt.Println(ds.At(meaning.SHOULD))
	// Output:
	// dropped: want 6, got 5 (MUST)
	// peak: want 4, got 3 (SHOULD)
}

// The declaration of one field, as docs/fields.md prints it.
func ExampleOf() {
	f, _ := meaning.Of("conform.v1.ReadOutput.buffered")
	fmt.Println(f.Kind, f.Describe())
	// Output:
	// judged SHOULD when end is WAITING or TRUNCATED
}
