package slurm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reservation is a Slurm advanced reservation, as far as the NodeSet
// controller makes and reads one: the maintenance window of a NodeSet's
// ScheduledUpdate.
type Reservation struct {
	Name string
	// Start and End are the window. Slurm moves Start forward after each
	// occurrence of a recurring (HOURLY, DAILY, ...) reservation.
	Start, End time.Time
	// Nodes are the node names, expanded; Flags upper case (Slurm adds
	// SPEC_NODES to a reservation of named nodes); Users the permitted
	// users.
	Nodes []string
	Flags []string
	Users []string
}

// Active says whether the window is open at now.
func (r Reservation) Active(now time.Time) bool {
	return !now.Before(r.Start) && now.Before(r.End)
}

// ErrReservationsUnsupported is wrapped by the error of a Slurm whose
// interface cannot create or delete reservations.
var ErrReservationsUnsupported = errors.New("reservations cannot be written")

// ReservationClient reads and writes Slurm reservations. Both clients
// implement it; over REST only slurmrestd v0.0.43 and later can write them
// (ReservationsSupported says so).
type ReservationClient interface {
	// ReservationsSupported is nil when reservations can be created and
	// deleted, else an error wrapping ErrReservationsUnsupported that
	// says why.
	ReservationsSupported(ctx context.Context) error
	// Reservation asks Slurm for the reservation; ok is false when Slurm
	// holds none of that name.
	Reservation(ctx context.Context, name string) (r Reservation, ok bool, err error)
	// CreateReservation creates r: Name, Start, End (whole minutes after
	// Start; Slurm's durations are minutes, a part of one is rounded up),
	// Nodes, Flags and Users.
	CreateReservation(ctx context.Context, r Reservation) error
	// UpdateReservation changes the reservation named r.Name: its nodes
	// when r.Nodes is not nil, its window when r.Start is set. Flags are
	// not updated (Slurm adds the flags an update names, never removes
	// them): a change of flags is a new reservation.
	UpdateReservation(ctx context.Context, r Reservation) error
	// DeleteReservation deletes the reservation; one Slurm does not hold
	// is no error.
	DeleteReservation(ctx context.Context, name string) error
}

var (
	_ ReservationClient = &REST{}
	_ ReservationClient = &Commands{}
)

// durationMinutes is the reservation's length in whole minutes, at least
// one: Slurm counts reservation durations in minutes.
func (r Reservation) durationMinutes() int64 {
	d := r.End.Sub(r.Start)
	m := int64((d + time.Minute - 1) / time.Minute)
	return max(m, 1)
}

// splitList turns Slurm's lists ("a,b", ["a","b"], "(null)") into items.
func splitList(in []string) []string { return splitFeatures(in) }

