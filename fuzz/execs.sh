#!/bin/sh
# execs.sh measures each native fuzz target's executions per second against
# FuzzTrivial, the do-nothing target of the same package, run just before
# it on the same machine (docs/fuzzing.md, Measurements).
#
# Usage, from the module root:
#
#	fuzz/execs.sh [SECONDS] [PACKAGE...]
#
# SECONDS is each target's -fuzztime (default 30); the packages default to
# every fuzz/* package with targets. Each target runs with -parallel 1, so
# that one worker is measured whatever the machine's core count. The rate is
# the execs between go test's first and last status lines that count them,
# over the time between: the baseline coverage pass is left out, the pauses
# in which the engine minimises a new interesting input are not (the worker
# reports its count in bursts, so no shorter interval is reliable). Each
# minimisation is held to 100 executions (-fuzzminimizetime 100x): by
# default the engine may spend up to a minute minimising one new input,
# its count frozen, which measures how often a target finds coverage, not
# how fast it runs. A run counts as failed only when it writes a
# failing input: go test also fails a run whose time ran out during a
# minimisation ("context deadline exceeded"), which says nothing about the
# target. Output: one line per target, tab-separated: package,
# target, execs/s, FuzzTrivial's execs/s, and the ratio.
set -eu
secs=${1:-30}
[ $# -gt 0 ] && shift
pkgs=${*:-./fuzz/wire ./fuzz/streams ./fuzz/tlv ./fuzz/doppler ./fuzz/graph}

# rate runs one target and prints its average execs/s.
rate() {
	out=$(mktemp)
	go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "${secs}s" -fuzzminimizetime 100x -parallel 1 >"$out" 2>&1 || {
		echo "$1 $2 failed:" >&2
		tail -n 30 "$out" >&2
	}
	awk '/Failing input written/ { failed = 1 }
	     /^fuzz: elapsed:.*execs: [0-9]+/ {
		# fuzz: elapsed: 9s, execs: N (R/sec), ...
		match($0, /elapsed: [0-9]+s/); t = substr($0, RSTART + 9, RLENGTH - 10) + 0
		match($0, /execs: [0-9]+/); n = substr($0, RSTART + 7, RLENGTH - 7) + 0
		if (lines++ == 0) { ft = t; fn = n }
		lt = t; ln = n
	     }
	     END {
		if (failed || lt <= ft || ln == fn) { print "failed"; exit }
		printf "%d\n", (ln - fn) / (lt - ft)
	     }' "$out"
	rm -f "$out"
}

printf 'package\ttarget\texecs/s\ttrivial\tratio\n'
for p in $pkgs; do
	for t in $(go test "$p" -list '^Fuzz' | grep '^Fuzz' | grep -v '^FuzzTrivial$'); do
		base=$(rate "$p" FuzzTrivial)
		r=$(rate "$p" "$t")
		case "$r$base" in
		*failed*) ratio=- ;;
		*) ratio=$(awk -v a="$r" -v b="$base" 'BEGIN { printf "%.2f", a / b }') ;;
		esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$p" "$t" "$r" "$base" "$ratio"
	done
done
