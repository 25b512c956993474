//go:build !unix

package reports

import "os"

// processAlive reports whether a process with this ID exists, as far as
// the platform can tell without signals.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