// expandNodes expands the hostlists of a reservation's node list.
func expandNodes(in []string) ([]string, error) {
	var out []string
	for _, l := range splitHostlists(in) {
		names, err := ExpandHostlist(l)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// splitHostlists drops empty and "(null)" entries; a hostlist's own commas
// are left to ExpandHostlist, which knows the brackets.
func splitHostlists(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && s != "(null)" {
			out = append(out, s)
		}
	}
	return out
}

// normalize sorts the lists, for comparison.
func (r Reservation) normalize() Reservation {
	r.Nodes = slices.Compact(slices.Sorted(slices.Values(r.Nodes)))
	r.Flags = slices.Compact(slices.Sorted(slices.Values(r.Flags)))
	r.Users = slices.Compact(slices.Sorted(slices.Values(r.Users)))
	return r
}

// restWritesReservations: POST /reservation and DELETE /reservation/NAME
// are served from v0.0.43 on. Slurm 24.11 serves v0.0.40 to v0.0.42 and
// there answers both with HTTP 404 (found by trying, 2026-11-28).
func restWritesReservations(version string) bool {
	return version != "" && !slices.Contains([]string{"v0.0.40", "v0.0.41", "v0.0.42"}, version)
}

// ReservationsSupported implements ReservationClient.
func (r *REST) ReservationsSupported(ctx context.Context) error {
	v, err := r.Version(ctx)
	if err != nil {
		return err
	}
	if !restWritesReservations(v) {
		return fmt.Errorf("%w: slurmrestd at %s speaks REST %s, which serves no POST /reservation nor DELETE /reservation/NAME "+
			"(Slurm 24.11 serves v0.0.40 to v0.0.42, and v0.0.43 and later write reservations)",
			ErrReservationsUnsupported, r.base, v)
	}
	return nil
}

// restReservation is a reservation as GET /reservation/NAME lists it.
type restReservation struct {
	Name      string     `json:"name"`
	StartTime restNumber `json:"start_time"`
	EndTime   restNumber `json:"end_time"`
	NodeList  stringList `json:"node_list"`
	Flags     stringList `json:"flags"`
	Users     stringList `json:"users"`
}

type restReservationsResponse struct {
	restEnvelope
	Reservations []restReservation `json:"reservations"`
}

// errRESTInvalidQuery is slurmrestd's ESLURM_REST_INVALID_QUERY, with
// which it answers a GET of a reservation it does not hold while it holds
// others (HTTP 422, "Unable to find reservation NAME").
const errRESTInvalidQuery = 9000

// Reservation implements ReservationClient. slurmrestd answers a name it
// does not hold with HTTP 200, no reservation and an error entry
// ("Unable to query reservations") when it holds none, with HTTP 422
// (errRESTInvalidQuery) when it holds others.
func (r *REST) Reservation(ctx context.Context, name string) (Reservation, bool, error) {
	var resp restReservationsResponse
	if _, err := r.do(ctx, http.MethodGet, "reservation/"+url.PathEscape(name), nil, nil, &resp); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && ae.hasError(errRESTInvalidQuery) {
			return Reservation{}, false, nil
		}
		return Reservation{}, false, err
	}
	for _, rr := range resp.Reservations {
		if rr.Name != name {
			continue
		}
		nodes, err := expandNodes(rr.NodeList)
		if err != nil {
			return Reservation{}, false, fmt.Errorf("reservation %s: %w", name, err)
		}
		out := Reservation{Name: rr.Name, Nodes: nodes, Users: splitList(rr.Users)}
		for _, f := range rr.Flags {
			out.Flags = append(out.Flags, strings.ToUpper(f))
		}
		if rr.StartTime.known() {
			out.Start = time.Unix(rr.StartTime.Number, 0)
		}
		if rr.EndTime.known() {
			out.End = time.Unix(rr.EndTime.Number, 0)
		}
		return out.normalize(), true, nil
	}
	return Reservation{}, false, nil
}

// restReservationDesc is the body of POST /reservation (v0.0.43 and
// later): it creates the reservation, or changes the one of that name.
type restReservationDesc struct {
	Name      string           `json:"name"`
	StartTime *restNumberValue `json:"start_time,omitempty"`
	Duration  *restNumberValue `json:"duration,omitempty"`
	NodeList  []string         `json:"node_list,omitempty"`
	Flags     []string         `json:"flags,omitempty"`
	Users     []string         `json:"users,omitempty"`
}

// restNumberValue is a number sent to slurmrestd, in its object form.
type restNumberValue struct {
	Set    bool  `json:"set"`
	Number int64 `json:"number"`
}

func (r *REST) postReservation(ctx context.Context, d restReservationDesc) error {
	if err := r.ReservationsSupported(ctx); err != nil {
		return err
	}
	_, err := r.do(ctx, http.MethodPost, "reservation", nil, d, nil)
	return err
}

// CreateReservation implements ReservationClient.
func (r *REST) CreateReservation(ctx context.Context, res Reservation) error {
	if len(res.Nodes) == 0 {
		return fmt.Errorf("reservation %s: no nodes", res.Name)
	}
	return r.postReservation(ctx, restReservationDesc{
		Name:      res.Name,
		StartTime: &restNumberValue{Set: true, Number: res.Start.Unix()},
		Duration:  &restNumberValue{Set: true, Number: res.durationMinutes()},
		NodeList:  res.Nodes,
		Flags:     res.Flags,
		Users:     res.Users,
	})
}

// UpdateReservation implements ReservationClient.
func (r *REST) UpdateReservation(ctx context.Context, res Reservation) error {
	d := restReservationDesc{Name: res.Name, NodeList: res.Nodes}
	if !res.Start.IsZero() {
		d.StartTime = &restNumberValue{Set: true, Number: res.Start.Unix()}
		d.Duration = &restNumberValue{Set: true, Number: res.durationMinutes()}
	}
	return r.postReservation(ctx, d)
}

// errReservationInvalid is Slurm's ESLURM_RESERVATION_INVALID: deleting a
// reservation it does not hold (HTTP 422 over REST).
const errReservationInvalid = 2053

