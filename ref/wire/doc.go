// Package wire is conform's reference implementation of the Ranvier wire
// format (ranvier-wire): the length-prefixed framing of §1 and §2, the
// messages of §4 and §5 decoded by the rules of §7, and the receive step of a
// data-plane subscriber (§4, §6).
//
// It is the oracle every wire case and fuzzer compares a SUT against, and what
// builtin:reference runs, so it follows the specification's words rather than
// any one implementation's habits.
package wire
