package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// TLVParts are the TLV suite's swappable parts of an Impl.
type TLVParts struct{}

// referenceTLV returns the reference's TLV parts and declares the profile.
func referenceTLV(im *Impl) TLVParts { return TLVParts{} }

// tlv answers one TLV op.
func (im *Impl) tlv(ctx context.Context, op *conformpb.TlvOp) (*conformpb.TlvResult, error) {
	return nil, &UnimplementedError{Detail: "the TLV ops are not implemented yet"}
}
