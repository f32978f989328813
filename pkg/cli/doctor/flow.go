package doctor

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
)

// checkFlowCRDs says whether the cluster serves Volcano's flow.volcano.sh
// JobFlow and JobTemplate, which 'kubectl vc jobflow' and 'jobtemplate'
// need. They are Volcano's, installed with its jobflow controllers ('install'
// never installs them), so their absence is a warning naming what to
// install, never a FAIL: the other commands work without them.
func (o *Options) checkFlowCRDs(ctx context.Context) {
	want, err := volcanoflow.CRDs()
	if err != nil {
		o.add("flow", Fail, "this binary's JobFlow and JobTemplate CRDs cannot be read: "+err.Error(), "report a bug")
		return
	}
	for _, w := range want {
		got, err := o.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, w.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			o.add("flow", Warn, fmt.Sprintf("%s is not served: 'kubectl vc %s' cannot work (Volcano installs it with its jobflow controllers; 'kubectl vc install' does not)",
				w.Name, map[string]string{"JobFlow": "jobflow", "JobTemplate": "jobtemplate"}[w.Spec.Names.Kind]),
				"install Volcano with its jobflow and jobtemplate controllers, if you need JobFlows", w.Name)
			continue
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			o.cannot("flow", "the JobFlow and JobTemplate CRDs", err)
			return
		case err != nil:
			o.cannot("flow", "CRD "+w.Name, err)
			continue
		}
		st, fix := compareCRD(w, got)
		if fix != "" {
			fix = "upgrade Volcano (its jobflow controllers install this CRD)"
		}
		o.add("flow", st, describeCRD(w, got), fix, w.Name)
	}
}
