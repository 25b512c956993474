package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// LiveParts are the swappable parts of the live Ranvier data-plane suite (profiles ranvier-subscriber, ranvier-publisher).
type LiveParts struct{}

// referenceLive returns the reference's live parts.
func referenceLive(im *Impl) LiveParts { return LiveParts{} }

// live answers one live op.
func (im *Impl) live(_ context.Context, op *conformpb.LiveOp) (*conformpb.LiveResult, error) {
	return nil, &UnimplementedError{Detail: "live ops are not implemented yet"}
}
