package podgrouprows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"golang.org/x/sync/errgroup"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// errNotTable: the API server answered a Table request with something else.
var errNotTable = errors.New("the API server did not answer with a Table")

// parallelLists is how many namespaces' Tables are read at once.
const parallelLists = 8

// ListWatch is a cache.ListerWatcher of what a count of podgroups by queue
// and phase reads: namespace, name, spec.queue, status.phase. Its lists are
// RowLists; its watch events are PodGroups holding only those fields and
// the resourceVersion (a reflector checks the events' type).
//
// The list reads one Table per namespace without the objects
// (includeObject=None): a row without its object has no namespace, so
// asking per namespace is how to learn it. Those lists answer at different
// resourceVersions; the watch starts from the oldest, so the events between
// it and a newer list are seen again, in order, and the store ends where the
// API server is. Where namespaces cannot be listed (RBAC), one cluster-wide
// Table with each row's metadata (includeObject=Metadata: at 1x four times
// the API server's CPU of the former, a quarter of an informer's).
//
// The watch is one cluster-wide Table watch with each row's metadata: its
// events need the namespace and the resourceVersion.
//
// When the CRD lacks the columns (FindColumns) or the server answers without
// a Table, it lists and watches the objects instead and keeps the same
// fields of them.
type ListWatch struct {
	podgroups  rest.Interface
	vc         versioned.Interface
	kube       kubernetes.Interface
	mu         sync.Mutex
	cols       Columns
	objects    bool   // the last list read objects: so does the watch
	lastSource string // how the last list read, logged when it changes
}

var (
	_ cache.ListerWatcherWithContext = (*ListWatch)(nil)
	_ cache.ListerWatcher            = (*ListWatch)(nil)
)

// New returns the ListWatch over the clients' API server, or false when
// the clients have no REST client to ask for Tables (fake clientsets).
func New(kube kubernetes.Interface, vc versioned.Interface) (*ListWatch, bool) {
	rc := vc.SchedulingV1beta1().RESTClient()
	if r, ok := rc.(*rest.RESTClient); !ok || r == nil {
		return nil, false
	}
	return &ListWatch{podgroups: rc, vc: vc, kube: kube}, true
}

