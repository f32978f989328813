package nodeset

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset/eventhandler"
)

// Slinky's resources the controller reads, as discovery names them. What
// the API server serves decides what the controller watches: NodeSets
// (without them it waits, see waitForNodeSets) and Slinky's Controller and
// RestApi (without them no NodeSet finds its slurmrestd that way).
const (
	resNodeSets    = "nodesets"
	resControllers = "controllers"
	resRestApis    = "restapis"
)

// servedKinds asks the API server which of Slinky's kinds it serves. Only
// a definite "not found" counts as not served: on any other error the
// kinds are assumed served and the informers retry as usual. ctx carries
// the logger.
func (c *Controller) servedKinds(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	list, err := c.kube.Discovery().ServerResourcesForGroupVersion(slinkyv1beta1.SchemeGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return out, nil
	case err != nil:
		klog.FromContext(ctx).Info("cannot tell which Slinky kinds are served; assuming NodeSets are", "err", err)
		out[resNodeSets] = true
		return out, nil
	}
	for _, r := range list.APIResources {
		out[r.Name] = true
	}
	return out, nil
}

// watchSlinky sets up the informers of Slinky's Controller and RestApi,
// through which each NodeSet's slurmrestd is found (slurmsource.go), and
// returns their HasSynced.
func (c *Controller) watchSlinky() ([]cache.InformerSynced, error) {
	ctrlInf := c.opt.VolcanoInformerFactory.Slinky().V1beta1().Controllers()
	apiInf := c.opt.VolcanoInformerFactory.Slinky().V1beta1().RestApis()
	// A Controller or RestApi that changes may change how every NodeSet of
	// its namespace reaches Slurm.
	if _, err := ctrlInf.Informer().AddEventHandler(eventhandler.Controller(c.wq, c.nodeSets)); err != nil {
		return nil, err
	}
	if _, err := apiInf.Informer().AddEventHandler(eventhandler.RestApi(c.wq, c.nodeSets)); err != nil {
		return nil, err
	}
	c.source.slinky.Store(&slinkyReader{controllers: ctrlInf.Lister(), restapis: apiInf.Lister()})
	return []cache.InformerSynced{ctrlInf.Informer().HasSynced, apiInf.Informer().HasSynced}, nil
}

// laterSlinky sets up the Slinky informers when the kinds came to be
// served after start-up (Slinky installed beside a running serve). It asks
// discovery at most once per CRDPoll and waits for the new caches.
func (c *Controller) laterSlinky(ctx context.Context) {
	src := c.source
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.slinky.Load() != nil || time.Since(src.slinkyChecked) < c.cfg.CRDPoll {
		return
	}
	src.slinkyChecked = time.Now()
	kinds, err := c.servedKinds(ctx)
	if err != nil || !kinds[resControllers] || !kinds[resRestApis] {
		return
	}
	synced, err := c.watchSlinky()
	if err != nil {
		klog.FromContext(ctx).Error(err, "watching Slinky's Controllers and RestApis")
		return
	}
	c.opt.StartInformers(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), synced...)
	klog.FromContext(ctx).Info("Slinky's Controller and RestApi kinds are served: NodeSets find their slurmrestd through them")
}

// waitForNodeSets returns once the API server serves NodeSets and their
// informers run, or false when ctx ends first. It says so in one log line
// and then waits quietly: a cluster without Slinky is a normal place for
// serve to run.
func (c *Controller) waitForNodeSets(ctx context.Context) bool {
	if c.nodeSets != nil {
		return true
	}
	logger := klog.FromContext(ctx)
	logger.Info("the API server serves no NodeSets (slinky.slurm.net/v1beta1): the NodeSet controller waits for the CRD", "every", c.cfg.CRDPoll)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(c.cfg.CRDPoll):
		}
		kinds, err := c.servedKinds(ctx)
		if err != nil || !kinds[resNodeSets] {
			continue
		}
		if err := c.watch(kinds); err != nil {
			logger.Error(err, "starting the NodeSet informers")
			return false
		}
		// The factories start the informers requested since they started.
		c.opt.StartInformers(ctx.Done())
		logger.Info("NodeSets are served: the NodeSet controller starts")
		return true
	}
}
