package slurm

import (
	"slices"
	"testing"
	"time"
)

// TestParseScontrolReservation: a line of 'scontrol show reservation -o',
// with times as Unix seconds (SLURM_TIME_FORMAT=%s) or, from a scontrol
// that ignores the format, in UTC; a line that is no reservation is
// skipped; a bad time is refused with the field named.
func TestParseScontrolReservation(t *testing.T) {
	start := time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC)
	for _, times := range []string{"StartTime=1795881600 EndTime=1795882200", "StartTime=2026-11-28T16:00:00 EndTime=2026-11-28T16:10:00"} {
		line := "ReservationName=SlurmOperatorMaint-w " + times + " Duration=00:10:00 Nodes=w-[0-1],x NodeCnt=3 CoreCnt=3 " +
			"Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES TRES=cpu=3 Users=slurm Groups=(null) " +
			"Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)"
		r, ok, err := parseScontrolReservation(line)
		if err != nil || !ok {
			t.Fatalf("%s: ok=%v err=%v", times, ok, err)
		}
		if r.Name != "SlurmOperatorMaint-w" || !r.Start.Equal(start) || !r.End.Equal(start.Add(10*time.Minute)) ||
			!slices.Equal(r.Nodes, []string{"w-0", "w-1", "x"}) || !slices.Equal(r.Flags, []string{"IGNORE_JOBS", "MAINT", "SPEC_NODES"}) ||
			!slices.Equal(r.Users, []string{"slurm"}) {
			t.Errorf("%s: %+v", times, r)
		}
	}
	if _, ok, err := parseScontrolReservation("No reservations in the system"); ok || err != nil {
		t.Errorf("no reservation: ok=%v err=%v", ok, err)
	}
	if _, _, err := parseScontrolReservation("ReservationName=x StartTime=soon"); err == nil {
		t.Error("a bad start time accepted")
	}
	if m := (Reservation{Start: start, End: start.Add(61 * time.Second)}).durationMinutes(); m != 2 {
		t.Errorf("61 s is %d minutes, want 2 (Slurm counts whole minutes)", m)
	}
}
