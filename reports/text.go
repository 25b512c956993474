package reports

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the terminal summary of r: one line per case that did not
// pass, with its evidence and the command that reproduces it, then the counts.
func WriteText(w io.Writer, r *Record, verbose bool) error {
	var b strings.Builder
	for _, c := range r.Cases {
		if c.Outcome == Pass && !verbose {
			continue
		}
		if c.Outcome == Skip && !verbose {
			continue
		}
		fmt.Fprintf(&b, "%-5s %-6s %s  (%s)\n", strings.ToUpper(string(c.Outcome)), c.Level, c.ID, c.Spec)
		if c.Message != "" {
			fmt.Fprintf(&b, "      %s\n", indent(c.Message))
		}
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "      - %s\n", indent(e.Message))
			for _, kv := range [][2]string{{"input", e.Input}, {"expected", e.Expected}, {"got", e.Got}, {"diff", e.Diff}, {"stderr", e.Stderr}} {
				if kv[1] != "" {
					fmt.Fprintf(&b, "        %s: %s\n", kv[0], indent(clip(kv[1], 600)))
				}
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "      note: %s\n", indent(n))
		}
		if c.Reproduce != "" && c.Outcome != Pass {
			fmt.Fprintf(&b, "      reproduce: %s\n", c.Reproduce)
		}
	}
	if len(r.Undeclared) > 0 {
		fmt.Fprintf(&b, "\nskipped: the SUT's Hello does not declare profile(s) %s\n", strings.Join(r.Undeclared, ", "))
	}
	if len(r.Unimplemented) > 0 {
		fmt.Fprintf(&b, "\nwarning: %d case(s) in declared profiles answered Unimplemented: %s\n", len(r.Unimplemented), strings.Join(r.Unimplemented, ", "))
	}
	if r.Interrupted {
		fmt.Fprintf(&b, "\nthe run was interrupted: the record holds the cases that ran\n")
	}
	fmt.Fprintf(&b, "\n%s: %d cases in %.2fs:", r.SUT.Spec, r.Summary.Total, r.DurationSec)
	for _, o := range Outcomes {
		fmt.Fprintf(&b, " %d %s", r.Summary.Counts[o], o)
		if o != Error {
			b.WriteString(",")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n        ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}
