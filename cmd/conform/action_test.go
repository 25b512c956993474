package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/reports"
)

// actionScript is the script action.yml runs.
var actionScript = filepath.Join("..", "..", "action", "run.sh")

// actionResult is what one run of the action's script left behind.
type actionResult struct {
	code   int
	stdout string
	stderr string
	// conform is what conform printed, which the script fences off from
	// GitHub's workflow commands; outside is the rest of stdout.
	conform, outside string
	outputs          map[string]string // $GITHUB_OUTPUT, name=value lines
	summary          string            // $GITHUB_STEP_SUMMARY
	work             string            // the working directory the step ran in
}

// runAction runs the action's script as a composite step would, in a fresh
// working directory, with GitHub's files pointing at temporary files and
// the inputs in env (INPUT_SUT, …). Unless env names INPUT_CONFORM, the
// script is given the conform binary the tests built, so that it installs
// nothing. The step summary starts with a line of an earlier step, which
// the script must keep.
func runAction(t *testing.T, env map[string]string) actionResult {
	t.Helper()
	script, err := filepath.Abs(actionScript)
	if err != nil {
		t.Fatal(err)
	}
	dependOn(t, script)
	work := t.TempDir()
	ghOutput := filepath.Join(t.TempDir(), "github_output")
	ghSummary := filepath.Join(t.TempDir(), "step_summary")
	if err := os.WriteFile(ghSummary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = work
	// The test may itself run inside GitHub Actions: none of the runner's
	// variables may leak into the step under test.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "INPUT_") ||
			strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "CONFORM_ACTION_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+ghOutput, "GITHUB_STEP_SUMMARY="+ghSummary, "RUNNER_TEMP="+t.TempDir())
	if _, ok := env["INPUT_CONFORM"]; !ok {
		cmd.Env = append(cmd.Env, "INPUT_CONFORM="+bin)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(hang.Guard(t, 2*time.Minute)):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the action's script did not finish\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	r := actionResult{stdout: out.String(), stderr: errb.String(), outputs: map[string]string{}, work: work}
	r.outside = r.stdout
	if m := regexp.MustCompile(`(?s)^(.*)::stop-commands::([0-9a-f]{32})\n(.*)\n::([0-9a-f]{32})::\n(.*)$`).FindStringSubmatch(r.stdout); m != nil {
		if m[2] != m[4] {
			t.Fatalf("commands stopped with %s, resumed with %s", m[2], m[4])
		}
		r.conform, r.outside = m[3], m[1]+m[5]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ghOutput)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not name=value", sc.Text())
		}
		if _, dup := r.outputs[k]; dup {
			t.Errorf("output %s set twice", k)
		}
		r.outputs[k] = v
	}
	s, err := os.ReadFile(ghSummary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(s), "earlier step\n") {
		t.Errorf("the step summary lost what an earlier step wrote:\n%s", s)
	}
	r.summary = strings.TrimPrefix(string(s), "earlier step\n")
	assertNoChildren(t)
	return r
}

// dependOn reads a file that a child process of the test reads, such as
// a script bash runs: go test caches a result until a file the test
// process itself opened changes, and it never sees what a child opens.
func dependOn(t *testing.T, path string) {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
}

// file reads a file the step wrote, by the path an output gives.
func (r actionResult) file(t *testing.T, output string) []byte {
	t.Helper()
	p := r.outputs[output]
	if p == "" {
		t.Fatalf("output %s is empty; outputs %v", output, r.outputs)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.work, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("output %s: %v", output, err)
	}
	return b
}

