#!/usr/bin/env bash
# The work of conform's GitHub Action (action.yml at the repository root):
# install conform, run it against the SUT, write the record and its
# renderings, append the Markdown summary to the step summary, set the
# step's outputs, and exit with conform's exit code, so that the step fails
# exactly when conform says the binding does.
#
# action.yml passes the inputs in the environment, never in the script's
# text, so that no input is ever run as shell:
#
#   INPUT_SUT          the --sut value (empty: none is passed, for --peer or
#                      --node-cmd given in INPUT_ARGS)
#   INPUT_PROFILES     the --profile value (comma-separated), or empty
#   INPUT_BASELINE     the --baseline file, or empty
#   INPUT_ARGS         more flags for conform run, split as a shell would
#                      ('…', "…" and \ quote; nothing is expanded)
#   INPUT_OUTPUT_DIR   where the record files go (default conform-report)
#   INPUT_CONFORM      a conform binary to use instead of installing one
#   INPUT_VERSION      the conform version to go install (default: the
#                      action's own ref)
#   CONFORM_ACTION_REF the action's ref (github.action_ref), possibly empty
#
# and GitHub's own GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH
# and RUNNER_TEMP, each of which may be missing when the script is run by
# hand. cmd/conform's tests (action_test.go) run it with a fake environment.
set -uo pipefail

# The module whose cmd/conform is installed.
readonly module=github.com/conform-suite/conform

# GitHub refuses a step summary above 1 MiB; a longer one is cut at a line
# boundary below that, and says where the whole of it is.
summary_limit=${CONFORM_ACTION_SUMMARY_LIMIT:-1000000}

tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/conform-action.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# annotate prints a workflow command, its message escaped as GitHub asks.
annotate() { # level message
	local m=$2
	m=${m//'%'/'%25'}
	m=${m//$'\r'/'%0D'}
	m=${m//$'\n'/'%0A'}
	printf '::%s title=conform::%s\n' "$1" "$m"
}

# output sets one of the step's outputs.
output() { # name value
	if [[ -n ${GITHUB_OUTPUT:-} ]]; then
		printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
	fi
}

# summary appends standard input to the step summary.
summary() {
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		cat >>"$GITHUB_STEP_SUMMARY"
	else
		cat >/dev/null
	fi
}

# fail reports why conform could not be run at all and exits 1; the
# exit-code output stays unset, because conform gave none.
fail() { # message
	annotate error "$1"
	printf 'conform action: %s\n' "$1" >&2
	printf '## ❌ conform did not run\n\n%s\n' "$1" | summary
	exit 1
}

dir=${INPUT_OUTPUT_DIR:-conform-report}
if [[ $dir == *$'\n'* ]]; then
	fail "output-dir must not contain a newline"
fi
mkdir -p -- "$dir" || fail "cannot create the output directory $dir"

# The extra flags, split as a shell splits words, without expanding
# anything: xargs understands the quotes and runs nothing but printf.
extra=()
if [[ ${INPUT_ARGS:-} =~ [^[:space:]] ]]; then
	if ! xargs printf '%s\0' <<<"$INPUT_ARGS" >"$tmp/args" 2>"$tmp/xargs.err"; then
		fail "the args input does not split into words: $(head -c 300 "$tmp/xargs.err")"
	fi
	while IFS= read -r -d '' a; do
		extra+=("$a")
	done <"$tmp/args"
fi
for a in ${extra[@]+"${extra[@]}"}; do
	case $a in
	--json | --json=* | --junit | --junit=* | --markdown | --markdown=* | --html | --html=* | \
		-json | -json=* | -junit | -junit=* | -markdown | -markdown=* | -html | -html=*)
		fail "the args input names ${a%%=*}: the action writes every rendering itself, into output-dir ($dir)"
		;;
	esac
done

# conform: the binary given, or one installed with go install — the version
# asked for, else the action's own ref, else (a local action, uses: ./, has
# no ref) the action's own source.
if [[ -n ${INPUT_CONFORM:-} ]]; then
	[[ -f $INPUT_CONFORM && -x $INPUT_CONFORM ]] || fail "the conform input names $INPUT_CONFORM, which is not an executable file"
	conform=$INPUT_CONFORM
else
	command -v go >/dev/null 2>&1 ||
		fail "installing conform needs Go on the runner: add actions/setup-go before this step, or give the conform input a binary"
	mkdir -p "$tmp/bin"
	version=${INPUT_VERSION:-${CONFORM_ACTION_REF:-}}
	if [[ -n $version ]]; then
		echo "conform action: go install $module/cmd/conform@$version"
		GOBIN=$tmp/bin go install "$module/cmd/conform@$version" ||
			fail "go install $module/cmd/conform@$version failed: the version input chooses another version, the conform input a binary"
	elif [[ -n ${GITHUB_ACTION_PATH:-} ]]; then
		echo "conform action: go install ./cmd/conform in $GITHUB_ACTION_PATH (the action has no ref)"
		(cd "$GITHUB_ACTION_PATH" && GOBIN=$tmp/bin go install ./cmd/conform) ||
			fail "go install ./cmd/conform in $GITHUB_ACTION_PATH failed"
	else
		fail "no conform to run: give the version input, or the conform input a binary"
	fi
	conform=$tmp/bin/conform
fi

json=$dir/conform.json
junit=$dir/conform.xml
html=$dir/conform.html
markdown=$dir/conform.md
# A file a previous run left must not pass for this run's.
rm -f -- "$json" "$junit" "$html" "$markdown"

args=(run)
[[ -n ${INPUT_SUT:-} ]] && args+=(--sut "$INPUT_SUT")
[[ -n ${INPUT_PROFILES:-} ]] && args+=(--profile "$INPUT_PROFILES")
[[ -n ${INPUT_BASELINE:-} ]] && args+=(--baseline "$INPUT_BASELINE")
args+=(${extra[@]+"${extra[@]}"} --json "$json" --junit "$junit" --html "$html" --markdown "$markdown")

# What conform prints quotes the SUT, which must not be able to write
# workflow commands (an ::error::, an ::add-mask::) into the log: GitHub
# ignores them between ::stop-commands:: and its token. conform's standard
# error is captured for the summary and printed with its standard output,
# inside the same window.
token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "::stop-commands::$token"
"$conform" "${args[@]}" 2>"$tmp/stderr"
code=$?
cat "$tmp/stderr"
echo "::$token::"

output exit-code "$code"
for pair in json:"$json" junit:"$junit" html:"$html" markdown:"$markdown"; do
	name=${pair%%:*} path=${pair#*:}
	if [[ -f $path ]]; then
		output "$name" "$path"
	else
		output "$name" ""
	fi
done

if [[ -f $markdown ]]; then
	size=$(wc -c <"$markdown")
	if ((size <= summary_limit)); then
		summary <"$markdown"
	else
		{
			head -c "$summary_limit" "$markdown" | sed '$d'
			# shellcheck disable=SC2016 # the backquotes are Markdown
			printf '\n\n*This summary was cut at %d of its %d bytes; the whole of it is `%s`.*\n' "$summary_limit" "$size" "$markdown"
		} | summary
	fi
else
	# No record: a usage error (exit 2), or conform could not write it. What
	# conform said first says why (a usage message follows it).
	{
		printf '## ❌ conform: exit %d, no record written\n\n```\n' "$code"
		head -n 20 "$tmp/stderr" | head -c 2000
		printf '\n```\n'
	} | summary
fi

if ((code != 0)); then
	headline=$(head -n 1 "$markdown" 2>/dev/null)
	headline=${headline#'## '}
	annotate error "conform run exited $code${headline:+: $headline} (the step summary and $dir hold the details)"
fi
exit "$code"
