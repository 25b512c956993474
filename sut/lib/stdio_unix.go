//go:build unix && !linux

package lib

import (
	"os"
	"syscall"
)

// redirectStdio points descriptor 1 at descriptor 2 and descriptor 0 at the
// null device, for the whole process: C code writes to the descriptors, not
// to Go's os.Stdout.
func redirectStdio() error {
	if err := syscall.Dup2(2, 1); err != nil {
		return os.NewSyscallError("dup2", err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	if err := syscall.Dup2(int(null.Fd()), 0); err != nil {
		return os.NewSyscallError("dup2", err)
	}
	return nil
}