// record reads the record the step wrote.
func (r actionResult) record(t *testing.T) *reports.Record {
	t.Helper()
	b := r.file(t, "json")
	checkAgainstSchema(t, b)
	p := filepath.Join(t.TempDir(), "rec.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := reports.ReadJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// actionOutputs are the outputs action.yml declares; a run of conform sets
// every one of them.
var actionOutputs = []string{"exit-code", "json", "junit", "html", "markdown"}

// TestActionRuns runs the action's script against the reference, a mutant,
// the mutant with a baseline and a SUT that cannot start, and checks what
// a workflow sees: the exit code (the step fails exactly when conform's
// does), the outputs, the files they name and the step summary.
func TestActionRuns(t *testing.T) {
	const mutant = "builtin:mutant/truncated-tail-delivered"
	failing := []string{"wire/1.3/byte-at-a-time", "wire/1.3/truncated-tail-not-delivered"}
	baseline := filepath.Join(t.TempDir(), "baseline.txt")
	if err := os.WriteFile(baseline, []byte(strings.Join(failing, " known\n")+" known\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		code  int
		check func(t *testing.T, r actionResult, rec *reports.Record)
	}{
		{
			name: "reference",
			// The quotes must reach conform as one word, unexpanded.
			env:  map[string]string{"INPUT_SUT": "builtin:reference", "INPUT_PROFILES": "wire", "INPUT_ARGS": "--case 'wire/1.3/*'  --seed 7"},
			code: 0,
			check: func(t *testing.T, r actionResult, rec *reports.Record) {
				if rec.Seed != 7 || !slices.Equal(rec.Selection.Cases, []string{"wire/1.3/*"}) || !slices.Equal(rec.Selection.Profiles, []string{"wire"}) {
					t.Errorf("record: seed %d, selection %+v; want seed 7, --case wire/1.3/*, --profile wire", rec.Seed, rec.Selection)
				}
				if rec.Summary.Total == 0 || count(rec, reports.Pass) != rec.Summary.Total {
					t.Errorf("%d of %d cases pass", count(rec, reports.Pass), rec.Summary.Total)
				}
				if strings.Contains(r.outside, "::error") {
					t.Errorf("an annotation for a passing run:\n%s", r.stdout)
				}
			},
		},
		{
			name: "mutant",
			env:  map[string]string{"INPUT_SUT": mutant, "INPUT_PROFILES": "wire"},
			code: 1,
			check: func(t *testing.T, r actionResult, rec *reports.Record) {
				var got []string
				for _, c := range rec.Cases {
					if c.Outcome == reports.Fail {
						got = append(got, c.ID)
					}
				}
				if !slices.Equal(got, failing) {
					t.Errorf("failing cases %q, want %q", got, failing)
				}
				for _, id := range failing {
					if !strings.Contains(r.summary, id) {
						t.Errorf("the step summary does not name %s", id)
					}
				}
				if !strings.Contains(r.outside, "::error title=conform::conform run exited 1") {
					t.Errorf("no error annotation:\n%s", r.stdout)
				}
			},
		},
		{
			name: "mutant with its baseline",
			env:  map[string]string{"INPUT_SUT": mutant, "INPUT_PROFILES": "wire", "INPUT_BASELINE": baseline},
			code: 0,
			check: func(t *testing.T, r actionResult, rec *reports.Record) {
				if count(rec, reports.Fail) != 2 || rec.Baseline == nil {
					t.Errorf("%d failures, baseline %v: want the 2 known failures, judged by the baseline", count(rec, reports.Fail), rec.Baseline)
				}
			},
		},
		{
			name: "unstartable",
			// The SUT's standard error, which conform prints, carries a
			// workflow command: it must stay fenced off.
			env:  map[string]string{"INPUT_SUT": "exec:sh -c 'head -c 4 >/dev/null; echo ::warning::cannot open /dev/widget >&2; exit 7'", "INPUT_PROFILES": "wire"},
			code: 3,
			check: func(t *testing.T, r actionResult, rec *reports.Record) {
				if rec.StartError == nil {
					t.Errorf("the record has no start error")
				}
				if !strings.Contains(r.conform, "::warning::cannot open /dev/widget") || strings.Contains(r.outside, "/dev/widget") {
					t.Errorf("the SUT's workflow command is not fenced off\nstdout:\n%s", r.stdout)
				}
				if !strings.Contains(r.summary, "cannot open /dev/widget") {
					t.Errorf("the step summary does not say why the SUT did not start:\n%s", r.summary)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runAction(t, tc.env)
			if r.code != tc.code {
				t.Fatalf("the step exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, o := range actionOutputs {
				if _, ok := r.outputs[o]; !ok {
					t.Errorf("output %s not set; outputs %v", o, r.outputs)
				}
			}
			if r.outputs["exit-code"] != fmt.Sprint(tc.code) {
				t.Errorf("exit-code output %q, want %d", r.outputs["exit-code"], tc.code)
			}
			if !strings.Contains(r.conform, tc.env["INPUT_SUT"]) {
				t.Errorf("conform's text output is not between ::stop-commands:: and its token\nstdout:\n%s", r.stdout)
			}
			rec := r.record(t)
			if rec.ExitCode != tc.code {
				t.Errorf("the record says exit %d, the step %d", rec.ExitCode, tc.code)
			}
			md := r.file(t, "markdown")
			if r.summary != string(md) {
				t.Errorf("the step summary is not the Markdown summary\nsummary:\n%s\nmarkdown:\n%s", r.summary, md)
			}
			if !strings.Contains(string(md), "conform") || !strings.Contains(r.summary, rec.SUT.Carrier) {
				t.Errorf("the summary does not name the run:\n%s", r.summary)
			}
			if junit := r.file(t, "junit"); !bytes.Contains(junit, []byte("<testsuite")) {
				t.Errorf("the JUnit file holds no test suite:\n%.300s", junit)
			}
			if html := r.file(t, "html"); !bytes.Contains(html, []byte("<html")) {
				t.Errorf("the HTML file is no page:\n%.300s", html)
			}
			for _, o := range actionOutputs[1:] {
				if filepath.Dir(r.outputs[o]) != "conform-report" {
					t.Errorf("output %s = %q: want it in the default output-dir, conform-report", o, r.outputs[o])
				}
			}
			tc.check(t, r, rec)
		})
	}
}

// TestActionRefusals: input the action cannot use fails the step with a
// reason in the log, the annotation and the step summary — and when
// conform itself refuses it (exit 2), with conform's own message and exit
// code, though no record exists.
func TestActionRefusals(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "conform")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		code int
		want string // in the step summary and on standard error
	}{
		{"conform refuses a flag", map[string]string{"INPUT_SUT": "builtin:reference", "INPUT_ARGS": "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{"no SUT", map[string]string{}, 2, "--sut is required"},
		{"unbalanced quote", map[string]string{"INPUT_SUT": "builtin:reference", "INPUT_ARGS": "--case 'wire/**"}, 1, "the args input does not split into words"},
		{"a rendering flag", map[string]string{"INPUT_SUT": "builtin:reference", "INPUT_ARGS": "--strict --json=x.json"}, 1, "the args input names --json"},
		{"not a binary", map[string]string{"INPUT_SUT": "builtin:reference", "INPUT_CONFORM": notExec}, 1, "which is not an executable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runAction(t, tc.env)
			if r.code != tc.code {
				t.Fatalf("the step exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			log := r.stderr // the script's own message
			if tc.code == 2 {
				log = r.conform // conform's
			}
			if !strings.Contains(r.summary, tc.want) || !strings.Contains(log, tc.want) {
				t.Errorf("want %q in the step summary and the log\nsummary:\n%s\nstdout:\n%s\nstderr:\n%s", tc.want, r.summary, r.stdout, r.stderr)
			}
			if !strings.Contains(r.outside, "::error title=conform::") {
				t.Errorf("no error annotation:\n%s", r.stdout)
			}
			if tc.code == 1 {
				// conform never ran: no exit code of its to report.
				if _, ok := r.outputs["exit-code"]; ok {
					t.Errorf("exit-code output %q set although conform did not run", r.outputs["exit-code"])
				}
				return
			}
			if r.outputs["exit-code"] != fmt.Sprint(tc.code) || r.outputs["json"] != "" {
				t.Errorf("outputs %v: want exit-code %d and no record", r.outputs, tc.code)
			}
		})
	}
}

// TestActionSummaryCut: a summary above the step summary's limit is cut at
// a line below it and says where the whole of it is.
func TestActionSummaryCut(t *testing.T) {
	t.Parallel()
	const limit = 300
	r := runAction(t, map[string]string{"INPUT_SUT": "builtin:mutant/truncated-tail-delivered", "INPUT_PROFILES": "wire",
		"CONFORM_ACTION_SUMMARY_LIMIT": fmt.Sprint(limit)})
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	md := string(r.file(t, "markdown"))
	head, note, ok := strings.Cut(r.summary, "\n\n*This summary was cut at 300 of its ")
	if !ok || len(md) <= limit {
		t.Fatalf("no cut in a summary of %d bytes:\n%s", len(md), r.summary)
	}
	if len(head) > limit || !strings.HasSuffix(head, "\n") || !strings.HasPrefix(md, head) {
		t.Errorf("the kept part (%d bytes) is not whole lines of the summary within %d bytes:\n%s", len(head), limit, head)
	}
	if !strings.Contains(note, "conform-report/conform.md") {
		t.Errorf("the note does not say where the whole summary is: %s", note)
	}
}

// fakeGo writes a go command into a directory of its own: it logs where it
// ran, its GOBIN and its arguments, and "installs" a conform that runs the
// tests' binary — or fails, when fail is set. It returns the directory and
// the log's path.
func fakeGo(t *testing.T, fail bool) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(t.TempDir(), "go.log")
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s|%%s|%%s\n' "$PWD" "$GOBIN" "$*" >> %q
if [ %q = true ]; then echo 'go: no matching versions' >&2; exit 1; fi
printf '#!/bin/sh\nexec %%s "$@"\n' %q > "$GOBIN/conform"
chmod +x "$GOBIN/conform"
`, log, fmt.Sprint(fail), bin)
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// TestActionInstall: without a conform binary the action installs one
// with go install — the version asked for, else the action's own ref,
// else (a local action has no ref) the action's own source — and runs it.
func TestActionInstall(t *testing.T) {
	actionPath, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/conform-suite/conform/cmd/conform"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		goFails bool
		dir     string // where go ran; "" the step's working directory
		args    string // go's arguments
	}{
		{"version input", map[string]string{"INPUT_VERSION": "v1.2.3", "CONFORM_ACTION_REF": "v9"}, false, "", "install " + pkg + "@v1.2.3"},
		{"action ref", map[string]string{"CONFORM_ACTION_REF": "v9"}, false, "", "install " + pkg + "@v9"},
		{"local action", map[string]string{"GITHUB_ACTION_PATH": actionPath}, false, actionPath, "install ./cmd/conform"},
		{"go install fails", map[string]string{"INPUT_VERSION": "v0.0.0-nope"}, true, "", "install " + pkg + "@v0.0.0-nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			goDir, log := fakeGo(t, tc.goFails)
			env := map[string]string{"INPUT_CONFORM": "", "INPUT_SUT": "builtin:reference", "INPUT_ARGS": "--case wire/1.3/clean-end",
				"PATH": goDir + string(os.PathListSeparator) + os.Getenv("PATH")}
			for k, v := range tc.env {
				env[k] = v
			}
			r := runAction(t, env)
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("go was not run: %v\n%s", err, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 1 {
				t.Fatalf("go ran %d times:\n%s", len(lines), b)
			}
			f := strings.SplitN(lines[0], "|", 3)
			wantDir := tc.dir
			if wantDir == "" {
				wantDir = r.work
			}
			if gotDir, _ := filepath.EvalSymlinks(f[0]); gotDir != mustEval(t, wantDir) || f[1] == "" || f[2] != tc.args {
				t.Errorf("go ran in %s with GOBIN %q and arguments %q; want %s, a GOBIN, %q", f[0], f[1], f[2], wantDir, tc.args)
			}
			if tc.goFails {
				if r.code != 1 || !strings.Contains(r.summary, "go install "+pkg+"@v0.0.0-nope failed") {
					t.Errorf("exit %d, summary:\n%s", r.code, r.summary)
				}
				return
			}
			if r.code != 0 || r.outputs["exit-code"] != "0" {
				t.Fatalf("the installed conform: exit %d, outputs %v\n%s", r.code, r.outputs, r.stderr)
			}
			if rec := r.record(t); rec.Summary.Total != 1 {
				t.Errorf("the installed conform ran %d cases, want 1", rec.Summary.Total)
			}
		})
	}
	t.Run("nothing to install", func(t *testing.T) {
		goDir, _ := fakeGo(t, false)
		r := runAction(t, map[string]string{"INPUT_CONFORM": "", "INPUT_SUT": "builtin:reference",
			"PATH": goDir + string(os.PathListSeparator) + os.Getenv("PATH")})
		if r.code != 1 || !strings.Contains(r.summary, "no conform to run") {
			t.Errorf("exit %d, summary:\n%s", r.code, r.summary)
		}
	})
	t.Run("no go", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/go"); err == nil {
			t.Skip("go is in /usr/bin: a PATH without it cannot be made")
		}
		r := runAction(t, map[string]string{"INPUT_CONFORM": "", "INPUT_SUT": "builtin:reference", "PATH": "/usr/bin:/bin"})
		if r.code != 1 || !strings.Contains(r.summary, "needs Go on the runner") {
			t.Errorf("exit %d, summary:\n%s", r.code, r.summary)
		}
	})
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestActionMetadata checks action.yml as GitHub reads a composite action's
// metadata: name, description and runs are required, every input and
// output has a description, an output a value, runs.using is composite and
// every run step names its shell. It checks it against the script, too:
// the inputs the steps pass are the ones declared, each reaches the script
// under the name the script reads, and the outputs are the step's.
//
// action.yml is read with yamlSubset, a strict reader of the part of YAML
// it is written in, rather than a YAML library that conform would
// otherwise not need; a construct outside that part fails the test rather
// than being misread.
func TestActionMetadata(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(actionScript)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yamlSubset(string(src))
	if err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	top := asMap(t, "action.yml", doc)
	allowed(t, "action.yml", top, "name", "description", "author", "branding", "inputs", "outputs", "runs")
	for _, k := range []string{"name", "description"} {
		if asString(t, k, top[k]) == "" {
			t.Errorf("action.yml: %s is required", k)
		}
	}
	inputs := asMap(t, "inputs", top["inputs"])
	for name, v := range inputs {
		in := asMap(t, "inputs."+name, v)
		allowed(t, "inputs."+name, in, "description", "required", "default", "deprecationMessage")
		if asString(t, "description", in["description"]) == "" {
			t.Errorf("inputs.%s has no description", name)
		}
		if r, ok := in["required"]; ok && r != "true" && r != "false" {
			t.Errorf("inputs.%s.required is %q", name, r)
		}
	}
	runs := asMap(t, "runs", top["runs"])
	allowed(t, "runs", runs, "using", "steps")
	if runs["using"] != "composite" {
		t.Errorf("runs.using is %q, want composite", runs["using"])
	}
	steps, ok := runs["steps"].([]any)
	if !ok || len(steps) == 0 {
		t.Fatalf("runs.steps is %v, want a list of steps", runs["steps"])
	}
	stepIDs := map[string]bool{}
	passed := map[string]string{} // env var → input
	for i, s := range steps {
		step := asMap(t, fmt.Sprintf("runs.steps[%d]", i), s)
		allowed(t, "a step", step, "id", "name", "if", "run", "shell", "env", "working-directory", "uses", "with", "continue-on-error")
		if _, isRun := step["run"]; isRun && asString(t, "shell", step["shell"]) == "" {
			t.Errorf("runs.steps[%d] runs a command without a shell, which a composite action must name", i)
		}
		if id, ok := step["id"]; ok {
			stepIDs[asString(t, "id", id)] = true
		}
		if env, ok := step["env"]; ok {
			for k, v := range asMap(t, "env", env) {
				if !strings.Contains(string(script), k) {
					t.Errorf("the step passes %s, which action/run.sh never reads", k)
				}
				if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`).FindStringSubmatch(asString(t, k, v)); m != nil {
					passed[k] = m[1]
				}
			}
		}
	}
	// Every ${{ inputs.X }} anywhere names a declared input, and every
	// declared input is used.
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}`).FindAllStringSubmatch(string(src), -1) {
		used[m[1]] = true
		if _, ok := inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	for name := range inputs {
		if !used[name] {
			t.Errorf("input %s is declared and never passed to the script", name)
		}
	}
	// The script reads each input under the name the step passes it, and
	// reads nothing the step does not pass.
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bINPUT_[A-Z_]+`).FindAllString(string(script), -1) {
		read[m] = true
	}
	for k, in := range passed {
		if want := "INPUT_" + strings.ToUpper(strings.ReplaceAll(in, "-", "_")); k != want {
			t.Errorf("input %s is passed as %s; the script's convention is %s", in, k, want)
		}
		if !read[k] {
			t.Errorf("the step passes %s, which action/run.sh never reads", k)
		}
	}
	for k := range read {
		if _, ok := passed[k]; !ok {
			t.Errorf("action/run.sh reads %s, which the step does not pass", k)
		}
	}
	// The outputs are the step's, and are the ones the script sets.
	outputs := asMap(t, "outputs", top["outputs"])
	var names []string
	for name, v := range outputs {
		names = append(names, name)
		out := asMap(t, "outputs."+name, v)
		allowed(t, "outputs."+name, out, "description", "value")
		if asString(t, "description", out["description"]) == "" {
			t.Errorf("outputs.%s has no description", name)
		}
		m := regexp.MustCompile(`^\$\{\{ steps\.([a-z-]+)\.outputs\.([a-z-]+) \}\}$`).FindStringSubmatch(asString(t, "value", out["value"]))
		if m == nil || !stepIDs[m[1]] || m[2] != name {
			t.Errorf("outputs.%s.value is %q: want ${{ steps.ID.outputs.%s }} of a step of the action", name, out["value"], name)
		}
	}
	slices.Sort(names)
	want := slices.Clone(actionOutputs)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("action.yml declares the outputs %q; the script sets %q", names, want)
	}
}

