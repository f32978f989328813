// Package nodesetconditions declares, in one table, the NodeSet status
// conditions kubectl-vc's NodeSet controller writes: each type, the
// reasons it is written with, the part of the controller that owns it and,
// for a False reason, what to do about it. The controller's status merge
// keeps exactly these types (Types), doctor reads SlurmReachable's
// reasons and fixes from here, and docs/nodeset.md's list of them is made
// from here (Markdown, 'make docs'). A new condition is one entry here
// and its step in the sync.
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

// Reason is one reason a condition is written with: Means says what it
// tells (for the docs); Fix, for a False reason, says what to do ("%[1]s"
// is the NodeSet's namespace, "%[2]s" its name), as doctor prints it.
type Reason struct {
	Name  string
	Means string
	Fix   string
}

// Condition is one entry of the table.
type Condition struct {
	Type string
	// Says is what the condition tells when True (for the docs).
	Says string
	// Owner is the step of the NodeSet sync that evaluates it.
	Owner string
	// True and False are the reasons of each status.
	True, False []Reason
}

// Table is every condition the NodeSet controller writes, in the order
// status shows them. docs/nodeset.md's list of conditions is made from it
// ('make docs'; TestDocsTable fails while the two differ).
var Table = []Condition{
	{Type: SpecSupported, Says: "everything the spec asks for is acted on", Owner: "fetch and check (spec.go)",
		True: []Reason{{Name: "Supported", Means: "every field of the spec is acted on"}},
		False: []Reason{{Name: "Unsupported",
			Means: "the message lists the fields not acted on (the NodeSet is left alone where acting on the rest would be unsafe)",
			Fix:   "remove the fields the condition's message lists, or run Slinky's operator for them"}}},
	{Type: SlurmReachable, Says: "the last sync read Slurm's node states; while False nothing is done to the NodeSet's pods", Owner: "fetch and check (slurmsource.go, pkg/slurm/slinky)",
		True: []Reason{{Name: "Refreshed", Means: "node states read; the message says how (REST and its API version, URL and objects, or the commands)"}},
		False: []Reason{
			{Name: "NoControllerRef", Means: "`spec.controllerRef` names no Slinky Controller",
				Fix: "set spec.controllerRef to the Slinky Controller of its Slurm cluster"},
			{Name: "ControllerNotFound", Means: "no Controller of that name in the NodeSet's namespace",
				Fix: "create the Controller spec.controllerRef names, or point spec.controllerRef at an existing one"},
			{Name: "RestApiNotFound", Means: "no RestApi in the namespace names that Controller",
				Fix: "create a Slinky RestApi whose spec.controllerRef names the NodeSet's Controller (slurmrestd is how serve reaches Slurm)"},
			{Name: "ServiceNotFound", Means: "the Service `<restapi>-restapi` is missing or has no cluster IP",
				Fix: "the RestApi's Service <restapi>-restapi is missing or has no cluster IP: check Slinky's operator, or create it"},
			{Name: "NoJWTKey", Means: "the Controller names no key Secret (`spec.jwtKeyRef`), or that Secret lacks the key",
				Fix: "set the Controller's spec.jwtKeyRef to a Secret key holding the cluster's JWT HS256 key"},
			{Name: "SecretNotFound", Means: "the Secret `jwtKeyRef` names does not exist (one created is seen within 30 s)",
				Fix: "create the Secret the Controller's spec.jwtKeyRef names"},
			{Name: "SecretForbidden", Means: "`serve` may not get that Secret (`kubectl vc install --rbac`, or your own Role: [Serve beside Slinky](#serve-beside-slinky))",
				Fix: "let serve's ServiceAccount get that Secret: kubectl vc install --serve with %[1]s in --slurm-namespaces"},
			{Name: "NamespaceNotServed", Means: "`serve --slurm-namespaces` names namespaces and not this one: serve makes nothing for the NodeSet (no pod, claim, Service, budget, ConfigMap or revision; `install --slurm-namespaces` grants those writes only in the named namespaces) and writes only this condition, with a `NamespaceNotServed` Warning event ([security.md](security.md#the-slurm-key-trust-model))",
				Fix: "serve makes nothing for the NodeSets of namespaces its --slurm-namespaces does not name: if every writer of NodeSets, Controllers, RestApis and Services in %[1]s may use its Slurm key, add it: kubectl vc install --serve --slurm-namespaces=<the namespaces named now>,%[1]s, then serve acts at its next start (docs/security.md)"},
			{Name: "SlurmNotTrusted", Means: "serve has no `--slurm-namespaces`, and the NodeSet's Slurm is found through Slinky's objects, which serve uses only in named namespaces ([serve beside Slinky](#serve-beside-slinky), [security.md](security.md))",
				Fix: "if every writer of NodeSets, Controllers, RestApis and Services in %[1]s may use its Slurm key, add it to serve's --slurm-namespaces: kubectl vc install --serve --slurm-namespaces=<the namespaces named now>,%[1]s (docs/security.md)"},
			{Name: "KeyNotTrusted", Means: "the JWT key Secret is not marked for signing Slurm tokens: serve signs only with a Secret labelled `kubectl-vc.io/slurm-jwt-key=true` (or the one Slinky's Helm chart creates), so that a Controller cannot name any Secret",
				Fix: "label the JWT key Secret the Controller's spec.jwtKeyRef names: kubectl label secret -n %[1]s NAME kubectl-vc.io/slurm-jwt-key=true"},
			{Name: "KeyTooLong", Means: "the JWT key in the Secret is longer than serve reads (16 KiB): serve keeps nothing of it, and signs no token",
				Fix: "put the cluster's JWT HS256 key (32 bytes, the file slurm.conf's AuthAltParameters jwt_key names) in the Secret key the Controller's spec.jwtKeyRef names"},
			{Name: "Unauthorized", Means: "`slurmrestd` refused the token: HTTP 401 (none accepted) or 511 (another key, or expired); a fixed Secret is read again at once, `--slurm-jwt-key-file` only at start (restart `serve`); with `--slurm-token-file`, renew the token",
				Fix: "slurmrestd refused the token: the key in the Secret (or --slurm-jwt-key-file) must be the one slurm.conf's AuthAltParameters jwt_key names"},
			{Name: "NoSlurm", Means: "no Slinky kinds, no `--slurm-rest-url`, no Slurm commands (Slinky's CRDs and objects installed later are picked up within 30 s)",
				Fix: "give serve --slurm-rest-url with --slurm-jwt-key-file, or run it where Slinky's Controller and RestApi kinds are served"},
			{Name: "RefreshFailed", Means: "Slurm was found but did not answer: connection refused or timed out (e.g. no route to a cluster IP), an API version not served, a command failing; the message and the `SlurmUnreachable` events show the error",
				Fix: "check that slurmrestd (or slurmctld) runs and answers: 'kubectl vc nodeset describe %[2]s -n %[1]s' shows the error"},
			{Name: "NodeBudgetSpent", Means: "the Slurm nodes and jobs every slurmrestd client of serve keeps together reached `--slurm-node-budget` (262 144 by default); the message names the three largest holders, and the client keeps its last nodes and asks again at the next sync. If a slurmrestd listed there is not yours, its NodeSets' owner is filling serve's budget",
				Fix: "serve's slurmrestd clients together keep more Slurm nodes and running jobs than --slurm-node-budget allows: raise it (docs/security.md)"},
		}},
	{Type: ServiceReady, Says: "the headless Service is the NodeSet's", Owner: "dependents (dependents.go)",
		True: []Reason{{Name: "Owned", Means: "the Service exists and the NodeSet controls it"}},
		False: []Reason{{Name: "NameTaken", Means: "a Service of that name the NodeSet does not control stands: it is left alone (a `ServiceNameTaken` Warning event)",
			Fix: "rename or delete the Service of that name that the NodeSet does not own"}}},
	{Type: DisruptionBudgetReady, Says: "the PodDisruptionBudget protecting the NodeSet's pods is the NodeSet's (or protection is off)", Owner: "dependents (dependents.go)",
		True: []Reason{{Name: "Owned", Means: "the budget exists and the NodeSet controls it"},
			{Name: "ProtectionOff", Means: "`workloadDisruptionProtection` is off: no budget"}},
		False: []Reason{{Name: "NameTaken", Means: "a PodDisruptionBudget of that name the NodeSet does not control stands: it is left alone (a `PodDisruptionBudgetNameTaken` Warning event)",
			Fix: "rename or delete the PodDisruptionBudget of that name that the NodeSet does not own"}}},
	{Type: SSHConfigReady, Says: "the ConfigMap holding the workers' sshd_config is the NodeSet's (or ssh is off); while False no pod is created or replaced", Owner: "dependents (ssh.go)",
		True: []Reason{{Name: "Owned", Means: "the ConfigMap `<nodeset>-ssh-config` exists, is the NodeSet's and is current"},
			{Name: "SSHOff", Means: "ssh is not enabled: pods mount no sshd_config"}},
		False: []Reason{
			{Name: "InvalidSSH", Means: "`spec.ssh` cannot be acted on (`extraSshdConfig` past 1 MiB, `sssdConfRef` without name or key)",
				Fix: "fix spec.ssh as the condition's message says"},
			{Name: "NameTaken", Means: "a ConfigMap of that name the NodeSet does not control stands: it is never written or adopted (a `ConfigMapNameTaken` Warning event)",
				Fix: "rename or delete the ConfigMap of that name that the NodeSet does not own"},
			{Name: "Immutable", Means: "the NodeSet's ConfigMap is immutable and outdated (a `ConfigMapImmutable` Warning event)",
				Fix: "delete the immutable ConfigMap; the controller writes it again"},
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
