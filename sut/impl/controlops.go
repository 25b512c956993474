package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// ControlParts are the swappable parts of the live Ranvier control-plane suite (profiles ranvier-node, ranvier-runtime).
type ControlParts struct{}

// referenceControl returns the reference's control parts.
func referenceControl(im *Impl) ControlParts { return ControlParts{} }

// control answers one control op.
func (im *Impl) control(_ context.Context, op *conformpb.ControlOp) (*conformpb.ControlResult, error) {
	return nil, &UnimplementedError{Detail: "control ops are not implemented yet"}
}
