package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// DopplerParts are the doppler suite's swappable parts of an Impl.
type DopplerParts struct{}

// referenceDoppler returns the reference's doppler parts and declares the
// profile.
func referenceDoppler(im *Impl) DopplerParts { return DopplerParts{} }

// doppler answers one doppler op.
func (im *Impl) doppler(ctx context.Context, op *conformpb.DopplerOp) (*conformpb.DopplerResult, error) {
	return nil, &UnimplementedError{Detail: "the doppler ops are not implemented yet"}
}
