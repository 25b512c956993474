//go:build !unix

package proc

import (
	"os"
	"syscall"
)

// Elsewhere a child is started plainly and killed alone.

func sysProcAttr() *syscall.SysProcAttr { return nil }

// Subreap does nothing where the system has no child subreapers.
func Subreap() error { return nil }

func waitExited(int) bool { return false }

func killGroup(pgid int) {
	if p, err := os.FindProcess(pgid); err == nil {
		_ = p.Kill()
	}
}

func killMarked(func(string) bool) int { return 0 }

func reapOrphans() {}

func killOrphans() {}

func startTime(int) uint64 { return 0 }

func ownerAlive(o Owner) bool {
	p, err := os.FindProcess(o.Pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

func osGetpid() int { return os.Getpid() }

func pidNamespace() uint64 { return 0 }
