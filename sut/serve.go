package sut

import (
	"context"
	"errors"
	"fmt"
	"io"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
)

// A Handler is the SUT's side of conform.v1: an implementation that answers
// requests. conform's reference and mutants are Handlers.
type Handler interface {
	Hello() *conformpb.Hello
	// Handle answers one request. It sets the result; Serve sets the id.
	Handle(ctx context.Context, req *conformpb.Request) *conformpb.Response
}

// Serve runs the SUT's end of a conform.v1 session on a byte stream: it
// answers the opening request with h's Hello, then each request with h's
// response, in enc. It returns nil when r ends cleanly.
func Serve(ctx context.Context, r io.Reader, w io.Writer, h Handler, enc Encoding) error {
	var fr wire.Reader
	buf := make([]byte, 64<<10)
	opened := false
	for {
		payload, ok, err := fr.Next()
		if err != nil {
			return err
		}
		if !ok {
			n, err := r.Read(buf)
			fr.Write(buf[:n])
			if err != nil && n == 0 {
				if errors.Is(err, io.EOF) {
					return fr.End()
				}
				return err
			}
			continue
		}
		// Whatever the opening request holds, the answer is Hello.
		answer, err := Answer(ctx, h, enc, payload, !opened)
		opened = true
		if err != nil {
			return err
		}
		if err := wire.WriteFrame(ctx, w, answer); err != nil {
			return err
		}
	}
}

// Answer returns h's encoded answer to one request payload in enc: its
// Hello for the opening request, else its response carrying the request's
// id. A request that does not decode is answered with an Error.
func Answer(ctx context.Context, h Handler, enc Encoding, payload []byte, opening bool) ([]byte, error) {
	var (
		answer []byte
		err    error
	)
	if opening {
		answer, err = enc.Marshal(h.Hello())
	} else {
		req := new(conformpb.Request)
		var resp *conformpb.Response
		if uerr := enc.Unmarshal(payload, req); uerr != nil {
			resp = &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: uerr.Error()}}}
		} else {
			resp = h.Handle(ctx, req)
		}
		resp.Id = req.Id
		answer, err = enc.Marshal(resp)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding answer: %w", err)
	}
	return answer, nil
}
