// Package streams is conform's reference implementation of the Ranvier
// streams contract (ranvier-streams): how samples are numbered, how a
// subscriber counts what it lost and where, and how it reads what a
// connection announces about a stream.
//
// It is the oracle every streams case and fuzzer compares a SUT against, so
// each rule is written from the specification's words and cites its section.
// Where the specification is silent or contradicts itself, the package
// follows the pins of docs/requirements.md and says so beside the rule.
//
// The package works on plain Go values. Decoding bytes into a Sample or a
// StreamInfo is the wire package's business; this one starts after that:
//
//   - Tracker is the subscriber's sequence tracker (§3.2–§3.7), keyed on the
//     pair (connection, stream_ref) with the 64-wide reorder window.
//   - Subscription is a bounded queue with a loss policy whose tracker sees
//     every sample before the policy runs (§3.1, §3.5, §5).
//   - FrameCounter counts, per connection, the frames that carried nothing
//     readable (§3.6a).
//   - Runtime, Stream and Adopted are the publisher side: sequence numbers,
//     references and republishing (§2).
//   - ReadAnnouncement and Announcements read a StreamInfo and match it to
//     samples by reference, never by name (§6.5–§6.7).
//   - Latency reports delivery age percentiles (§4.5).
//
// A connection is named by a ConnID the receiving process chooses itself; it
// never travels on the wire (§2.2).
package streams
