//go:build unix && !linux

package proc

import (
	"errors"
	"os"
	"syscall"
)

// Where there is no parent-death signal, no subreaper and no /proc, a child
// still leads its own process group, killed when it stops; its marked
// descendants outside the group cannot be found.

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Subreap does nothing where the system has no child subreapers.
func Subreap() error { return nil }

func waitExited(int) bool { return false }

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func killMarked(func(string) bool) int { return 0 }

func reapOrphans() {}

func killOrphans() {}

func startTime(int) uint64 { return 0 }

func ownerAlive(o Owner) bool {
	err := syscall.Kill(o.Pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func osGetpid() int { return os.Getpid() }

func pidNamespace() uint64 { return 0 }
