package main

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent makes this process end when the process that started it ends, even by SIGKILL,
// so a killed test run leaves no control plane behind. Node cannot set Pdeathsig on spawn, so
// the child asks the kernel itself; KWAVE_CP_WATCH_STDIN=1 adds a second watch that exits when
// the parent's end of stdin closes (portable, and covers a parent thread that exits early).
func dieWithParent() {
	parent := os.Getppid()
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	if os.Getppid() != parent { // the parent died before the request took effect
		os.Exit(1)
	}
	if os.Getenv("KWAVE_CP_WATCH_STDIN") == "1" {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(1)
		}()
	}
}
