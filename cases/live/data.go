package live

import "github.com/conform-suite/conform/cases"

// dataCases are the data-plane cases: the SUT as subscriber and as publisher.
func dataCases() []cases.Case { return nil }
