package framework

import "k8s.io/component-base/featuregate"

// Feature gates of 'serve' (--feature-gates).
const (
	// QueueCommandSync makes the queue controller take Commands that target queues.
	QueueCommandSync featuregate.Feature = "QueueCommandSync"
	// WorkLoadSupport makes the podgroup controller create groups for
	// ReplicaSet and StatefulSet workloads.
	WorkLoadSupport featuregate.Feature = "WorkLoadSupport"
)

// NewFeatureGate returns a fresh gate with our features at their defaults.
// Each 'serve' run owns its gate; there is no process-wide one.
func NewFeatureGate() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		QueueCommandSync: {Default: true, PreRelease: featuregate.Beta},
		WorkLoadSupport:  {Default: true, PreRelease: featuregate.Beta},
	}); err != nil {
		panic(err) // static input: cannot fail
	}
	return g
}
