package live

// The catalogue's parts, for the external tests.
var (
	DataCases    = dataCases
	ControlCases = controlCases
)
