package wait

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// SpecOf is the Spec of a wait for the named objects of kind k in ns
// (none for a cluster-scoped kind), over k's typed client of c.
func SpecOf[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], c versioned.Interface, ns string, names []string, timeout time.Duration) Spec {
	kc := k.Client(c, ns)
	return Spec{Kind: k.Name, Namespace: ns, Names: names, Timeout: timeout, ListWatch: ListWatch(names, kc.List, kc.Watch)}
}
