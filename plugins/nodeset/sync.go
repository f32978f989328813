package nodeset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// nodeSetSync is one sync of one NodeSet: what the phases read once and
// share, so that nothing is threaded down the call chain. It is built at
// the start of a sync and dropped at its end. Each phase is a method:
// revisions (history.go), adoption (adopt.go), Slurm drain and cordons
// (drain.go), scaling (scale.go), rolling update (update.go), status
// (status.go).
type nodeSetSync struct {
	c *Controller
	// key is the NodeSet's queue key, also its expectations key.
	key string
	// set is a deep copy of the cached NodeSet: never the informer's copy.
	set *slinkyv1beta1.NodeSet

	// Revisions (phase 2): the NodeSet's own revisions, oldest first, the
	// revision of its current template, its hash, the hashes of all
	// revisions equal to it (current) and the collision count to record.
	revisions  []*appsv1.ControllerRevision
	update     *appsv1.ControllerRevision
	updateHash string
	current    map[string]bool
	collision  int32

	// adoptChecked says whether canAdopt was asked this sync, adoptErr
	// what it answered (adopt.go).
	adoptChecked bool
	adoptErr     error

	// pods (phase 3) are the NodeSet's pods, claimed and sorted by ordinal.
	pods []*corev1.Pod

	// The pod phases (5 and 6), set by syncPods. replicas is the desired
	// count, now the instant availability is judged at.
	replicas int
	now      time.Time
	// active are the pods neither terminating nor finished; terminating
	// names the pods that are (an ordinal waits for them).
	active      []*corev1.Pod
	terminating map[string]bool
	// nodeCordoned names the pods cordoned for their Kubernetes node,
	// condemned those a scale-in retires.
	nodeCordoned map[string]bool
	condemned    map[string]bool
	// sshHold: no pod is created or replaced, the ConfigMap the pods
	// would mount as sshd_config not being (yet) what this NodeSet says
	// (ssh.go).
	sshHold bool
	// wait is true when a phase waits for Slurm to drain a node; errs
	// collects the pod phases' errors, which do not stop the next phase.
	wait bool
	errs []error

	// target is the NodeSet's Slurm and slurm its client (nil until
	// connect found it); slurmErr is why Slurm's node states could not be
	// read (nil: read).
	target   *slurmTarget
	slurm    slurm.Client
	slurmErr error
	// conditions are the status conditions this sync evaluated.
	conditions []metav1.Condition
}

// sync is one NodeSet sync: its phases, one step each, top to bottom, as
// the seed's Sync has them. It returns how soon to look again when waiting
// on Slurm (or for the periodic Slurm status refresh).
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Phase 1: fetch (a NodeSet that is gone is forgotten: nil).
	s, err := c.fetch(key)
	if s == nil {
		return 0, err
	}
	if !c.served(s.set.Namespace) {
		// Nothing but status outside --slurm-namespaces (served.go).
		return 0, s.syncNotServed(ctx)
	}
	// Phase 4 is decided now, before the pods are listed: the cache then
	// holds every pod whose creation was expected. Decided after the list,
	// an event arriving in between would make a stale list look complete.
	satisfied := c.exp.satisfied(key)
	// Phase 2: revisions (history.go).
	if err := s.syncRevisions(ctx); err != nil {
		return 0, err
	}
	// Phase 3: the pods, adopting and releasing by selector (adopt.go).
	if err := s.claimPods(ctx); err != nil {
		return 0, err
	}
	// Phase 1, check: Slurm reached, the spec one this controller acts on.
	refuse := s.check(ctx)
	// What does not depend on the pod count: the reservation, protection
	// of busy pods, their Slurm states, Service, PDB, sshd_config.
	errs := s.syncDependents(ctx, refuse)
	// Phases 4 to 6: expectations gate scale and update.
	requeue, err := s.syncScaleAndUpdate(ctx, satisfied, refuse)
	syncErr := errors.Join(append(errs, err)...)
	// Phase 7: status, even when actions were skipped or failed (status.go).
	if err := s.syncStatus(ctx); err != nil {
		return 0, errors.Join(syncErr, err)
	}
	if syncErr != nil {
		return 0, syncErr
	}
	c.metrics.syncs.Inc()
	return requeue, nil
}

// fetch reads the NodeSet of key from the cache into a new sync. A
// NodeSet that is gone takes its expectations, claim record and metrics
// along (or they would grow with every deleted NodeSet) and gives nil.
func (c *Controller) fetch(key string) (*nodeSetSync, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, nil
	}
	cached, err := c.nodeSets.NodeSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.forget(key)
		c.claimOwners.forget(key)
		c.metrics.delete(namespace, name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Never modify the informer's copy.
	return &nodeSetSync{c: c, key: key, set: cached.DeepCopy()}, nil
}

