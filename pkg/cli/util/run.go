package util

import (
	"context"

	"github.com/spf13/cobra"
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

// Group makes cmd a command group over subs: it takes no arguments and,
// run alone, prints its help.
func Group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	cmd.AddCommand(subs...)
	return cmd
}
