// Package queue spreads a fuzz campaign over rigs through a NATS JetStream
// work queue (issue 9, "Across rigs"): one process, the Coordinator,
// publishes the campaign's work units; a worker on each rig (RunWorker)
// pulls units, runs them against its local SUT and reports findings; the
// coordinator collects the outcomes and hands each distinct finding over
// once.
//
// # Streams
//
// A campaign named C (from the endpoint nats://host:port/C) lives in four
// streams. Every subject ends in a token that names its unit, signature or
// worker, base64url-encoded so that no ID can split the subject or act as a
// wildcard:
//
//   - CONFORM_FUZZ_C_INFO, subjects conform.fuzz.C.info.>: the campaign's
//     identity, conform.fuzz.C.info.identity, and each worker's record,
//     conform.fuzz.C.info.workers.<worker> (the last message of each subject
//     kept). The identity is opaque to this package: the coordinator that
//     creates the campaign stores its Options.Identity; every later
//     coordinator and every worker passes the stored one to its
//     Options.Admit, which refuses the campaign or completes it (a SUT named
//     at last). Writes of the identity are conditional on the sequence read
//     (Nats-Expected-Last-Subject-Sequence), so two processes never
//     overwrite each other. A worker's record holds its own identity and,
//     when it refused the campaign, why; the coordinator shows both.
//   - CONFORM_FUZZ_C_UNITS, subjects conform.fuzz.C.units.<unit>: the work
//     queue (work-queue retention). Its one durable pull consumer, "workers",
//     is shared by every worker, with explicit acknowledgements and the
//     campaign's AckWait. A unit stays in the stream until a worker
//     acknowledges it. The coordinator creates it last, so a worker that
//     finds it finds the campaign's identity.
//   - CONFORM_FUZZ_C_FINDINGS, subjects conform.fuzz.C.findings.<signature>:
//     the findings, at most one message per signature. The stream itself
//     refuses a second finding of a signature (discard-new per subject), so
//     however many workers find one bug, and however often a unit is rerun,
//     the stream holds it once. Every Run reads it from the start (an ordered
//     consumer) and hands each finding over, so a coordinator restarted, or
//     writing to a new place, gets every finding the campaign holds.
//   - CONFORM_FUZZ_C_DONE, subjects conform.fuzz.C.done.<unit>: the outcome of
//     each unit, done or failed, with the inputs it ran and its worker's busy
//     time (limits retention). The coordinator replays it from the start on
//     every Run, so a restarted coordinator knows what has ended and what
//     each worker ran.
//
// A campaign with streams but no info stream was made by an older conform,
// whose unit IDs and outcomes say nothing of what they ran: it is refused,
// and DeleteCampaign clears the name.
//
// # Delivery
//
// Delivery is at least once, and everything downstream of it is idempotent
// so that at least once is enough. A worker handles a unit in a fixed order:
// run it, store each finding (waiting for JetStream's acknowledgement of the
// store), record the outcome, and only then acknowledge the unit. While run
// works the worker tells JetStream every third of AckWait that the unit is
// in progress, so a long unit is not redelivered; a worker that dies stops
// doing so and its unit goes to another worker one AckWait later.
//
// Why findings are stored before the outcome is recorded: an outcome then
// promises that the unit's findings are in the findings stream, so Run,
// which ends once every unit has an outcome and every stored finding has
// been handed over, cannot end with a finding of a finished unit still on
// its way.
//
// Why the outcome is recorded before the acknowledgement: the other order
// has a window — acknowledged, not yet recorded — in which a dying worker
// removes the unit from the queue with no outcome anywhere, and the
// coordinator would wait for it forever. In this order the worst a death can
// do is make a unit run twice.
//
// What each kind of death costs:
//
//   - A worker that dies before it reports anything: the unit is
//     redelivered after AckWait and run from scratch. Nothing was stored.
//   - A worker that dies after reporting findings but before recording the
//     outcome: the findings are stored; the unit is redelivered and rerun,
//     and its findings, reported again, are refused by the findings stream
//     as ones it holds (report treats that as success).
//   - A worker that dies after recording the outcome but before the
//     acknowledgement: the unit is redelivered; its next worker sees that
//     it was delivered before, finds its outcome recorded and acknowledges
//     it without running it.
//   - A coordinator that dies, or is closed: workers carry on. A new
//     coordinator's Run lists the units still queued, then replays the
//     outcomes recorded (in that order, so that a unit acknowledged in
//     between is seen in its outcome), publishes only the units in
//     neither, and hands over every finding stored, those its predecessor
//     handed over too (onFinding must be idempotent). Units carry their ID
//     as Nats-Msg-Id, so a publish retried within the stream's duplicate
//     window is stored once even when two coordinators race.
//
// A unit whose run fails is handed back and retried, up to the campaign's
// MaxAttempts deliveries, and then recorded as failed. JetStream's own
// MaxDeliver is left unlimited and the workers count instead: a unit whose
// last allowed delivery went to a worker that died would otherwise stay in
// the queue unrecorded forever. A worker that receives a unit delivered more
// than MaxAttempts times (its workers kept dying, say because the unit
// crashes them) records it as failed without running it. Run reports
// failed units in Status.Failed and, at the end, in a *UnitsFailedError.
//
// A campaign is resumed by its name: a coordinator or worker given the name
// of an existing campaign joins it when its Admit accepts the campaign's
// identity, and gets a *RefusedError otherwise. ListCampaigns lists the
// campaigns on a server; DeleteCampaign removes one, so that its name can
// start afresh. A server that cannot be reached, or has no JetStream, is an
// *UnreachableError.
//
// Every wait is bounded by a context; the steps that end a unit (record,
// acknowledge) run for a short bounded time even after the worker's context
// ends, so that finished work is not thrown away.
package queue
