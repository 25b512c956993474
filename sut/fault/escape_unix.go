//go:build unix

package fault

import (
	"os"
	"os/exec"
	"syscall"
)

// spawnEscapee starts "sleep 600" in a session of its own, holding this
// process's stderr, and does not wait for it: a descendant that leaves the
// process group and keeps a pipe of the SUT's open.
func spawnEscapee() error {
	cmd := exec.Command("sleep", "600")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
