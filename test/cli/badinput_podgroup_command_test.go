package cli

type badCase = struct {
	name       string
	kubeconfig string
	args       []string
	want       string
}

// extraBadInput adds the cases of the podgroup and command verbs.
func extraBadInput(admin, alice, dead string) []badCase {
	return []badCase{
		{"pg list: unknown phase", admin, []string{"podgroup", "list", "--phase", "Sleeping"}, `unknown --phase "Sleeping"`},
		{"pg list: bad queue", admin, []string{"pg", "list", "--queue", "Bad_Q"}, "invalid --queue"},
		{"pg list: names with -A", admin, []string{"pg", "list", "-A", "x"}, "cannot be combined with --all-namespaces"},
		{"pg list: unknown -o", admin, []string{"pg", "list", "-o", "xml"}, `unknown output format "xml"`},
		{"pg list: missing podgroup", admin, []string{"pg", "get", "nope"}, `not found`},
		{"pg describe: missing", admin, []string{"pg", "describe", "nope"}, `not found`},
		{"pg describe: no name", admin, []string{"pg", "describe"}, "name the podgroup to describe"},
		{"pg list: forbidden", alice, []string{"pg", "list", "-A"}, "forbidden"},
		{"pg list: unreachable", dead, []string{"pg", "list"}, "cannot reach the Kubernetes API server"},
		{"command list: unknown -o", admin, []string{"command", "list", "-o", "csv"}, `unknown output format "csv"`},
		{"command list: bad selector", admin, []string{"command", "list", "-l", "=x"}, "invalid --selector"},
		{"command list: forbidden", alice, []string{"command", "list", "-A"}, "forbidden"},
		{"command list: extra argument", admin, []string{"command", "list", "x"}, `unknown command "x"`},
	}
}