// check asks Slurm once per sync; its answers feed both actions and
// status. Without them the sync stops before any action (as Slinky's
// operator stops): a stale cache could say a busy node is idle; the error
// (slurmErr) retries the NodeSet with the queue's backoff, and status says
// why. Then what the spec asks for and this controller does not do is
// said in status and an event (spec.go): refuse says the NodeSet asks for
// what cannot be done safely and is left alone.
func (s *nodeSetSync) check(ctx context.Context) (refuse bool) {
	c := s.c
	if s.slurmErr = s.connect(ctx); s.slurmErr != nil {
		c.metrics.slurmErrors.Inc()
		reason := unreachableReason(s.slurmErr)
		if reason == "Unauthorized" {
			// The key may have been rotated: read the Secret again.
			c.source.keys.forget()
		}
		if reason == "RefreshFailed" || reason == "Unauthorized" {
			s.slurmErr = fmt.Errorf("cannot read Slurm node states: %w", s.slurmErr)
		}
		s.setFalseWithWarning(conditions.SlurmReachable, reason, "SlurmUnreachable", s.slurmErr.Error())
	} else {
		s.setCondition(conditions.SlurmReachable, true, "Refreshed", s.target.describe(ctx))
	}
	return s.checkSpec(ctx)
}

// syncDependents keeps what does not depend on the pod count. The
// ScheduledUpdate reservation and its finalizer (scheduled.go) also for a
// NodeSet being deleted; for the others, busy pods are protected from
// eviction whatever else happens (protect.go), their Slurm states written
// (podstate.go), and the Service, the PodDisruptionBudget and the
// sshd_config ConfigMap kept (dependents.go, ssh.go). The errors include
// Slurm's, and none stops the next step.
func (s *nodeSetSync) syncDependents(ctx context.Context, refuse bool) []error {
	errs := []error{s.slurmErr}
	errs = append(errs, s.syncReservation(ctx, refuse))
	if s.set.DeletionTimestamp == nil && !refuse {
		if s.slurmErr == nil {
			errs = append(errs, s.syncProtection(ctx), s.syncPodStates(ctx))
		}
		errs = append(errs, s.syncService(ctx), s.syncDisruptionBudget(ctx), s.syncSSHConfig(ctx))
	}
	return errs
}

// syncScaleAndUpdate is phases 4 to 6. Expectations gate every action on
// pods: until the cache shows our last creations and deletions (satisfied),
// its pod count is not to be trusted. Nor is anything done without Slurm's
// answers, to a NodeSet being deleted, or to one refused. Then scale and
// update (syncPods), and once they went through, the old revisions and
// claims are trimmed. It returns when to look again: DrainPoll while a
// drain is awaited, else Resync.
func (s *nodeSetSync) syncScaleAndUpdate(ctx context.Context, satisfied, refuse bool) (time.Duration, error) {
	requeue := s.c.cfg.Resync
	if s.slurmErr != nil || !satisfied || s.set.DeletionTimestamp != nil || refuse {
		return requeue, nil
	}
	wait, err := s.syncPods(ctx)
	if wait {
		requeue = s.c.cfg.DrainPoll
	}
	if err != nil {
		return requeue, err
	}
	return requeue, errors.Join(s.truncateHistory(ctx), s.syncClaimOwners(ctx))
}

// connect finds the NodeSet's Slurm and refreshes its node states.
func (s *nodeSetSync) connect(ctx context.Context) error {
	t, err := s.c.slurmFor(ctx, s.set)
	if err != nil {
		return err
	}
	s.target, s.slurm = t, t.client
	return t.client.Refresh(ctx)
}

// syncPods is phases 5 and 6: Kubernetes node cordons, scale in and out,
// updates. It returns true when it waits for Slurm to drain a node. A
// phase's errors do not stop the next one; all are returned together.
func (s *nodeSetSync) syncPods(ctx context.Context) (bool, error) {
	s.replicas = 1
	if s.set.Spec.Replicas != nil {
		s.replicas = int(*s.set.Spec.Replicas)
	}
	s.now = time.Now()
	s.condemned = map[string]bool{}

	s.sortPods(ctx)          // scale.go: finished pods are deleted
	s.syncNodeCordons(ctx)   // drain.go
	s.syncTopology(ctx)      // topology.go
	s.syncSlurmTopology(ctx) // topology.go
	s.syncFeatures(ctx)      // features.go
	if daemonSetMode(s.set) {
		// One pod per matching Kubernetes node (daemonset.go); the same
		// cordon, drain and update rules as below once the pods are
		// decided.
		created := s.syncDaemonPods(ctx)
		s.syncCordonsAndDrain(ctx) // drain.go
		if !created && len(s.condemned) == 0 {
			w, err := s.rollingUpdate(ctx) // update.go
			if err != nil {
				s.errs = append(s.errs, err)
			}
			s.wait = s.wait || w
		}
		return s.wait, errors.Join(s.errs...)
	}
	s.retireDaemonPods(ctx)    // daemonset.go: scalingMode changed
	s.scaleIn(ctx)             // scale.go
	s.syncCordonsAndDrain(ctx) // drain.go
	if missing := s.replicas - len(s.active); missing > 0 {
		s.scaleOut(ctx, missing) // scale.go
	} else if len(s.condemned) == 0 {
		w, err := s.rollingUpdate(ctx) // update.go
		if err != nil {
			s.errs = append(s.errs, err)
		}
		s.wait = s.wait || w
	}
	return s.wait, errors.Join(s.errs...)
}
