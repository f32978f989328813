// Command kubectl_complete-vc completes 'kubectl vc ...' for kubectl's own
// shell completion. kubectl (1.26 and later) does not complete a plugin's
// arguments itself: for 'kubectl vc queue close <TAB>' it runs the
// executable kubectl_complete-vc found on PATH with the words after 'vc'
// ("queue" "close" "") and reads completions, one a line, and cobra's
// ":<directive>" last line, from its stdout. This program hands those words
// to kubectl-vc's cobra completion, 'kubectl-vc __complete ...'.
//
// It runs the kubectl-vc that sits beside it (the same release: they are
// shipped and installed together), else the one on PATH.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

func main() {
	bin, err := plugin()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: kubectl_complete-vc:", err)
		os.Exit(1)
	}
	cmd := exec.Command(bin, append([]string{"__complete"}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "error: kubectl_complete-vc:", err)
		os.Exit(1)
	}
}

// plugin finds kubectl-vc: beside this executable (symbolic links
// resolved), else on PATH.
func plugin() (string, error) {
	name := "kubectl-vc"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		beside := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			return beside, nil
		}
	}
	path, err := exec.LookPath("kubectl-vc")
	if err != nil {
		return "", errors.New("kubectl-vc is neither beside this helper nor on PATH")
	}
	return path, nil
}
