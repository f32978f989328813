// Command pause is the process of the local node's pod sandbox image: it
// holds the pod's namespaces open and exits on SIGTERM or SIGINT. Nothing can
// be pulled here, so the sandbox image is built from this static binary.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// A sandbox's process is PID 1 of its PID namespace when the pod shares
	// one: reap orphaned children so they do not pile up as zombies.
	signal.Notify(sig, syscall.SIGCHLD)
	for s := range sig {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
