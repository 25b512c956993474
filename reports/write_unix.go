//go:build unix

package reports

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this ID exists. A process
// this user may not signal (EPERM) exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
