// Package live is the reference implementation of Ranvier's roles on real
// loopback TCP sockets: a data-plane Publisher and Subscriber
// (ranvier-wire §3.3, §4, §6) and a control-plane Node (§3.2, §5).
//
// The codec-level rules live in ref/wire (framing, decoding, the
// subscriber's receive step) and ref/streams (numbering, gap tracking,
// announcements); this package puts them on sockets and adds what only a
// socket has: who dials, what is sent first, how a slow peer is waited for,
// and how a connection ends. Everything that waits takes a context.Context,
// every goroutine a value starts is ended by its Close, and every duration
// the specification fixes (the 30-second patience, the 2-second heartbeat)
// is a default that a configuration can shorten so that tests stay fast.
//
// # Choices where the specification is silent
//
// Each is repeated in the doc comment of the code that makes it.
//
//   - The publish clock. ranvier-wire §4.3 asks for the host's system-wide,
//     sleep-inclusive monotonic clock; Go's standard library does not expose
//     one, so the default clock is the process's monotonic clock counted from
//     1 (the one sut/impl uses), and PublisherConfig.Clock replaces it.
//   - The Request wait. §6.5 gives both ends a 30-second socket timeout; the
//     publisher applies it (PublisherConfig.RequestTimeout, defaulting to the
//     patience) as one deadline for the whole Request, not reset by progress.
//   - The per-connection queue. Publishing never waits (ranvier-streams §5.1),
//     so each connection has a bounded queue between Publish and its socket:
//     a streams.Subscription with DefaultOptions unless configured. A slow
//     reader is waited for at the socket (§6.5); samples beyond the queue's
//     depth meanwhile fall to its loss policy and show as gaps.
//   - The subscriber's read timeout. Its reads carry §6.5's 30-second
//     socket timeout (SubscriberConfig.ReadTimeout, per connection through
//     SubscribeOptions), and a read that times out is read again: a quiet
//     publisher is not a broken one.
//   - Hooks. PublisherConfig.Hooks and SubscriberConfig.Hooks each replace
//     one step, and PublisherConfig.Listen how the publisher listens; the
//     zero value of each is the specified behaviour. They are extension
//     points from which conform builds its mutants (sut/mutant), each the
//     reference with one step taken otherwise.
//   - Patience is measured in slices of at most 100 ms, so "no progress for
//     the whole patience" is judged within one slice of the exact figure.
//   - Nagle. Disabling it is a MAY (§1.4); the Publisher disables it, as the
//     Rust does, unless PublisherConfig.Nagle is set.
//   - Alive before the first Bind. §5.2 counts the period "from the moment
//     that Bind arrives"; the Node sends no Alive before its first Bind, sends
//     one at once when each Bind arrives (so a shorter period applies at
//     once), then one per period. The sequence counts from 0 per connection
//     (reconstructed§ranvier-alive-sequence#1).
//   - Listening. The Node sends its Listening after the first Bind on each
//     connection (the order of the §5.2 conversation), and again after a
//     redial, because its publishers never stopped.
//   - Stop. The Node drains its publisher for at most half of
//     Stop.deadline_ms, sends Stopping, and returns; a deadline of 0 means
//     "now": no drain.
//   - Redial. After a lost control connection (end of stream, an I/O error,
//     a framing error — §6.2) the Node redials on its current heartbeat
//     period without backoff, as the Rust does (§5.2 makes redialling a MAY);
//     a failed dial is retried the same way. Bindings and publishers survive
//     the redial: the data plane is not the control plane's to tear down.
//   - RANVIER_PARAMS. It must be a JSON object when set. The reference node
//     reads two optional keys of this suite's choosing: "publish", a list of
//     stream names it opens and announces in Listening, and
//     "accepts_transport", a boolean it declares in Register.
//   - RANVIER_BINDINGS is never read (§3.2).
//   - Run by hand. With RANVIER_CONTROL unset the Node dials nothing, keeps
//     its publishers serving, and ends without an error when its context
//     does (§3.2).
package live
