package util

import (
	"strings"

	"github.com/spf13/cobra"
)

// AddEnumFlag adds --name, whose value is one of values (help says what
// it means), completed from values (whatever the case typed). Validate it with Enum.
func AddEnumFlag(cmd *cobra.Command, p *string, name, value, help string, values []string) {
	cmd.Flags().StringVar(p, name, value, help+": "+strings.Join(values, ", "))
	_ = cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(strings.ToLower(v), strings.ToLower(toComplete)) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
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

// AddOutputFlag adds -o for a command that prints in its own formats
// (not through PrintFlags), completed from formats.
func AddOutputFlag(cmd *cobra.Command, p *string, formats ...string) {
	cmd.Flags().StringVarP(p, "output", "o", "", "Output format. One of: ("+strings.Join(formats, ", ")+").")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// ValidateOutput refuses an -o value outside formats ("" is the
// command's default output).
func ValidateOutput(output string, formats ...string) error {
	for _, f := range formats {
		if output == "" || output == f {
			return nil
		}
	}
	if output == "" {
		return nil
	}
	return UsageErrorf("unknown output format %q: use one of %s", output, strings.Join(formats, ", "))
}
