package nodeset

import (
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset/eventhandler"
)

// watch sets up the informers and their handlers (eventhandler: which
// NodeSets each event syncs). It runs once the API server serves NodeSets,
// at Initialize or later in Run.
func (c *Controller) watch(kinds map[string]bool) error {
	opt := c.opt
	nsInf := opt.VolcanoInformerFactory.Slinky().V1beta1().NodeSets()
	c.nodeSets = nsInf.Lister()
	// Watched whatever reaches Slurm: besides finding slurmrestd, a
	// NodeSet's Controller shapes its pods (slurmdpod.go).
	if kinds[resControllers] && kinds[resRestApis] {
		synced, err := c.watchSlinky()
		if err != nil {
			return err
		}
		c.synced = append(c.synced, synced...)
	}
	if _, err := nsInf.Informer().AddEventHandler(eventhandler.NodeSet(c.wq)); err != nil {
		return err
	}

	podInf := opt.KubeInformerFactory.Core().V1().Pods()
	if err := podInf.Informer().AddIndexers(eventhandler.PodIndexers()); err != nil {
		return err
	}
	c.pods = podInf.Lister()
	c.podIndex = podInf.Informer().GetIndexer()
	if _, err := podInf.Informer().AddEventHandler(eventhandler.Pod(c.wq, c.exp)); err != nil {
		return err
	}

	revInf := opt.KubeInformerFactory.Apps().V1().ControllerRevisions()
	c.revisions = revInf.Lister()
	if _, err := revInf.Informer().AddEventHandler(eventhandler.ControllerRevision(c.wq)); err != nil {
		return err
	}

	nodeInf := opt.KubeInformerFactory.Core().V1().Nodes()
	c.nodes = nodeInf.Lister()
	// Cordons and topology reach the pods on a node; in DaemonSet mode
	// (daemonset.go) nodes coming, going or changing gain or lose pods.
	if _, err := nodeInf.Informer().AddEventHandler(eventhandler.Node(c.wq, c.podIndex, c.nodeSets, daemonSetMode)); err != nil {
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
	if _, err := svcInf.Informer().AddEventHandler(eventhandler.Service(c.wq)); err != nil {
		return err
	}
	if _, err := pdbInf.Informer().AddEventHandler(eventhandler.PodDisruptionBudget(c.wq)); err != nil {
		return err
	}
	// The ssh-config ConfigMaps (ssh.go).
	cmInf := own.Core().V1().ConfigMaps()
	c.configMaps = cmInf.Lister()
	if _, err := cmInf.Informer().AddEventHandler(eventhandler.ConfigMap(c.wq, c.nodeSets)); err != nil {
		return err
	}
	c.synced = append(c.synced, nsInf.Informer().HasSynced, podInf.Informer().HasSynced,
		revInf.Informer().HasSynced, nodeInf.Informer().HasSynced, svcInf.Informer().HasSynced, pdbInf.Informer().HasSynced,
		cmInf.Informer().HasSynced)
	c.synced = append(c.synced, c.watchRestApiServices()...)
	return nil
}
