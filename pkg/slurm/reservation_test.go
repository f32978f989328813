package slurm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// exerciseReservations creates a maintenance reservation with rc, reads it
// back, moves its nodes, deletes it (twice: the second is no error) and
// checks that slurmctld, asked apart from the client (show), holds what
// the client says at each step.
func exerciseReservations(t *testing.T, rc slurm.ReservationClient, show func(name string) string, nodes []string) {
	t.Helper()
	ctx := context.Background()
	name := "kvc-maint-test"
	if _, ok, err := rc.Reservation(ctx, name); err != nil || ok {
		t.Fatalf("before creation: ok=%v err=%v", ok, err)
	}
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	want := slurm.Reservation{Name: name, Start: start, End: start.Add(90 * time.Second),
		Nodes: nodes[:1], Flags: []string{"IGNORE_JOBS", "MAINT"}, Users: []string{"slurm"}}
	if err := rc.CreateReservation(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := rc.Reservation(ctx, name)
	if err != nil || !ok {
		t.Fatalf("after creation: ok=%v err=%v", ok, err)
	}
	if _, ok, err := rc.Reservation(ctx, "kvc-nosuch"); err != nil || ok {
		t.Fatalf("another name while one is held: ok=%v err=%v", ok, err)
	}
	// 90 s is two minutes to Slurm, which counts minutes.
	if !got.Start.Equal(start) || !got.End.Equal(start.Add(2*time.Minute)) {
		t.Errorf("window %v..%v, want %v..%v", got.Start, got.End, start, start.Add(2*time.Minute))
	}
	if !slices.Equal(got.Nodes, nodes[:1]) || !slices.Contains(got.Flags, "MAINT") || !slices.Contains(got.Flags, "IGNORE_JOBS") ||
		!slices.Equal(got.Users, []string{"slurm"}) {
		t.Errorf("read back %+v", got)
	}
	if got.Active(time.Now()) || !got.Active(start) || got.Active(got.End) {
		t.Errorf("Active wrong for %v..%v", got.Start, got.End)
	}
	if s := show(name); !strings.Contains(s, "MAINT") || !strings.Contains(s, "State=INACTIVE") {
		t.Errorf("scontrol show reservation: %s", s)
	}

	if err := rc.UpdateReservation(ctx, slurm.Reservation{Name: name, Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	got, _, err = rc.Reservation(ctx, name)
	if err != nil || !slices.Equal(got.Nodes, nodes) || !got.Start.Equal(start) || !slices.Contains(got.Flags, "MAINT") {
		t.Fatalf("after the node update: %+v %v", got, err)
	}
	later := start.Add(time.Hour)
	if err := rc.UpdateReservation(ctx, slurm.Reservation{Name: name, Start: later, End: later.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	got, _, err = rc.Reservation(ctx, name)
	if err != nil || !got.Start.Equal(later) || !got.End.Equal(later.Add(time.Minute)) || !slices.Equal(got.Nodes, nodes) {
		t.Fatalf("after the window update: %+v %v", got, err)
	}

	if err := rc.DeleteReservation(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := rc.DeleteReservation(ctx, name); err != nil {
		t.Fatalf("deleting a deleted reservation: %v", err)
	}
	if _, ok, err := rc.Reservation(ctx, name); err != nil || ok {
		t.Fatalf("after deletion: ok=%v err=%v", ok, err)
	}
	if s := show(name); strings.Contains(s, "ReservationName="+name) {
		t.Errorf("slurmctld still holds it: %s", s)
	}
}

// TestReservationsWithCommands: scontrol creates, reads, updates and
// deletes a reservation that slurmctld (Debian 12's 22.05) holds.
func TestReservationsWithCommands(t *testing.T) {
	cl := slurmtest.StartT(t, "rv-0", "rv-1")
	c := cl.Client()
	if err := c.ReservationsSupported(context.Background()); err != nil {
		t.Fatal(err)
	}
	exerciseReservations(t, c, func(name string) string {
		out, _ := cl.Scontrol(context.Background(), "show", "reservation", name, "-o")
		return out
	}, []string{"rv-0", "rv-1"})
}

// TestReservationsOverREST: Slurm 26.05's slurmrestd (v0.0.45) writes
// reservations; 24.11's (v0.0.40 to v0.0.42) only reads them, and the
// client says so rather than sending requests answered 404.
func TestReservationsOverREST(t *testing.T) {
	for _, s := range slurmtest.RESTSuites {
		t.Run(s.Name, func(t *testing.T) {
			cl := slurmtest.StartRESTT(t, s, "rv-0", "rv-1")
			tok, err := slurm.NewSignedToken(cl.JWTKey, "")
			if err != nil {
				t.Fatal(err)
			}
			c, err := slurm.NewREST(slurm.RESTConfig{URL: cl.URL, Token: tok})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			show := func(name string) string {
				out, _ := cl.Command(ctx, "scontrol", "show", "reservation", name, "-o")
				return out
			}
			if s.Slurm == "24.11" {
				err := c.ReservationsSupported(ctx)
				if !errors.Is(err, slurm.ErrReservationsUnsupported) || !strings.Contains(err.Error(), "v0.0.42") {
					t.Fatalf("ReservationsSupported: %v", err)
				}
				if err := c.CreateReservation(ctx, slurm.Reservation{Name: "x", Start: time.Now().Add(time.Hour),
					End: time.Now().Add(2 * time.Hour), Nodes: []string{"rv-0"}}); !errors.Is(err, slurm.ErrReservationsUnsupported) {
					t.Fatalf("create: %v", err)
				}
				// Reading works: one made with scontrol is seen.
				start := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05")
				if _, err := cl.Command(ctx, "env", "TZ=UTC", "scontrol", "create", "reservation", "reservationname=by-hand",
					"starttime="+start, "duration=5", "flags=MAINT,IGNORE_JOBS", "users=slurm", "nodes=rv-[0-1]"); err != nil {
					t.Fatal(err)
				}
				got, ok, err := c.Reservation(ctx, "by-hand")
				if err != nil || !ok || !slices.Equal(got.Nodes, []string{"rv-0", "rv-1"}) || got.End.Sub(got.Start) != 5*time.Minute {
					t.Fatalf("read over REST: %+v %v %v", got, ok, err)
				}
				if _, ok, err := c.Reservation(ctx, "nosuch"); ok || err != nil {
					t.Fatalf("nosuch: %v %v", ok, err)
				}
				return
			}
			if err := c.ReservationsSupported(ctx); err != nil {
				t.Fatal(err)
			}
			exerciseReservations(t, c, show, []string{"rv-0", "rv-1"})
		})
	}
}
