//go:build unix

package reports

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in a process group of its own and makes cancelling it
// kill the whole group, so that no helper process of Chromium outlives the
// test.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
