package main

import (
	"syscall"
	"time"
)

// waitGone waits up to ten seconds for pid to exit, then kills it.
func waitGone(pid int) {
	for i := 0; i < 200; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
