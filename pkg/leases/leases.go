// Package leases reads a leader-election Lease: who holds it and whether
// the holder still renews it. doctor, why and serve all judge the Leases
// that controller managers hold; they judge them here, one way.
package leases

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Grace allows for clock skew between this machine and a Lease's holder
// when a reader judges from afar whether the Lease is still renewed.
const Grace = 30 * time.Second

// defaultDuration is client-go's leader election default, for a Lease
// that does not say.
const defaultDuration = 15 * time.Second

// State is what a Lease says of its holder.
type State struct {
	// Holder is "" when nobody holds the Lease.
	Holder string
	// Renewed is the last renewal; zero when never renewed.
	Renewed time.Time
	// Duration is how long a renewal holds.
	Duration time.Duration
}

// Of reads l (nil: nobody holds it).
func Of(l *coordinationv1.Lease) State {
	s := State{Duration: defaultDuration}
	if l == nil {
		return s
	}
	if l.Spec.HolderIdentity != nil {
		s.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		s.Renewed = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		s.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return s
}

// Held reports whether someone holds the Lease and renewed it within its
// duration (plus grace) before now.
func (s State) Held(now time.Time, grace time.Duration) bool {
	return s.Holder != "" && !s.Renewed.IsZero() && s.Since(now) <= s.Duration+grace
}

// Since is how long before now the Lease was last renewed (0 if never).
func (s State) Since(now time.Time) time.Duration {
	if s.Renewed.IsZero() {
		return 0
	}
	return now.Sub(s.Renewed)
}
