package proc

import (
	"fmt"
	"strconv"
	"strings"
)

// An Owner names a running process in a way that survives the reuse of its
// process ID: the ID and, where the system tells them (Linux), the
// process's start time in clock ticks since boot and its PID namespace. A
// temporary directory or a child records its owner so that a later conform
// can tell leftovers of a dead conform from the live state of a concurrent
// one — and leaves alone those of a conform in another PID namespace (a
// container), whose IDs mean nothing here.
type Owner struct {
	Pid   int
	Start uint64 // 0 where the start time is unknown
	NS    uint64 // the PID namespace's inode; 0 where unknown
}

// Self returns the calling process's Owner.
func Self() Owner { return OwnerOf(osGetpid()) }

// OwnerOf returns the Owner of the running process pid, such as a parent's.
func OwnerOf(pid int) Owner { return Owner{Pid: pid, Start: startTime(pid), NS: pidNamespace()} }

// String formats o as "PID.START.NS", the form ParseOwner reads.
func (o Owner) String() string { return fmt.Sprintf("%d.%d.%d", o.Pid, o.Start, o.NS) }

// ParseOwner reads an Owner written by String.
func ParseOwner(s string) (Owner, error) {
	f := strings.Split(strings.TrimSpace(s), ".")
	if len(f) == 3 {
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		ns, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil && pid > 0 {
			return Owner{Pid: pid, Start: start, NS: ns}, nil
		}
	}
	return Owner{}, fmt.Errorf("proc: %q is not an owner (PID.START.NS)", s)
}

// Alive reports whether the process o names may still be running: its ID
// is in use, not by a zombie and, where start times are known, by the
// process that started at o.Start. An owner in another PID namespace cannot
// be judged from here, and is taken to be alive.
func (o Owner) Alive() bool {
	if ns := pidNamespace(); o.NS != ns && o.NS != 0 && ns != 0 {
		return true
	}
	return ownerAlive(o)
}