// allowed fails the test when m has a key outside keys: a misspelt key is
// ignored by nobody but the test.
func allowed(t *testing.T, where string, m map[string]any, keys ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(keys, k) {
			t.Errorf("%s: unexpected key %q", where, k)
		}
	}
}

func asMap(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %#v, want a mapping", where, v)
	}
	return m
}

func asString(t *testing.T, where string, v any) string {
	t.Helper()
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s is %#v, want a scalar", where, v)
	}
	return s
}

// yamlSubset parses the part of YAML action.yml is written in: block
// mappings and sequences indented with spaces, plain, single-quoted and
// double-quoted scalars on one line, and comments. Mappings become
// map[string]any, sequences []any and scalars string. Anything else —
// flow collections, block scalars, anchors, tags, several documents, a
// plain scalar holding ": " — is an error, never a guess.
func yamlSubset(src string) (any, error) {
	type line struct {
		n      int
		indent int
		text   string
	}
	var lines []line
	for i, raw := range strings.Split(src, "\n") {
		if strings.ContainsRune(raw, '\t') {
			return nil, fmt.Errorf("line %d: a tab", i+1)
		}
		text := stripComment(raw)
		if strings.TrimSpace(text) == "" {
			continue
		}
		trimmed := strings.TrimLeft(text, " ")
		lines = append(lines, line{i + 1, len(text) - len(trimmed), strings.TrimRight(trimmed, " ")})
	}
	pos := 0
	var block func(indent int) (any, error)
	// value parses what follows "key:" or "- " on line l: a scalar, or a
	// block below it.
	value := func(l line, rest string, indent int) (any, error) {
		if rest != "" {
			return scalar(l.n, rest)
		}
		if pos < len(lines) && lines[pos].indent > indent {
			return block(lines[pos].indent)
		}
		// A sequence may sit at its key's indentation.
		if pos < len(lines) && lines[pos].indent == indent && strings.HasPrefix(lines[pos].text, "- ") {
			return block(indent)
		}
		return nil, nil
	}
	block = func(indent int) (any, error) {
		if strings.HasPrefix(lines[pos].text, "- ") || lines[pos].text == "-" {
			var seq []any
			for pos < len(lines) && lines[pos].indent == indent && strings.HasPrefix(lines[pos].text+" ", "- ") {
				l := lines[pos]
				item := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
				if k, _, ok := mappingEntry(item); ok && k != "" {
					// "- key: value": a mapping whose keys sit two
					// columns in.
					lines[pos] = line{l.n, indent + 2, item}
					v, err := block(indent + 2)
					if err != nil {
						return nil, err
					}
					seq = append(seq, v)
					continue
				}
				pos++
				v, err := value(l, item, indent)
				if err != nil {
					return nil, err
				}
				seq = append(seq, v)
			}
			return seq, nil
		}
		m := map[string]any{}
		for pos < len(lines) && lines[pos].indent == indent {
			l := lines[pos]
			if strings.HasPrefix(l.text, "- ") {
				return nil, fmt.Errorf("line %d: a sequence item among mapping keys", l.n)
			}
			k, rest, ok := mappingEntry(l.text)
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not key: value", l.n, l.text)
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("line %d: key %q twice", l.n, k)
			}
			pos++
			v, err := value(l, rest, indent)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	}
	if len(lines) == 0 {
		return nil, errors.New("empty")
	}
	if lines[0].indent != 0 {
		return nil, fmt.Errorf("line %d: the document does not start at column 0", lines[0].n)
	}
	doc, err := block(0)
	if err != nil {
		return nil, err
	}
	if pos < len(lines) {
		return nil, fmt.Errorf("line %d: indentation does not match any block above it", lines[pos].n)
	}
	return doc, nil
}

