package nodeset

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// enqueueForConfigMap syncs the NodeSet a ConfigMap named
// "<nodeset>-ssh-config" is the sshd_config of, whoever made it: its
// creation, change or deletion may end an sshHold (ssh.go), and a deleted
// one of ours is made again. Other ConfigMaps, and those of that shape no
// NodeSet is named for (any tenant may make any number), sync nothing.
func (c *Controller) enqueueForConfigMap(obj any) {
	m := metaOf(obj)
	if m == nil || c.nodeSets == nil {
		return
	}
	set, ok := strings.CutSuffix(m.GetName(), slinkyv1beta1.SSHConfigSuffix)
	if !ok || set == "" {
		return
	}
	if _, err := c.nodeSets.NodeSets(m.GetNamespace()).Get(set); err == nil {
		c.wq.Add(m.GetNamespace() + "/" + set)
	}
}

// updateConfigMap: a resync (same resourceVersion) changes nothing.
func (c *Controller) updateConfigMap(old, cur any) {
	if o, n := old.(*corev1.ConfigMap), cur.(*corev1.ConfigMap); o.ResourceVersion == n.ResourceVersion {
		return
	}
	c.enqueueForConfigMap(cur)
}
