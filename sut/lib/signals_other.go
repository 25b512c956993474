//go:build !linux

package lib

// resetCrashSignals does nothing where conform does not know the raw
// sigaction interface: a fault in the library still ends the host process,
// reported by the Go runtime's exit status rather than by the signal.
func resetCrashSignals() error { return nil }
