package gen

import (
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// The live suite's inputs.

// PublishStream is the stream name a LivePublisher evaluator subscribes
// to; the stream a generated script opens takes another name now and then.
const PublishStream = "fuzz"

// LivePublish generates an input of live.publish, a publish script: one
// stream opened, up to a dozen publish calls over the publisher's two
// streams and that one, from one to four threads.
func LivePublish(g *G) proto.Message {
	op := &conformpb.LivePublish{Open: []*conformpb.LiveStream{{Name: PublishStream, Node: "n2"}}}
	if g.Chance(0.3) {
		op.Open[0].Name = "other" // a stream the subscriber did not ask for
	}
	if g.Chance(0.3) {
		op.Concurrency = uint32(2 + g.IntN(3))
	}
	for n := g.IntN(12); n > 0; n-- {
		s := &conformpb.LivePublishSample{Stream: uint32(g.IntN(3)), Values: g.Raw(8), Count: uint32(g.IntN(3))}
		if g.Chance(0.3) {
			s.SourceTimestampNs = uint64(1 + g.IntN(1000))
		}
		op.Samples = append(op.Samples, s)
	}
	return op
}
