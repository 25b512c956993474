package live

import "github.com/conform-suite/conform/cases"

// controlCases are the control-plane cases: the SUT as node
// (control_node.go, launched as a runtime would launch it) and as runtime
// (control_runtime.go, dialled by conform as nodes).
func controlCases() []cases.Case {
	return append(nodeCases(), runtimeCases()...)
}