// IsWatchListSemanticsUnSupported tells the reflector to list, then watch:
// its watch-list (the initial events of a watch) would carry every row's
// metadata, which is what the per-namespace Tables avoid.
func (lw *ListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// List implements cache.Lister.
func (lw *ListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch implements cache.Watcher.
func (lw *ListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// ListWithContext implements cache.ListerWithContext.
func (lw *ListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	var list runtime.Object
	rows, cols, source, err := lw.listTables(ctx, opts)
	if err == nil {
		list = rows
	}
	objects := false
	if errors.Is(err, ErrNoColumns) || errors.Is(err, errNotTable) {
		klog.FromContext(ctx).V(2).Info("podgroups cannot be counted from Tables; reading the objects", "reason", err)
		list, err = lw.listObjects(ctx, opts)
		objects, source = true, "objects"
	}
	if err != nil {
		return nil, err
	}
	lw.mu.Lock()
	lw.cols, lw.objects = cols, objects
	changed := lw.lastSource != source
	lw.lastSource = source
	lw.mu.Unlock()
	if changed {
		n := meta.LenList(list)
		rv := ""
		if acc, err := meta.ListAccessor(list); err == nil {
			rv = acc.GetResourceVersion()
		}
		klog.FromContext(ctx).Info("podgroups read for counting", "from", source, "podgroups", n, "resourceVersion", rv)
	}
	return list, nil
}

// listTables reads every podgroup's row: per namespace, or cluster-wide
// with the metadata when namespaces cannot be listed.
func (lw *ListWatch) listTables(ctx context.Context, opts metav1.ListOptions) (*RowList, Columns, string, error) {
	nsList, err := lw.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if apierrors.IsForbidden(err) || (err == nil && len(nsList.Items) == 0) {
		l, cols, err := lw.table(ctx, "", metav1.IncludeMetadata, opts)
		return l, cols, "cluster-wide Table with metadata", err
	}
	if err != nil {
		return nil, Columns{}, "", err
	}
	parts := make([]*RowList, len(nsList.Items))
	colsOf := make([]Columns, len(nsList.Items))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelLists)
	for i := range nsList.Items {
		g.Go(func() error {
			var err error
			parts[i], colsOf[i], err = lw.table(gctx, nsList.Items[i].Name, metav1.IncludeNone, opts)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Columns{}, "", err
	}
	out := &RowList{}
	n := 0
	for _, p := range parts {
		n += len(p.Items)
	}
	out.Items = make([]Row, 0, n)
	for i, p := range parts {
		out.Items = append(out.Items, p.Items...)
		// The oldest list's resourceVersion: the watch from there sees
		// again what the newer lists already hold, never less.
		if i == 0 {
			out.ResourceVersion = p.ResourceVersion
		} else if c, err := resourceversion.CompareResourceVersion(p.ResourceVersion, out.ResourceVersion); err != nil {
			return nil, Columns{}, "", fmt.Errorf("podgroup tables: %w", err)
		} else if c < 0 {
			out.ResourceVersion = p.ResourceVersion
		}
	}
	return out, colsOf[0], "Tables per namespace", nil
}

// table reads one Table of podgroups in namespace ns ("" for all).
func (lw *ListWatch) table(ctx context.Context, ns string, include metav1.IncludeObjectPolicy, opts metav1.ListOptions) (*RowList, Columns, error) {
	req := Request(lw.podgroups, ns, include, 0, "", opts.ResourceVersion)
	if opts.ResourceVersionMatch != "" {
		req = req.Param("resourceVersionMatch", string(opts.ResourceVersionMatch))
	}
	out := &RowList{}
	lm, cols, err := Read(ctx, req, ns, func(r Row) error {
		out.Items = append(out.Items, r)
		return nil
	})
	if err != nil {
		return nil, Columns{}, err
	}
	out.ResourceVersion = lm.ResourceVersion
	return out, cols, nil
}

// listObjects is the fallback: the objects, trimmed to the same fields.
func (lw *ListWatch) listObjects(ctx context.Context, opts metav1.ListOptions) (*v1beta1.PodGroupList, error) {
	l, err := lw.vc.SchedulingV1beta1().PodGroups("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		l.Items[i] = *trim(&l.Items[i])
	}
	return l, nil
}

func trim(pg *v1beta1.PodGroup) *v1beta1.PodGroup {
	out := &v1beta1.PodGroup{}
	out.Namespace, out.Name, out.ResourceVersion = pg.Namespace, pg.Name, pg.ResourceVersion
	out.Spec.Queue, out.Status.Phase = pg.Spec.Queue, pg.Status.Phase
	return out
}

// WatchWithContext implements cache.WatcherWithContext.
func (lw *ListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	objects, cols := lw.objects, lw.cols
	lw.mu.Unlock()
	if objects {
		w, err := lw.vc.SchedulingV1beta1().PodGroups("").Watch(ctx, opts)
		if err != nil {
			return nil, err
		}
		return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			if pg, ok := e.Object.(*v1beta1.PodGroup); ok && e.Type != watch.Bookmark {
				e.Object = trim(pg)
			}
			return e, true
		}), nil
	}
	opts.Watch = true
	body, err := lw.podgroups.Get().Resource("podgroups").SetHeader("Accept", Accept).
		Param("includeObject", string(metav1.IncludeMetadata)).VersionedParams(&opts, metav1.ParameterCodec).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcher(&tableEvents{body: body, dec: json.NewDecoder(body), cols: cols, in: interner{}},
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// tableEvents decodes a Table watch: each event's object is a Table of one
// row (the first also carries the column definitions), or a Status for an
// error.
type tableEvents struct {
	body interface{ Close() error }
	dec  *json.Decoder
	cols Columns
	in   interner
}

func (d *tableEvents) Decode() (watch.EventType, runtime.Object, error) {
	var ev metav1.WatchEvent
	if err := d.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	typ := watch.EventType(ev.Type)
	var t metav1.Table
	if err := json.Unmarshal(ev.Object.Raw, &t); err != nil {
		return "", nil, fmt.Errorf("podgroup table watch: %w", err)
	}
	if typ == watch.Bookmark {
		// A bookmark carries only a resourceVersion: in its one row's
		// metadata, or in its own when the server sent it untransformed.
		raw := ev.Object.Raw
		if t.Kind == "Table" && len(t.Rows) == 1 {
			raw = t.Rows[0].Object.Raw
		}
		var m rowMeta
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", nil, fmt.Errorf("podgroup table watch: a bookmark: %w", err)
		}
		pg := &v1beta1.PodGroup{}
		pg.ResourceVersion = m.Metadata.ResourceVersion
		return typ, pg, nil
	}
	switch t.Kind {
	case "Table":
	case "Status":
		st := &metav1.Status{}
		if err := json.Unmarshal(ev.Object.Raw, st); err != nil {
			return "", nil, fmt.Errorf("podgroup table watch: %w", err)
		}
		return typ, st, nil
	default:
		return "", nil, fmt.Errorf("podgroup table watch: %w (%q)", errNotTable, t.Kind)
	}
	if len(t.ColumnDefinitions) > 0 {
		cols, err := FindColumns(t.ColumnDefinitions)
		if err != nil {
			return "", nil, err
		}
		d.cols = cols
	}
	if len(t.Rows) != 1 {
		return "", nil, fmt.Errorf("podgroup table watch: an event with %d rows", len(t.Rows))
	}
	r, err := d.cols.row(t.Rows[0], "", d.in)
	if err != nil {
		return "", nil, err
	}
	return typ, r.PodGroup(), nil
}

func (d *tableEvents) Close() { _ = d.body.Close() }
