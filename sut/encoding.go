package sut

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Encoding is how a session's messages are encoded: a SUT may speak the
// protobuf binary encoding or its canonical JSON mapping.
type Encoding int

const (
	Binary Encoding = iota
	JSON
)

func (e Encoding) String() string {
	if e == JSON {
		return "json"
	}
	return "binary"
}

// Sniff returns the encoding of a SUT's first answer, its Hello. A JSON
// object starts with '{' (after optional white space); a binary Hello never
// does, because 0x7b would be field 15 with the deprecated group wire type.
func Sniff(hello []byte) Encoding {
	if t := bytes.TrimLeft(hello, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return JSON
	}
	return Binary
}

// Marshal encodes m in e.
func (e Encoding) Marshal(m proto.Message) ([]byte, error) {
	if e == JSON {
		return protojson.Marshal(m)
	}
	return proto.Marshal(m)
}

// Unmarshal decodes b, in e, into m. JSON fields the harness does not know
// are rejected, so that a misspelt field in a shim is an error rather than a
// silently empty answer.
func (e Encoding) Unmarshal(b []byte, m proto.Message) error {
	var err error
	if e == JSON {
		err = protojson.Unmarshal(b, m)
	} else {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		return fmt.Errorf("decoding %s %s: %w", e, m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}
