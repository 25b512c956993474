// Package live holds the live Ranvier cases (suite "live"): conform plays the
// other end of every Ranvier conversation over real loopback TCP. The data
// plane (data*.go) judges the SUT as a subscriber that dials a publisher
// conform runs and as a publisher conform dials; the control plane
// (control*.go) judges the SUT as a node conform launches, playing its
// runtime, and as a runtime conform dials as nodes.
//
// # Time
//
// A live case waits on a real socket, so each of its waits is one of three
// kinds, and none is a sleep that only covers slowness:
//
//   - Something the SUT owes (a dial, a Request, a frame, an answer, a
//     close). The case waits until it has happened, bounded by owed, a
//     budget derived from the run's --timeout: a fast SUT ends the wait at
//     once, and a slow SUT given a longer --timeout is waited for longer.
//   - A period or a silence the specification fixes (an Alive period, three
//     silent periods, the 30-second socket timeout, the five-second timeout
//     of ranvier-wire §5.2). Where the specification lets conform choose the
//     figure, the case chooses a short one and gives it to the SUT (Bind's
//     heartbeat_period_ms, LiveSubscribe's read_timeout_ms, StartRuntime's
//     heartbeat_period_ms); where it fixes the figure (the two-second default
//     heartbeat, the five-second timeout), the case waits that long.
//   - Something that must not happen. The case makes its recorder catch up
//     with the socket (peer.Conn.Sync) instead of guessing how late its own
//     reader runs, and watches only as long as the SUT's own parameters make
//     the thing possible.
//
// A bound that is the requirement itself (an Alive period) is judged with a
// stated slack and excuses the SUT for the harness's own lateness, which each
// such case measures (lateMeter): a loaded machine delays conform's reader
// and the SUT alike. A deadline the harness itself misses ends the case as an
// error of kind harness, never as a fail or a warn.
//
// # Concurrency
//
// Every case owns what it uses: its listeners (always 127.0.0.1:0), its
// launched node, its SUT-side handles, its goroutines. Cases share no
// state, so a runner may run them at once.
package live

import "github.com/conform-suite/conform/cases"

// Catalogue returns the live cases, sorted by ID. The runner tags them
// "live" from their profiles.
func Catalogue() []cases.Case {
	var cs []cases.Case
	cs = append(cs, dataCases()...)
	cs = append(cs, controlCases()...)
	return cases.Sorted(cs)
}

// dataCases are the data-plane cases: the SUT as subscriber and as
// publisher.
func dataCases() []cases.Case {
	return append(subscriberCases(cases.NewKit(ProfileSubscriber)), publisherCases(cases.NewKit(ProfilePublisher))...)
}

// controlCases are the control-plane cases: the SUT as node and as runtime.
func controlCases() []cases.Case {
	return append(nodeCases(cases.NewKit(ProfileNode)), runtimeCases(cases.NewKit(ProfileRuntime))...)
}
