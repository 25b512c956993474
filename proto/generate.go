// Package proto holds the .proto sources of Ranvier's messages and of the
// conform.v1 harness protocol, and their generated Go code.
//
// The generated code is checked in. To regenerate it, install protoc (Debian:
// apt-get install protobuf-compiler) and protoc-gen-go at the version in
// go.mod (go install google.golang.org/protobuf/cmd/protoc-gen-go), then run
// go generate ./proto/...
package proto

//go:generate protoc --go_out=. --go_opt=module=github.com/conform-suite/conform/proto -I . ranvier/message/v1/message.proto ranvier/control/v1/control.proto conform/v1/conform.proto conform/v1/tlv.proto conform/v1/doppler.proto conform/v1/live.proto conform/v1/control.proto conform/v1/graph.proto