// DeleteReservation implements ReservationClient.
func (r *REST) DeleteReservation(ctx context.Context, name string) error {
	if err := r.ReservationsSupported(ctx); err != nil {
		return err
	}
	_, err := r.do(ctx, http.MethodDelete, "reservation/"+url.PathEscape(name), nil, nil, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.hasError(errReservationInvalid) {
		return nil
	}
	return err
}

// ReservationsSupported implements ReservationClient: scontrol always
// can.
func (c *Commands) ReservationsSupported(context.Context) error { return nil }

// scontrolTimeEnv makes scontrol print times as Unix seconds and read
// them in UTC: nothing depends on the time zone serve runs in.
var scontrolTimeEnv = []string{"TZ=UTC", "SLURM_TIME_FORMAT=%s"}

// Reservation implements ReservationClient, with 'scontrol show
// reservation NAME -o'.
func (c *Commands) Reservation(ctx context.Context, name string) (Reservation, bool, error) {
	out, err := c.runEnv(ctx, scontrolTimeEnv, "scontrol", "show", "reservation", name, "-o")
	if err != nil {
		// "Reservation NAME not found"; a missing scontrol is an error.
		if !errors.Is(err, exec.ErrNotFound) && strings.Contains(err.Error(), " not found") {
			return Reservation{}, false, nil
		}
		return Reservation{}, false, err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		r, ok, err := parseScontrolReservation(line)
		if err != nil {
			return Reservation{}, false, fmt.Errorf("scontrol show reservation %s: %w", name, err)
		}
		if ok && r.Name == name {
			return r, true, nil
		}
	}
	return Reservation{}, false, nil
}

// parseScontrolReservation reads one line of 'scontrol show reservation
// -o' ("ReservationName=x StartTime=... Nodes=a-[0-1] Flags=MAINT,...").
// ok is false for a line that is no reservation ("No reservations in the
// system").
func parseScontrolReservation(line string) (Reservation, bool, error) {
	var r Reservation
	found := false
	for f := range strings.FieldsSeq(line) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "ReservationName":
			r.Name, found = v, true
		case "StartTime":
			r.Start, err = parseScontrolTime(v)
		case "EndTime":
			r.End, err = parseScontrolTime(v)
		case "Nodes":
			r.Nodes, err = expandNodes([]string{v})
		case "Flags":
			r.Flags = splitList([]string{strings.ToUpper(v)})
		case "Users":
			r.Users = splitList([]string{v})
		}
		if err != nil {
			return Reservation{}, false, fmt.Errorf("%s: %w", k, err)
		}
	}
	if !found {
		return Reservation{}, false, nil
	}
	return r.normalize(), true, nil
}

// parseScontrolTime reads Unix seconds (SLURM_TIME_FORMAT=%s) or, from a
// scontrol that ignores that, its ISO form in UTC (TZ=UTC).
func parseScontrolTime(v string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.ParseInLocation("2006-01-02T15:04:05", v, time.UTC)
}

// scontrolTime is t as scontrol reads it under TZ=UTC.
func scontrolTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

// CreateReservation implements ReservationClient, with 'scontrol create
// reservation'.
func (c *Commands) CreateReservation(ctx context.Context, r Reservation) error {
	if len(r.Nodes) == 0 {
		return fmt.Errorf("reservation %s: no nodes", r.Name)
	}
	args := []string{"create", "reservation", "reservationname=" + r.Name,
		"starttime=" + scontrolTime(r.Start), "duration=" + strconv.FormatInt(r.durationMinutes(), 10),
		"nodes=" + strings.Join(r.Nodes, ",")}
	if len(r.Flags) > 0 {
		args = append(args, "flags="+strings.Join(r.Flags, ","))
	}
	if len(r.Users) > 0 {
		args = append(args, "users="+strings.Join(r.Users, ","))
	}
	_, err := c.runEnv(ctx, scontrolTimeEnv, "scontrol", args...)
	return err
}

// UpdateReservation implements ReservationClient, with 'scontrol update
// reservationname=...'.
func (c *Commands) UpdateReservation(ctx context.Context, r Reservation) error {
	args := []string{"update", "reservationname=" + r.Name}
	if r.Nodes != nil {
		args = append(args, "nodes="+strings.Join(r.Nodes, ","))
	}
	if !r.Start.IsZero() {
		args = append(args, "starttime="+scontrolTime(r.Start), "duration="+strconv.FormatInt(r.durationMinutes(), 10))
	}
	_, err := c.runEnv(ctx, scontrolTimeEnv, "scontrol", args...)
	return err
}

// DeleteReservation implements ReservationClient, with 'scontrol delete
// reservationname=...'.
func (c *Commands) DeleteReservation(ctx context.Context, name string) error {
	_, err := c.run(ctx, "scontrol", "delete", "reservationname="+name)
	if err != nil && strings.Contains(err.Error(), "Requested reservation is invalid") {
		return nil
	}
	return err
}
