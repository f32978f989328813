package eventhandler

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// ConfigMap syncs the NodeSet a ConfigMap named "<nodeset>-ssh-config" is
// the sshd_config of, whoever made it: its creation, change or deletion may
// end the NodeSet's wait for it, and a deleted one of ours is made again.
// Other ConfigMaps, and those of that shape no NodeSet is named for (any
// tenant may make any number), sync nothing; nor does a resync (same
// resourceVersion).
func ConfigMap(q Queue, nodeSets slinkylisters.NodeSetLister) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		m := objectMeta(obj)
		if m == nil {
			return
		}
		set, ok := strings.CutSuffix(m.GetName(), slinkyv1beta1.SSHConfigSuffix)
		if !ok || set == "" {
			return
		}
		if _, err := nodeSets.NodeSets(m.GetNamespace()).Get(set); err == nil {
			q.Add(m.GetNamespace() + "/" + set)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.ConfigMap)
			n, ok2 := cur.(*corev1.ConfigMap)
			if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
				return
			}
			enqueue(cur)
		},
		DeleteFunc: enqueue,
	}
}
