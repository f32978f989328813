// Package nodesetconditions declares, in one table, the NodeSet status
// conditions kubectl-vc's NodeSet controller writes: each type, the
// reasons it is written with, the part of the controller that owns it and,
// for a False reason, what to do about it. The controller's status merge
// keeps exactly these types (Types), doctor reads SlurmReachable's
// reasons and fixes from here, and the reference in docs/nodeset.md lists
// them. A new condition is one entry here and its step in the sync.
package nodesetconditions

// The condition types. Each is True when all is well; False says what
// stands in the way, and why, in its reason and message. Conditions of
// other types (Slinky's ReservationCreated) are left alone.
const (
	// SpecSupported: everything the NodeSet asks for is done. False lists
	// what is not (the NodeSet is then left alone where acting would be
	// unsafe).
	SpecSupported = "SpecSupported"
	// SlurmReachable: the last sync could read Slurm's node states. False
	// stops every action on the NodeSet until it can.
	SlurmReachable = "SlurmReachable"
	// ServiceReady: the headless Service is the NodeSet's.
	ServiceReady = "ServiceReady"
	// DisruptionBudgetReady: the PodDisruptionBudget protecting the
	// NodeSet's pods is the NodeSet's (or protection is off).
	DisruptionBudgetReady = "DisruptionBudgetReady"
	// SSHConfigReady: the ConfigMap holding the workers' sshd_config is the
	// NodeSet's (or ssh is off).
	SSHConfigReady = "SSHConfigReady"
)

// Reason is one reason a condition is written with; Fix, for a False
// reason, says what to do ("%[1]s" is the NodeSet's namespace, "%[2]s" its
// name).
type Reason struct {
	Name string
	Fix  string
}

// Condition is one entry of the table.
type Condition struct {
	Type string
	// Owner is the step of the NodeSet sync that evaluates it.
	Owner string
	// True and False are the reasons of each status.
	True, False []Reason
}

// Table is every condition the NodeSet controller writes, in the order
// status shows them.
var Table = []Condition{
	{Type: SpecSupported, Owner: "fetch and check (spec.go)",
		True:  []Reason{{Name: "Supported"}},
		False: []Reason{{"Unsupported", "remove the fields the condition's message lists, or run Slinky's operator for them"}}},
	{Type: SlurmReachable, Owner: "fetch and check (slurmsource.go, pkg/slurm/slinky)",
		True: []Reason{{Name: "Refreshed"}},
		False: []Reason{
			{"NoControllerRef", "set spec.controllerRef to the Slinky Controller of its Slurm cluster"},
			{"ControllerNotFound", "create the Controller spec.controllerRef names, or point spec.controllerRef at an existing one"},
			{"RestApiNotFound", "create a Slinky RestApi whose spec.controllerRef names the NodeSet's Controller (slurmrestd is how serve reaches Slurm)"},
			{"ServiceNotFound", "the RestApi's Service <restapi>-restapi is missing or has no cluster IP: check Slinky's operator, or create it"},
			{"NoJWTKey", "set the Controller's spec.jwtKeyRef to a Secret key holding the cluster's JWT HS256 key"},
			{"SecretNotFound", "create the Secret the Controller's spec.jwtKeyRef names"},
			{"SecretForbidden", "let serve's ServiceAccount get that Secret: kubectl vc install --serve with %[1]s in --slurm-namespaces"},
			{"NamespaceNotServed", "serve makes nothing for the NodeSets of namespaces its --slurm-namespaces does not name: if every writer of NodeSets, Controllers, RestApis and Services in %[1]s may use its Slurm key, add it: kubectl vc install --serve --slurm-namespaces=<the namespaces named now>,%[1]s, then serve acts at its next start (docs/security.md)"},
			{"SlurmNotTrusted", "if every writer of NodeSets, Controllers, RestApis and Services in %[1]s may use its Slurm key, add it to serve's --slurm-namespaces: kubectl vc install --serve --slurm-namespaces=<the namespaces named now>,%[1]s (docs/security.md)"},
			{"KeyNotTrusted", "label the JWT key Secret the Controller's spec.jwtKeyRef names: kubectl label secret -n %[1]s NAME kubectl-vc.io/slurm-jwt-key=true"},
			{"Unauthorized", "slurmrestd refused the token: the key in the Secret (or --slurm-jwt-key-file) must be the one slurm.conf's AuthAltParameters jwt_key names"},
			{"NoSlurm", "give serve --slurm-rest-url with --slurm-jwt-key-file, or run it where Slinky's Controller and RestApi kinds are served"},
			{"RefreshFailed", "check that slurmrestd (or slurmctld) runs and answers: 'kubectl vc nodeset describe %[2]s -n %[1]s' shows the error"},
			{"NodeBudgetSpent", "serve's slurmrestd clients together keep more Slurm nodes and running jobs than --slurm-node-budget allows: raise it (docs/security.md)"},
		}},
	{Type: ServiceReady, Owner: "dependents (dependents.go)",
		True:  []Reason{{Name: "Owned"}},
		False: []Reason{{"NameTaken", "rename or delete the Service of that name that the NodeSet does not own"}}},
	{Type: DisruptionBudgetReady, Owner: "dependents (dependents.go)",
		True:  []Reason{{Name: "Owned"}, {Name: "ProtectionOff"}},
		False: []Reason{{"NameTaken", "rename or delete the PodDisruptionBudget of that name that the NodeSet does not own"}}},
	{Type: SSHConfigReady, Owner: "dependents (ssh.go)",
		True: []Reason{{Name: "Owned"}, {Name: "SSHOff"}},
		False: []Reason{
			{"InvalidSSH", "fix spec.ssh as the condition's message says"},
			{"NameTaken", "rename or delete the ConfigMap of that name that the NodeSet does not own"},
			{"Immutable", "delete the immutable ConfigMap; the controller writes it again"},
		}},
}

// Types are the condition types of the table, in its order: the types the
// controller's status merge keeps.
func Types() []string {
	out := make([]string, len(Table))
	for i, c := range Table {
		out[i] = c.Type
	}
	return out
}

// Fix is what to do about condition typ False with reason ("" when the
// table says nothing).
func Fix(typ, reason string) string {
	for _, c := range Table {
		if c.Type != typ {
			continue
		}
		for _, r := range c.False {
			if r.Name == reason {
				return r.Fix
			}
		}
	}
	return ""
}
