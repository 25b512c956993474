package live

import "github.com/conform-suite/conform/cases"

// controlCases are the control-plane cases: the SUT as node and as runtime.
func controlCases() []cases.Case { return nil }
