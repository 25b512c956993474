// Package meaning declares, once, what every field of a conform.v1 answer
// means: whether a verdict may rest on it, at which RFC 2119 level, and how
// two values of it are compared. The cases' comparisons, the fuzz oracle
// (conform fuzz) and the generated field reference (docs/fields.md) all read
// this one declaration, so that a campaign never reports a difference the
// cases would not judge, and a case never judges what the documents leave
// open.
//
// Every field reachable from conform.v1.Response, and every field of Hello,
// has exactly one declaration (a test proves it against the descriptors). A
// field is one of:
//
//   - judged, at MUST or SHOULD: a conforming SUT's value is fixed by the
//     documents (or by conform.v1 itself), so a case may fail on it at that
//     level and the oracle reports a difference in it;
//   - recorded: the documents leave the value open, or it is worded free
//     text (a refusal's reason, an identifier the SUT chooses). It is kept in
//     the record and never compared;
//   - judged only when a condition holds: undefined for some inputs or some
//     answers (ReadOutput.buffered means something only when the reader ended
//     WAITING or TRUNCATED). Where the condition fails the field is not
//     compared.
//
// A judged field whose bytes are not the right notion of equality carries a
// form: canonical JSON is parsed and re-rendered, an encoding re-marshalled
// (protobuf fixes no field order), a NaN compared as NaN whatever its bits,
// a clock the sender stamps masked, identifiers the SUT chooses compared by
// the pattern of which are equal.
//
// Compare answers with Diff or Equal; the campaign uses Canonical, which
// returns copies of two answers in which everything not judged is made equal.
//
// # In a case
//
// A case builds the answer it expects (from a corpus vector, or the
// reference's answer to the same input), asks the SUT, and judges through
// Diff, passing the input entry the answer answers so that conditions and
// forms that depend on it apply:
//
//	ds := meaning.Diff(in, want, got, meaning.Options{TLVDepth: depth})
//	ds = ds.Under("end", "claimed", "yields.frames") // what this case is about
//	if must := ds.At(meaning.MUST); len(must) > 0 {
//		t.Fail(reports.Evidence{Message: what, Diff: must.String()})
//	}
//
// Each Difference names the field by its conform.v1 JSON path
// ("yields[2].frames[0].bytes") with the level at which it may fail a case:
// a MUST case fails on MUST differences, a SHOULD case on SHOULD ones, and
// an INFO case notes them. Options.TLVDepth is the bound the SUT's Hello
// declares (Bounds.tlv_max_depth).
//
// Defined says whether the documents fix the answer to an input at all; a
// generator of inputs (the fuzz campaign's, a case's seeded one) should send
// only defined inputs. Vary gives an answer another value in every field the
// declaration leaves open: a SUT wrapped to vary its answers must pass every
// case and give no fuzz finding.
package meaning

//go:generate go run ./internal/fieldsdoc ../../../../docs/fields.md
