package util

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Runner is the Validate and Run of a command's Options, in kubectl's
// Complete, Validate, Run order.
type Runner interface {
	Validate() error
	Run(ctx context.Context) error
}

// RunE runs o for a command whose Complete takes the arguments.
func RunE(o interface {
	Complete(args []string) error
	Runner
}) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		return validateRun(cmd.Context(), o)
	}
}

// RunENoArgs runs o for a command that takes no arguments.
func RunENoArgs(o interface {
	Complete() error
	Runner
}) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := o.Complete(); err != nil {
			return err
		}
		return validateRun(cmd.Context(), o)
	}
}

func validateRun(ctx context.Context, o Runner) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// Group makes cmd a command group over subs: run alone, it prints its
// help; a word that names none of its commands is refused in one line
// with cobra's suggestions, as kubectl refuses one.
func Group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.Args = UnknownCommand
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	cmd.AddCommand(subs...)
	return cmd
}

// UnknownCommand is the Args of a command group: any argument is a
// command it does not have. 'kubectl vc queue clsoe' says: unknown
// command "clsoe" for "kubectl vc queue"; did you mean "close"? (cobra
// says so for the root only, and over several lines).
func UnknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", strings.Join(s, `" or "`))
	}
	return UsageErrorf("%s (see '%s --help')", msg, cmd.CommandPath())
}

// NameArgs checks the number of names a command takes, from min to max
// (max < 0: no limit), and says what to give instead of cobra's "accepts
// 1 arg(s), received 0": "name the queue to describe, e.g. 'kubectl vc
// queue describe team-a'", "give one queue name, got 2 (a b)". what is
// what a name names ("queue", "NodeSet pod"); example follows
// 'kubectl vc'.
func NameArgs(what string, min, max int, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min {
			if max == 1 {
				return UsageErrorf("name the %s to %s, e.g. 'kubectl vc %s'", what, cmd.Name(), example)
			}
			return UsageErrorf("name the %s(s) to %s, e.g. 'kubectl vc %s'", what, cmd.Name(), example)
		}
		if max >= 0 && len(args) > max {
			return UsageErrorf("give one %s name, got %d (%s)", what, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// Constructor builds one command over a factory and IO streams.
type Constructor func(Factory, genericiooptions.IOStreams) *cobra.Command

// Build builds the commands of a group, in the order given.
func Build(f Factory, streams genericiooptions.IOStreams, constructors ...Constructor) []*cobra.Command {
	out := make([]*cobra.Command, len(constructors))
	for i, c := range constructors {
		out[i] = c(f, streams)
	}
	return out
}

// AddNameFlag adds vcctl's -N/--name to cmd, another way to give a name
// (what names its kind: "job flow"), completed by complete; the name is
// added to the arguments cmd's RunE gets. With one, the command takes one
// name in all, as an argument or with -N.
func AddNameFlag(cmd *cobra.Command, what string, one bool, complete func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) {
	var name string
	cmd.Flags().StringVarP(&name, "name", "N", "", "Name of the "+what+" (as vcctl's -N; the same as giving it as an argument)")
	_ = cmd.RegisterFlagCompletionFunc("name", complete)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if name != "" {
			args = append(append([]string{}, args...), name)
		}
		if one && len(args) > 1 {
			return UsageErrorf("give one %s name, got %d (%s)", strings.ReplaceAll(what, " ", ""), len(args), strings.Join(args, " "))
		}
		return run(c, args)
	}
}
