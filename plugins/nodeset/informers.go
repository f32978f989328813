package nodeset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// watch sets up the informers and their handlers. It runs once the API
// server serves NodeSets, at Initialize or later in Run.
func (c *Controller) watch(kinds map[string]bool) error {
	opt := c.opt
	// Watched whatever reaches Slurm: besides finding slurmrestd, a
	// NodeSet's Controller shapes its pods (slurmdpod.go).
	if kinds[resControllers] && kinds[resRestApis] {
		synced, err := c.watchSlinky()
		if err != nil {
			return err
		}
		c.synced = append(c.synced, synced...)
	}
	nsInf := opt.VolcanoInformerFactory.Slinky().V1beta1().NodeSets()
	c.nodeSets = nsInf.Lister()
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNodeSet,
		UpdateFunc: func(_, obj any) { c.enqueueNodeSet(obj) },
		DeleteFunc: c.enqueueNodeSet,
	}); err != nil {
		return err
	}

	podInf := opt.KubeInformerFactory.Core().V1().Pods()
	if err := podInf.Informer().AddIndexers(cache.Indexers{podsByNodeIndex: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return err
	}
	c.pods = podInf.Lister()
	c.podIndex = podInf.Informer().GetIndexer()
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return err
	}

	revInf := opt.KubeInformerFactory.Apps().V1().ControllerRevisions()
	c.revisions = revInf.Lister()
	if _, err := revInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) },
		DeleteFunc: c.enqueueOwner,
	}); err != nil {
		return err
	}

	nodeInf := opt.KubeInformerFactory.Core().V1().Nodes()
	c.nodes = nodeInf.Lister()
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		// DaemonSet mode: nodes coming, going or changing (daemonset.go).
		AddFunc:    c.addNode,
		UpdateFunc: func(old, cur any) { c.updateNode(old, cur); c.updateNodeForDaemons(old, cur) },
		DeleteFunc: c.deleteNode,
	}); err != nil {
		return err
	}
	// serve's own Services, PDBs and ssh ConfigMaps only (owned.go): the
	// API server sends no other, whatever any namespace holds.
	own := opt.KubeInformerFactoryForLabels(ownSelector)
	svcInf := own.Core().V1().Services()
	c.services = svcInf.Lister()
	pdbInf := own.Policy().V1().PodDisruptionBudgets()
	c.pdbs = pdbInf.Lister()
	// A deleted Service or PDB is put back.
	for _, inf := range []cache.SharedIndexInformer{svcInf.Informer(), pdbInf.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueOwner}); err != nil {
			return err
		}
	}
	// The ssh-config ConfigMaps (ssh.go, handlers_configmap.go).
	cmInf := own.Core().V1().ConfigMaps()
	c.configMaps = cmInf.Lister()
	if _, err := cmInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueForConfigMap,
		UpdateFunc: c.updateConfigMap,
		DeleteFunc: c.enqueueForConfigMap,
	}); err != nil {
		return err
	}
	c.synced = append(c.synced, nsInf.Informer().HasSynced, podInf.Informer().HasSynced,
		revInf.Informer().HasSynced, nodeInf.Informer().HasSynced, svcInf.Informer().HasSynced, pdbInf.Informer().HasSynced,
		cmInf.Informer().HasSynced)
	c.synced = append(c.synced, c.watchRestApiServices()...)
	return nil
}