// mappingEntry splits "key: value" or "key:"; keys are plain words.
func mappingEntry(s string) (key, rest string, ok bool) {
	k, rest, found := strings.Cut(s, ":")
	if !found || !regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`).MatchString(k) {
		return "", "", false
	}
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	return k, strings.TrimSpace(rest), true
}

// scalar reads a one-line scalar.
func scalar(n int, s string) (string, error) {
	switch s[0] {
	case '"':
		if len(s) < 2 || s[len(s)-1] != '"' {
			return "", fmt.Errorf("line %d: an unterminated double-quoted scalar", n)
		}
		var b strings.Builder
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			switch c := body[i]; {
			case c == '"':
				return "", fmt.Errorf("line %d: a bare \" inside a double-quoted scalar", n)
			case c == '\\' && i+1 < len(body) && strings.IndexByte(`"\/`, body[i+1]) >= 0:
				b.WriteByte(body[i+1])
				i++
			case c == '\\':
				return "", fmt.Errorf("line %d: an escape this reader does not know", n)
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), nil
	case '\'':
		if len(s) < 2 || s[len(s)-1] != '\'' {
			return "", fmt.Errorf("line %d: an unterminated single-quoted scalar", n)
		}
		body := s[1 : len(s)-1]
		if strings.Contains(strings.ReplaceAll(body, "''", ""), "'") {
			return "", fmt.Errorf("line %d: a bare ' inside a single-quoted scalar", n)
		}
		return strings.ReplaceAll(body, "''", "'"), nil
	case '{', '[', '|', '>', '&', '*', '!', '%', '@', '`', '?':
		return "", fmt.Errorf("line %d: %q: a construct outside the subset this reader takes", n, s)
	}
	if s == "---" || s == "..." || strings.Contains(s, ": ") {
		return "", fmt.Errorf("line %d: %q: ambiguous as a plain scalar", n, s)
	}
	return s, nil
}

