// Package dpnats is the reference implementation of doppler's six streaming
// roles over NATS (doppler-streaming §2, §4–§8): PUB/SUB, REQ/REP
// with its raw-bytes face, and PUSH/PULL on a JetStream work queue. Every
// byte it puts on or takes off the wire goes through package doppler: frames
// are built and chunked by a doppler.Sender, every received message passes
// doppler.Check (and, for SUB, a doppler.Reassembler), and subjects and
// JetStream names come from a doppler.Endpoint.
//
// # Sockets
//
// Each role value is one doppler "socket": it dials its own NATS connection,
// reads max_payload from that connection once at creation (doppler §8, with
// the 1 MiB fallback when the server reports none), and owns the per-socket
// sequence, which starts at 0 and advances once per logical frame however
// many chunks the frame takes (§7). The connection reconnects without limit,
// 100 ms apart, with an 8 MiB reconnect buffer, and subscriptions have no
// pending limits (§8).
//
//	role       constructor      subject or object
//	PUB        NewPublisher     <base>.pub.<type>
//	SUB        NewSubscriber    <base>.pub.<type>, or <base>.pub.* for AnyType
//	REQ        NewRequester     <base>.req
//	REP        NewReplier       <base>.req
//	PUSH       NewPusher        <base>.work.<type>, stream DP_WORK_<base> (created)
//	PULL       NewPuller        stream DP_WORK_<base> (bound), consumer DP_PULL_<base>
//
// # Errors
//
// Every failure is, or wraps, a *doppler.Error whose Code a caller tests with
// errors.Is: DP_ERR_INVALID for a refused message (with the header check's
// Verdict when that check refused it), DP_ERR_TOO_LARGE for a frame PUSH or
// REQ/REP cannot send in one message, DP_ERR_TIMEOUT when a context's
// deadline passes, DP_ERR_INTERRUPTED when a context is cancelled (the Go
// face of §8b's interrupt: a request to stop, not a failure), DP_ERR_CLOSED
// for an operation on a socket this process drained or closed, and DP_ERR
// for a transport failure. A context or NATS error that caused it is wrapped
// too, so errors.Is(err, context.DeadlineExceeded) also holds.
//
// # When a publish has happened (§6b)
//
// Publisher.Send hands the frame to the NATS client and returns; the client
// writes it in the background. Publisher.Flush is the round trip that says
// the server has everything sent so far. A Pusher's Send returns only once
// JetStream has acknowledged the frame, and REQ/REP flush every message, so
// neither needs a Flush. Drain is the ordered exit of every role; Close is
// the abrupt one, whose flush is best-effort, capped at 500 ms and reports
// nothing — exactly the close path §6b warns about.
//
// Receive is zero-copy as in doppler §6: an unchunked frame's payload
// aliases the NATS message. Go's garbage collector keeps it alive for as long
// as the caller holds it, so §6's "valid until dp_msg_free" has no
// counterpart here.
//
// # Parts
//
// Options.Parts replaces the pieces a socket uses — those of package doppler
// (the header check, reassembly, the sender, the names derived from an
// endpoint) and the transport decisions of §3, §5, §7 and §8 (the dial, the
// max_payload used, the clock, when a subscription is ready, how the work
// queue is made to exist, which roles send telemetry). The reference leaves
// them zero; conform's SUT side sets them so that a mutant's bug in one
// piece shows on a real broker as it does in the codec.
//
// Nothing in the package keeps global state; every value is independent.
package dpnats
