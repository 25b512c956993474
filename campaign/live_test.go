package campaign

import (
	"context"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// TestLiveSubscribeReports plays one connection to the reference: a Sample
// frame, a frame that does not decode, then the end of the stream; the
// report must count what arrived.
func TestLiveSubscribeReports(t *testing.T) {
	ref := impl.Reference()
	sample, _ := proto.Marshal(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: &messagepb.Sample{StreamRef: 1, Sequence: 1}}})
	f1, _ := wire.AppendFrame(nil, sample)
	f2, _ := wire.AppendFrame(nil, []byte{0xff, 0xff})
	rep, err := subscribeOnce(context.Background(), [][]byte{f1, f2}, func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		return ref.Handle(ctx, req), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.GetConnections()) != 1 {
		t.Fatalf("report %v: want one connection", rep)
	}
	c := rep.Connections[0]
	if c.Samples != 1 || c.Unreadable != 1 || c.State != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM {
		t.Errorf("connection %v: want 1 sample, 1 unreadable frame, end of stream", c)
	}
}