// stripComment removes a comment: a # at the start of the line or after a
// space, outside quotes.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
		case c == '"' || c == '\'':
			if i == 0 || s[i-1] == ' ' || s[i-1] == ':' || s[i-1] == '-' {
				quote = c
			}
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return s[:i]
		}
	}
	return s
}

// TestYAMLSubset: the reader TestActionMetadata relies on reads what it
// takes as YAML does, and refuses the rest.
func TestActionYAMLSubset(t *testing.T) {
	got, err := yamlSubset(`# a comment
name: conform   # trailing
description: "quoted: with a colon # and a hash"
inputs:
  sut:
    required: true
    default: 'it''s'
runs:
  using: composite
  steps:
    - id: a
      shell: bash
      env:
        X: ${{ inputs.sut }}
    - plain
list:
- one
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name":        "conform",
		"description": "quoted: with a colon # and a hash",
		"inputs":      map[string]any{"sut": map[string]any{"required": "true", "default": "it's"}},
		"runs": map[string]any{"using": "composite", "steps": []any{
			map[string]any{"id": "a", "shell": "bash", "env": map[string]any{"X": "${{ inputs.sut }}"}},
			"plain",
		}},
		"list": []any{"one"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for _, bad := range []string{
		"a: {b: c}",
		"a: [b]",
		"a: |\n  text",
		"a: &x b",
		"a: b: c",
		"a: b\na: c",
		"a:\n  b: c\n   d: e",
		"a: \"open",
		"a:\tb",
		"  a: b",
		"a: b\n- c",
	} {
		if v, err := yamlSubset(bad); err == nil {
			t.Errorf("%q read as %v, want an error", bad, v)
		}
	}
}
