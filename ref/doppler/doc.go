// Package doppler is the reference codec for doppler's streaming contract
// (doppler-streaming, with the byte layout pinned in
// the doppler pins (docs/requirements.md)): the 64-byte dp_header_t v2, the receiver's five
// header checks, chunking and reassembly, the per-socket sequence, and the
// subject and JetStream names derived from an endpoint.
//
// It is the oracle conform compares implementations against, so it favours
// saying exactly why a message was refused over convenience: every refusal of
// the header check is a distinct [Verdict], and every error is an [*Error]
// carrying a doppler [Code] and its context.
//
// A reader new to the package can take the files in this order:
//
//   - reconstructed.go: every wire constant, each marked pinned or
//     reconstructed with its section;
//   - order.go, types.go, header.go, frame.go: byte orders, frame types,
//     encoding;
//   - check.go: the five receiver checks (doppler §3);
//   - chunk.go, reassemble.go: splitting and rejoining large frames (§4);
//   - sender.go: the sequence counter and PUSH's size refusal (§4, §7);
//   - endpoint.go: subjects and JetStream objects (§5);
//   - errors.go: codes and the error type.
//
// Nothing in the package talks to NATS; the roles live elsewhere and use this
// package for every byte they put on or take off the wire.
package doppler
