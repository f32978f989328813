package nodeset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// TestPreflightNeedsSlurmCommands: when the Slurm client commands are the
// chosen way to Slurm and scontrol is missing (PATH set to an empty
// directory, as in the kubectl-vc image) the controller refuses to start
// with one line that says what it needs and the ways out; with the
// commands on PATH, or in --slurm-bin-dir, it starts. Without a choice (the
// image's case) it starts: each NodeSet finds its slurmrestd.
func TestPreflightNeedsSlurmCommands(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := New(Config{Slurm: slurm.NewCommands(slurm.CommandsConfig{})}).Preflight()
	if err == nil {
		t.Fatal("started without scontrol on PATH")
	}
	msg := err.Error()
	for _, want := range []string{"NodeSet controller needs the Slurm client commands and a munge key",
		"scontrol not found on PATH", "--slurm-rest-url", "--controllers"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}

	// A directory that has the commands: on PATH, or named by --slurm-bin-dir.
	bin := t.TempDir()
	for _, p := range slurm.Programs {
		if err := os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := New(Config{Slurm: slurm.NewCommands(slurm.CommandsConfig{BinDir: bin})}).Preflight(); err != nil {
		t.Errorf("with --slurm-bin-dir: %v", err)
	}
	t.Setenv("PATH", bin)
	if err := New(Config{Slurm: slurm.NewCommands(slurm.CommandsConfig{})}).Preflight(); err != nil {
		t.Errorf("with the commands on PATH: %v", err)
	}
	// --slurm-bin-dir is where they are looked for, not PATH.
	err = New(Config{Slurm: slurm.NewCommands(slurm.CommandsConfig{BinDir: t.TempDir()})}).Preflight()
	if err == nil || !strings.Contains(err.Error(), "scontrol not found in ") {
		t.Errorf("empty --slurm-bin-dir: %v", err)
	}
	// A non-executable scontrol is not a command.
	if err := os.Chmod(filepath.Join(bin, "scontrol"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := New(Config{Slurm: slurm.NewCommands(slurm.CommandsConfig{})}).Preflight(); err == nil {
		t.Error("a non-executable scontrol passed")
	}
	// No way chosen: the commands are not needed to start.
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SLURM_CONF", "")
	if err := New(Config{}).Preflight(); err != nil {
		t.Errorf("without any Slurm flag: %v", err)
	}
	// --slurm-conf chooses the commands.
	c := New(Config{})
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse([]string{"--slurm-conf=/etc/slurm/slurm.conf"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Preflight(); err == nil || !strings.Contains(err.Error(), "scontrol not found on PATH") {
		t.Errorf("--slurm-conf without the commands: %v", err)
	}
	// Another Slurm client (slurmrestd, a test fake) is not about commands.
	if err := New(Config{Slurm: noCommands{}}).Preflight(); err != nil {
		t.Errorf("a client without Check: %v", err)
	}
}

// noCommands is a Slurm client that runs no command.
type noCommands struct{ slurm.Client }
