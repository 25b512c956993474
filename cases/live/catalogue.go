// Package live holds the live Ranvier cases (suite "live"): conform plays the
// other end of every Ranvier conversation over real loopback TCP. The data
// plane (data*.go: the SUT as subscriber or publisher) and the control plane
// (control*.go: the SUT as node or runtime) each add their cases here.
package live

import "github.com/conform-suite/conform/cases"

// Catalogue returns the live cases. Each carries the tag "live".
func Catalogue() []cases.Case {
	var cs []cases.Case
	cs = append(cs, dataCases()...)
	cs = append(cs, controlCases()...)
	for i := range cs {
		cs[i].Tags = append(cs[i].Tags, "live")
	}
	return cs
}
