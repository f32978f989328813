package e2e

type badCase = struct {
	name       string
	kubeconfig string
	args       []string
	want       string
}

// extraBadInput adds the cases of the podgroup and command verbs.
func extraBadInput(admin, alice, dead string) []badCase {
	return nil
}
