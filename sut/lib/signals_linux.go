package lib

import (
	"syscall"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction. Zeroed, it is SIG_DFL
// with no flags and an empty mask.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// resetCrashSignals restores the default action of the signals a faulty
// library raises on itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
// SIGTRAP) for the
// whole process. The Go runtime handles them itself and would turn a fault
// in foreign code into "exit status 2"; with the default action the process
// dies by the signal, which is what the harness records.
func resetCrashSignals() error {
	var dfl kernelSigaction
	for _, sig := range []syscall.Signal{
		syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGABRT, syscall.SIGTRAP,
	} {
		_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
			uintptr(unsafe.Pointer(&dfl)), 0, unsafe.Sizeof(dfl.mask), 0, 0)
		if errno != 0 {
			return errno
		}
	}
	return nil
}
