package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// GraphParts are the swappable parts of the libtracer graph model (profile graph).
type GraphParts struct{}

// referenceGraph returns the reference's graph parts.
func referenceGraph(im *Impl) GraphParts { return GraphParts{} }

// graph answers one graph op.
func (im *Impl) graph(_ context.Context, op *conformpb.GraphOp) (*conformpb.GraphResult, error) {
	return nil, &UnimplementedError{Detail: "graph ops are not implemented yet"}
}
