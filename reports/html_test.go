package reports

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func renderHTML(t *testing.T, r *Record) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return b.String()
}

func TestHTMLStructure(t *testing.T) {
	r := fixture()
	page := renderHTML(t, r)
	tests := []struct {
		name string
		want []string
	}{
		{"document", []string{"<!DOCTYPE html>", "<html lang=\"en\">", "</html>", "Content-Security-Policy", "default-src 'none'"}},
		{"verdict", []string{"<h1>conform: not conformant</h1>", "2 fail, 1 error, 1 warn out of 9 cases (exit 1)."}},
		{"context", []string{"<code>./mybinding</code> over exec", "mybinding 1.2.3 (c)", "wire, streams"}},
		{"summary tables", []string{`<table class="counts" id="by-suite">`, `<table class="counts" id="by-level">`, "<tr><td>streams</td>"}},
		{"suite filters", []string{`data-dim="suite" value="wire" checked`, `data-dim="suite" value="streams" checked`}},
		{"level filters", []string{`data-dim="level" value="MUST" checked`, `data-dim="level" value="SHOULD" checked`, `data-dim="level" value="INFO" checked`}},
		{"outcome filters", []string{`data-dim="outcome" value="pass">`, `data-dim="outcome" value="fail" checked`, `data-dim="outcome" value="error" checked`}},
		{"case attributes", []string{`data-suite="wire" data-level="MUST" data-outcome="fail" data-id="wire/1.3/byte-at-a-time" open>`, `data-suite="streams" data-level="MUST" data-outcome="skip" data-id="streams/5/gap-report">`}},
		{"hex dump", []string{"<pre class=\"input\">read 1 (30 bytes)\n00000000  00 01 02 03 04 05 06 07  41 42 00 01 02 03 04 05  |........AB......|"}},
		{"diff", []string{`<pre class="diff"><span class="ctx">  wire.readView{</span><span class="del">- 	End: &#34;truncated&#34;,</span><span class="add">&#43; 	End: &#34;closed&#34;,</span>`}},
		{"stderr", []string{"<pre class=\"stderr\">panic: index out of range\ngoroutine 1 [running]:</pre>"}},
		{"notes", []string{"<li>a 4 MiB descriptor decoded intact</li>"}},
		{"reproduce", []string{`<pre class="cmd">` + reproduce("wire/1.3/byte-at-a-time") + `</pre>`}},
		{"escaping", []string{"&lt;script&gt;alert(1)&lt;/script&gt; &amp; ]]&gt; \\x1b[31m"}},
		{"script", []string{`root.setAttribute("data-js", "ready")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
		})
	}
	for _, c := range r.Cases {
		if !strings.Contains(page, `data-id="`+c.ID+`"`) {
			t.Errorf("no row for %s", c.ID)
		}
	}
	if n := strings.Count(page, `<details class="case `); n != len(r.Cases) {
		t.Errorf("%d case rows, want %d", n, len(r.Cases))
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("markup from the record reached the page unescaped")
	}
}

// TestHTMLSelfContained checks that the page fetches nothing: no URL, no
// external resource, even when the record itself holds URLs.
func TestHTMLSelfContained(t *testing.T) {
	r := fixture()
	page := renderHTML(t, r)
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)https?:`),
		regexp.MustCompile(`(?i)\bsrc\s*=`),
		regexp.MustCompile(`(?i)\bhref\s*=`),
		regexp.MustCompile(`(?i)@import|url\(`),
		regexp.MustCompile(`(?i)<(link|iframe|img|object|embed)\b`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("the page references something outside itself: %q", m)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script> elements, want the one inline script", n)
	}
	if n := strings.Count(page, "<style"); n != 1 {
		t.Errorf("%d <style> elements, want the one inline stylesheet", n)
	}
}

func TestHTMLPassingRun(t *testing.T) {
	r := fixture()
	r.Cases = []CaseResult{r.Cases[0], r.Cases[2]}
	r.ExitCode = 0
	r.Summarize()
	page := renderHTML(t, r)
	if !strings.Contains(page, `data-dim="outcome" value="pass" checked`) {
		t.Error("passing cases are hidden although every case passed")
	}
	if !strings.Contains(page, "<h1>conform: conformant</h1>") {
		t.Error("no conformant verdict")
	}
}

func TestHexDump(t *testing.T) {
	tests := []struct{ in, want string }{
		{"00 01 02", "00 01 02"},
		{"not hex at all", "not hex at all"},
		{"", ""},
		{"00 01 | <end of stream>", "00 01 | <end of stream>"},
		{
			"00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 41",
			"00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n" +
				"00000010  41                                                |A|",
		},
		{
			"00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f | 41 | <end of stream>",
			"read 1 (16 bytes)\n" +
				"00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n" +
				"read 2 (1 bytes)\n" +
				"00000000  41                                                |A|\n" +
				"<end of stream>",
		},
		{strings.Repeat("00 ", 20) + "zz", strings.Repeat("00 ", 20) + "zz"},
	}
	for _, tt := range tests {
		if got := hexDump(tt.in); got != tt.want {
			t.Errorf("hexDump(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
		}
	}
}

// chromium returns the path of a Chromium binary on PATH, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// dumpDOM loads the page at file in headless Chromium, with fragment as the
// URL's fragment, and returns the DOM as the page's script left it.
func dumpDOM(t *testing.T, bin, file, fragment string) string {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	url := "file://" + filepath.ToSlash(file)
	if fragment != "" {
		url += "#" + fragment
	}
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+filepath.Join(home, "profile"),
		"--dump-dom", url)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	killGroup(cmd)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium did not finish in 90s; its standard error ended with:\n%s", tail(stderr.String(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium: %v; its standard error ended with:\n%s", err, tail(stderr.String(), 2000))
	}
	if stdout.Len() == 0 {
		t.Fatalf("chromium dumped no DOM; its standard error ended with:\n%s", tail(stderr.String(), 2000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestHTMLInChromium opens the page in headless Chromium and checks what
// renders: every case row, the script having run, and the filters hiding
// and showing rows, preset through the URL fragment.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium is needed to check that the HTML report renders and its script runs: " +
			"install Debian's chromium (apt-get install chromium), as .ci/run does, or put chromium-browser on PATH")
	}
	if testing.Short() {
		t.Skip("skipping the Chromium rendering check in -short mode")
	}
	r := fixture()
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(renderHTML(t, r)), 0o644); err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile(`<details class="case [^"]*"[^>]*>`)
	attr := func(tag, name string) (string, bool) {
		m := regexp.MustCompile(`\s` + name + `(?:="([^"]*)")?[\s>]`).FindStringSubmatch(tag)
		if m == nil {
			return "", false
		}
		return m[1], true
	}
	tests := []struct {
		name     string
		fragment string
		// shown says which rows the filters leave visible.
		shown func(c CaseResult) bool
	}{
		// The fixture holds failures, so the page opens on them alone.
		{"default shows what went wrong", "", func(c CaseResult) bool {
			return c.Outcome == Fail || c.Outcome == Error || c.Outcome == Warn
		}},
		{"outcome fail", "outcome=fail", func(c CaseResult) bool { return c.Outcome == Fail }},
		{"suite and outcomes", "suite=streams&outcome=pass,fail,error", func(c CaseResult) bool {
			return SuiteOf(c.ID) == "streams" && (c.Outcome == Pass || c.Outcome == Fail || c.Outcome == Error)
		}},
		{"level", "level=SHOULD,INFO&outcome=pass,fail,warn,info,skip,error", func(c CaseResult) bool {
			return c.Level == SHOULD || c.Level == INFO
		}},
		{"search", "outcome=pass,fail,warn,info,skip,error&q=window", func(c CaseResult) bool {
			return c.ID == "streams/3.4/window-is-64"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dom := dumpDOM(t, bin, file, tt.fragment)
			htmlTag := regexp.MustCompile(`<html[^>]*>`).FindString(dom)
			if v, _ := attr(htmlTag, "data-js"); v != "ready" {
				t.Fatalf("the page's script did not run: <html> is %q", htmlTag)
			}
			want := 0
			for _, c := range r.Cases {
				if tt.shown(c) {
					want++
				}
			}
			if v, _ := attr(htmlTag, "data-shown"); v != strconv.Itoa(want) {
				t.Errorf("data-shown %q, want %d", v, want)
			}
			if !strings.Contains(dom, `<span id="shown">`+strconv.Itoa(want)+`</span>`) {
				t.Errorf("the status line does not say %d cases are shown", want)
			}
			rows := rowRE.FindAllString(dom, -1)
			if len(rows) != len(r.Cases) {
				t.Fatalf("%d case rows rendered, want %d", len(rows), len(r.Cases))
			}
			byID := map[string]string{}
			for _, row := range rows {
				id, _ := attr(row, "data-id")
				byID[id] = row
			}
			for _, c := range r.Cases {
				row, ok := byID[c.ID]
				if !ok {
					t.Errorf("no row for %s", c.ID)
					continue
				}
				_, hidden := attr(row, "hidden")
				if hidden == tt.shown(c) {
					t.Errorf("%s (%s, %s): hidden %v, want %v", c.ID, c.Level, c.Outcome, hidden, !tt.shown(c))
				}
			}
		})
	}
}

// TestHTMLFailuresFirst: the page lists failing cases first and opens with
// only fail, error and warn shown; skip, info and pass sit behind their
// filters. The header names the carrier only where it says more than the
// SUT spec.
func TestHTMLFailuresFirst(t *testing.T) {
	r := fixture()
	page := renderHTML(t, r)
	pos := func(id string) int {
		i := strings.Index(page, `data-id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", id)
		}
		return i
	}
	order := []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder", "wire/6.4/unreadable-counted",
		"streams/5/gap-report", "wire/8/large-descriptor", "wire/1.2/prefix-big-endian", "wire/2/ceiling-accepted", "streams/3.4/window-is-64"}
	for i := 1; i < len(order); i++ {
		if pos(order[i-1]) > pos(order[i]) {
			t.Errorf("%s comes after %s", order[i-1], order[i])
		}
	}
	for o, checked := range map[string]bool{"fail": true, "error": true, "warn": true, "skip": false, "info": false, "pass": false} {
		has := strings.Contains(page, `data-dim="outcome" value="`+o+`" checked`)
		if has != checked {
			t.Errorf("outcome %s checked=%v, want %v", o, has, checked)
		}
	}
	for _, want := range []string{`<table class="counts" id="by-profile">`, `<td>wire</td><td>not-conformant</td><td>3 of 3</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	r.SUT.Spec, r.SUT.Carrier = "builtin:mutant/x", "builtin:mutant/x"
	if page := renderHTML(t, r); strings.Contains(page, "</code> over ") {
		t.Error("the header names the SUT twice")
	}
}

// TestHTMLLostAndNotStarted: the page says once why the SUT was lost or
// could not be started, escaping what the SUT wrote.
func TestHTMLLostAndNotStarted(t *testing.T) {
	r := lostRecord()
	r.Lost.Last.Stderr = "<b>bold</b>\x1b[2J"
	page := renderHTML(t, r)
	for _, want := range []string{`id="lost"`, "<code>wire/3/t2</code>: 3 consecutive ops unanswered; 60 case(s) were not run.", "&lt;b&gt;bold&lt;/b&gt;\\x1b[2J"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if i, j := strings.Index(page, `data-id="wire/3/t0"`), strings.Index(page, `data-id="wire/4/n00"`); i > j {
		t.Error("cases not run come before the errors that lost the SUT")
	}
}
