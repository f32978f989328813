package util

import (
	"strings"

	"github.com/spf13/cobra"
)

// AddEnumFlag adds --name, whose value is one of values (help says what
// it means), completed from values. Validate it with Enum.
func AddEnumFlag(cmd *cobra.Command, p *string, name, value, help string, values []string) {
	cmd.Flags().StringVar(p, name, value, help+": "+strings.Join(values, ", "))
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// Enum returns the one of values that value names, whatever its case
// (--phase pending is Pending, as kubectl's own enum flags take them), ""
// for "", or the one error every enum flag gives.
func Enum[S ~string](flag, value string, values []S) (S, error) {
	if value == "" {
		return "", nil
	}
	names := make([]string, len(values))
	for i, v := range values {
		if strings.EqualFold(string(v), value) {
			return v, nil
		}
		names[i] = string(v)
	}
	return "", UsageErrorf("unknown --%s %q: use one of %s", flag, value, strings.Join(names, ", "))
}

// Names are the values as strings, for AddEnumFlag.
func Names[S ~string](values []S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
