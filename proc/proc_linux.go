package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// Constants of the Linux interfaces used here, which package syscall does
// not name.
const (
	prSetChildSubreaper = 36        // prctl PR_SET_CHILD_SUBREAPER
	pPID                = 1         // waitid idtype P_PID
	wNOWAIT             = 0x1000000 // waitid: leave the child waitable
)

func sysProcAttr() *syscall.SysProcAttr {
	// Pdeathsig is delivered when the thread that started the child exits.
	// Go's runtime ends a thread only when a goroutine locked to it exits
	// locked, which conform never does, so in practice the signal comes
	// when conform dies.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Subreap makes the calling process a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER): a descendant orphaned by the death of its
// parent is re-parented to it rather than to init, so that Stop can reap it
// and Shutdown can kill it. The caller promises to start every child through
// this package: any other child it has is then an orphan proc may reap.
func Subreap() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", errno)
	}
	reg.mu.Lock()
	reg.subreaper = true
	reg.mu.Unlock()
	return nil
}

// waitExited blocks until the child pid has exited, leaving it waitable (a
// zombie), so that its ID is not reused until cmd.Wait reaps it. It reports
// whether it waited.
func waitExited(pid int) bool {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|wNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return errno == 0
	}
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// procStat is what conform reads of /proc/PID/stat.
type procStat struct {
	state byte
	ppid  int
	start uint64
}

// readStat reads /proc/PID/stat. The command name, in parentheses, may hold
// anything, so the fields are taken after its last ')'.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 of proc(5) (state), f[1] field 4 (ppid), f[19]
	// field 22 (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, start: start}, true
}

// pids returns the IDs of every process in /proc.
func pids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// killMarked sends SIGKILL to every live process, other than this one,
// whose environment carries a mark that match accepts, and returns how many
// it found. A process's environment is readable only by its user (and
// root), so only this user's processes are ever found. A zombie is dead
// already and shows an empty environment.
func killMarked(match func(token string) bool) int {
	me := os.Getpid()
	n := 0
	for _, pid := range pids() {
		if pid == me {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !bytes.Contains(env, []byte(MarkVar+"=")) || !hasToken(env, match) {
			continue
		}
		if st, ok := readStat(pid); !ok || st.state == 'Z' || st.state == 'X' {
			continue
		}
		n++
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return n
}

// orphans returns this process's children that proc did not start — in a
// subreaper, descendants re-parented to it — with their states.
func orphans() map[int]byte {
	reg.mu.Lock()
	sub := reg.subreaper
	reg.mu.Unlock()
	if !sub {
		return nil
	}
	me := os.Getpid()
	out := map[int]byte{}
	for _, pid := range pids() {
		st, ok := readStat(pid)
		if ok && st.ppid == me {
			out[pid] = st.state
		}
	}
	return out
}

// reapOrphans reaps, in a subreaper, every child that has exited and that
// proc did not start. A child proc started is never waited for here: its
// own goroutine waits for it, and the registry is locked so that no child
// can be started and exit unregistered in between.
func reapOrphans() {
	for pid, state := range orphans() {
		if state == 'Z' {
			reapIfOrphan(pid)
		}
	}
}

func reapIfOrphan(pid int) bool {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if _, ours := reg.live[pid]; ours {
		return false
	}
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return err == nil && got == pid
}

// killOrphans kills and reaps, in a subreaper, every child proc did not
// start, waiting for them up to treeTimeout.
func killOrphans() {
	left := orphans()
	if len(left) == 0 {
		return
	}
	for pid := range left {
		reg.mu.Lock()
		_, ours := reg.live[pid]
		reg.mu.Unlock()
		if !ours {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(treeTimeout)
	for len(left) > 0 && time.Now().Before(deadline) {
		for pid := range left {
			if reapIfOrphan(pid) {
				delete(left, pid)
			} else if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
				delete(left, pid)
			}
		}
		if len(left) > 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// startTime returns pid's start time in clock ticks since boot, or 0.
func startTime(pid int) uint64 {
	st, ok := readStat(pid)
	if !ok {
		return 0
	}
	return st.start
}

// ownerAlive reports whether o's process runs: it exists, is not a zombie,
// and started when o says.
func ownerAlive(o Owner) bool {
	st, ok := readStat(o.Pid)
	if !ok || st.state == 'Z' || st.state == 'X' {
		return false
	}
	return o.Start == 0 || st.start == o.Start
}

func osGetpid() int { return os.Getpid() }

// pidNamespace returns the inode of the calling process's PID namespace, or
// 0 when it cannot be read.
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}
