package controller

// Leader election: the manager runs its controllers only while it holds the
// Lease, and gives the Lease up only once they have stopped.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

func runWithLeaderElection(ctx context.Context, kube kubernetes.Interface, o Config, ready *atomic.Value, p *progress,
	run func(context.Context) error) error {
	id := o.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = host + "_" + uuid.NewString()
	}
	lock := &heldLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaderElection.ResourceNamespace, Name: o.LeaderElection.ResourceName},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}}
	// A standby replica is healthy and ready: it is doing its job, which is
	// to wait for the lease.
	ready.Store("ok: standby, waiting for the lease")
	p.wait(fmt.Sprintf("the leader-election Lease %s/%s (a standby acts once it holds it)", o.LeaderElection.ResourceNamespace, o.LeaderElection.ResourceName))
	var (
		mu     sync.Mutex // runErr is written by the elector's goroutine
		runErr error
		lost   atomic.Bool
	)
	// leading is closed when OnStartedLeading returns. The elector runs
	// that callback in a goroutine of its own, once it has written the
	// Lease as its holder, and does not wait for it. Whether it was started
	// at all is told by the lock (heldLock): the goroutine may not have
	// begun when le.Run returns.
	leading := make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchdog := leaderelection.NewLeaderHealthzAdaptor(leaderHealthTimeout)
	p.health.setLeader(watchdog)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		WatchDog:      watchdog,
		Name:          keys.ServeName,
		LeaseDuration: o.LeaderElection.LeaseDuration.Duration,
		RenewDeadline: o.LeaderElection.RenewDeadline.Duration,
		RetryPeriod:   o.LeaderElection.RetryPeriod.Duration,
		// Not released by the elector when ctx ends: it would release while
		// the controllers are still stopping, and a standby could act beside
		// them. releaseLease does it once they have returned.
		ReleaseOnCancel: false,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				defer close(leading)
				p.done()
				klog.FromContext(ctx).Info("became leader", "identity", id, "lease", o.LeaderElection.ResourceNamespace+"/"+o.LeaderElection.ResourceName)
				ready.Store("")
				err := run(lctx)
				mu.Lock()
				runErr = err
				mu.Unlock()
				// Leadership is given up only once the controllers have
				// stopped, so two replicas never act at the same time.
				cancel()
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					lost.Store(true)
					p.health.fail("lost the leader-election Lease")
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(runCtx)
	// Once ctx has ended, the controllers are waited for (within Run's
	// grace, unless WaitForStop). A lost Lease is not waited on: the other
	// replica may act already, and serve exits at once.
	if lock.held.Load() && (o.WaitForStop || !lost.Load()) {
		<-leading
	}
	if lock.held.Load() && !lost.Load() {
		if err := releaseLease(lock.Interface, id, o.LeaderElection.RenewDeadline.Duration); err != nil {
			klog.FromContext(ctx).Info("the leader-election Lease was not released; a standby takes it once it expires", "lease", o.LeaderElection.ResourceNamespace+"/"+o.LeaderElection.ResourceName, "err", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if runErr != nil {
		return runErr
	}
	if lost.Load() && ctx.Err() == nil {
		return errors.New("lost the leader-election lease; exiting so that the other replica acts alone")
	}
	return nil
}

// releaseLease gives up the Lease, as client-go's elector does on cancel
// (no holder, a 1 s duration), but only once the controllers have stopped,
// and only if it still names id. Its own timeout: ctx has ended by now.
func releaseLease(lock resourcelock.Interface, id string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil {
		return err
	}
	if rec.HolderIdentity != id {
		return nil
	}
	now := metav1.NewTime(time.Now())
	return lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
	})
}

// heldLock is a leader-election lock that remembers whether it ever wrote
// the Lease with this process as the holder: the elector starts
// OnStartedLeading exactly when such a write succeeded.
type heldLock struct {
	resourcelock.Interface
	held atomic.Bool
}

func (l *heldLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, r)
	l.record(r, err)
	return err
}

func (l *heldLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, r)
	l.record(r, err)
	return err
}

func (l *heldLock) record(r resourcelock.LeaderElectionRecord, err error) {
	if err == nil && r.HolderIdentity != "" && r.HolderIdentity == l.Identity() {
		l.held.Store(true)
	}
}
