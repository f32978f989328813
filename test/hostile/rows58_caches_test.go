package hostile

// The rows of issue 58's items 3 and 6: what a tenant's own objects cost
// serve though it never reads them (Deliver 3: caches hold what is read)
// and what Secrets a Controller names cost it (Deliver 6).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

func init() { rows = append(rows, rows58caches...) }

// The sizes of the two rows, and what each may cost serve: its peak RSS
// over its idle RSS (MaxGrowth bounds every row; these two are held to
// less, as what they write is never read: before the fix each cost more
// than this, docs/security.md).
const (
	// foreignConfigMaps, each with a unique annotation of foreignAnnotation
	// bytes, and foreignOthers Services and as many PodDisruptionBudgets.
	foreignConfigMaps = 3000
	foreignOthers     = 300
	foreignAnnotation = 64 << 10
	// keySets are the Controllers, each naming a Secret of keySecretPad
	// bytes besides its 32-byte key, half of them labelled for signing.
	keySets      = 200
	keySecretPad = 512 << 10
	// rowGrowth is what either row may cost.
	rowGrowth = 64 << 20
)

// unique is n bytes no other call returns (hex), so that no cache can
// share them.
func unique(n int) string {
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// grewWithin checks serve's peak RSS over idle against rowGrowth, when
// the row runs alone (all at once, the peak is every row's: MaxGrowth
// bounds it).
func grewWithin(t *testing.T, w *world, what string) {
	t.Helper()
	peak, now := w.serve.status(t, "VmHWM"), w.serve.status(t, "VmRSS")
	t.Logf("%s: idle RSS %d MiB, peak %d MiB (+%d MiB), now %d MiB", what, w.serve.idle>>20, peak>>20, (peak-w.serve.idle)>>20, now>>20)
	if grew := peak - w.serve.idle; w.alone && grew > rowGrowth {
		t.Errorf("%s cost serve %d MiB of RSS (peak %d MiB over idle %d MiB): more than %d MiB for objects it never reads",
			what, grew>>20, peak>>20, w.serve.idle>>20, rowGrowth>>20)
	}
}

var rows58caches = []row{
	{
		name: "3 000 foreign ConfigMaps, 300 Services and PDBs with 64 KiB annotations",
		// 225 MiB written at once keeps the API server busy for a minute,
		// which the other rows' deadlines (a NodeSet's status, say) would
		// then measure instead of serve; and it starts a second serve,
		// whose idle RSS the other rows' objects would blur.
		alone: "it writes 225 MiB of objects and starts a second serve beside them, which would measure the API server's backlog in the other rows and their objects in its idle RSS",
		apply: func(t *testing.T, w *world) {
			ctx := context.Background()
			ann := func() map[string]string { return map[string]string{"example.com/blob": unique(foreignAnnotation)} }
			parallel(t, foreignConfigMaps, func(i int) error {
				_, err := env.kube.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("foreign-%04d", i), Annotations: ann()},
					Data:       map[string]string{"k": "v"}}, metav1.CreateOptions{})
				return err
			})
			parallel(t, foreignOthers, func(i int) error {
				_, err := env.kube.CoreV1().Services(w.ns).Create(ctx, &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("foreign-%04d", i), Annotations: ann()},
					Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "x"},
						Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
				if err != nil {
					return err
				}
				_, err = env.kube.PolicyV1().PodDisruptionBudgets(w.ns).Create(ctx, &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("foreign-%04d", i), Annotations: ann()},
					Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
						Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}, metav1.CreateOptions{})
				return err
			})
			// Made after them: once serve's cache shows its ssh ConfigMap,
			// its watches have delivered every object written before.
			nodeSet(t, w, "after-foreign", 0, func(s *slinkyv1beta1.NodeSet) {
				s.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true,
					SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}}
			})
		},
		handled: func(t *testing.T, w *world) {
			eventually(t, "the NodeSet made after them SSHConfigReady", func() (bool, error) {
				ns, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Get(context.Background(), "after-foreign", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				c := meta.FindStatusCondition(ns.Status.Conditions, "SSHConfigReady")
				return c != nil && c.Status == metav1.ConditionTrue, nil
			})
			cm, err := env.kube.CoreV1().ConfigMaps(w.ns).Get(context.Background(), "after-foreign"+slinkyv1beta1.SSHConfigSuffix, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cm.Labels[keys.LabelManagedBy] != keys.ServeName {
				t.Errorf("serve's ssh ConfigMap is not labelled %s=%s: %v", keys.LabelManagedBy, keys.ServeName, cm.Labels)
			}
			what := fmt.Sprintf("%d ConfigMaps, %d Services and %d PDBs of %d KiB annotations (%d MiB)", foreignConfigMaps,
				foreignOthers, foreignOthers, foreignAnnotation>>10, (foreignConfigMaps+2*foreignOthers)*foreignAnnotation>>20)
			grewWithin(t, w, what)
			// A serve started now (a restart, a second replica) lists
			// them before it is ready: its idle RSS is what they cost at
			// every start (alone: all at once, the other rows' objects
			// are listed too).
			if !w.alone {
				return
			}
			again := startServe(t, w.slurm.flags(t)...)
			t.Logf("%s: a serve started beside them idles at %d MiB (the first, started before them: %d MiB)", what, again.idle>>20, w.serve.idle>>20)
			if grew := again.idle - w.serve.idle; grew > rowGrowth {
				t.Errorf("a serve started beside %s idles at %d MiB, %d MiB over one started before them: more than %d MiB",
					what, again.idle>>20, grew>>20, rowGrowth>>20)
			}
		},
	},
	{
		name: "200 Controllers naming Secrets of 512 KiB",
		// Through Slinky's objects, trusted in the run's namespace only.
		flags: func(t *testing.T, w *world) []string { return []string{"--slurm-conf=", "--slurm-namespaces=" + w.ns} },
		apply: func(t *testing.T, w *world) {
			ctx := context.Background()
			parallel(t, keySets, func(i int) error {
				name := fmt.Sprintf("k%03d", i)
				secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
					Data: map[string][]byte{"jwt.key": []byte(unique(32)), "pad": []byte(unique(keySecretPad))}}
				if i%2 == 0 {
					// Opted in: signed with, its key (32 bytes) kept.
					secret.Labels = map[string]string{slinky.KeyLabel: "true"}
				}
				if _, err := env.kube.CoreV1().Secrets(w.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
					return err
				}
				if _, err := env.vc.SlinkyV1beta1().Controllers(w.ns).Create(ctx, &slinkyv1beta1.Controller{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: slinkyv1beta1.ControllerSpec{
						JwtKeyRef:   &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "jwt.key"},
						SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-slurm"}, Key: "slurm.key"}},
				}, metav1.CreateOptions{}); err != nil {
					return err
				}
				if _, err := env.vc.SlinkyV1beta1().RestApis(w.ns).Create(ctx, &slinkyv1beta1.RestApi{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: name}},
				}, metav1.CreateOptions{}); err != nil {
					return err
				}
				// Headless: no slurmrestd is reached (no cluster IP), the key
				// is read first.
				if _, err := env.kube.CoreV1().Services(w.ns).Create(ctx, &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: name + slinkyv1beta1.RestApiServiceSuffix},
					Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
						Ports: []corev1.ServicePort{{Name: "slurmrestd", Port: slinkyv1beta1.SlurmrestdPort}}},
				}, metav1.CreateOptions{}); err != nil {
					return err
				}
				_, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Create(ctx, &slinkyv1beta1.NodeSet{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: slinkyv1beta1.NodeSetSpec{ControllerRef: corev1.LocalObjectReference{Name: name}, Replicas: ptr.To[int32](0),
						Slurmd: corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"}},
				}, metav1.CreateOptions{})
				return err
			})
		},
		handled: func(t *testing.T, w *world) {
			// Every NodeSet's key read: the unlabelled refused, the
			// labelled used as far as the Service's missing cluster IP.
			eventually(t, "every NodeSet past its key Secret", func() (bool, error) {
				l, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				refused, used := 0, 0
				for _, ns := range l.Items {
					c := meta.FindStatusCondition(ns.Status.Conditions, "SlurmReachable")
					switch {
					case c == nil || c.Status != metav1.ConditionFalse:
					case c.Reason == "KeyNotTrusted":
						refused++
					case c.Reason == "ServiceNotFound" && strings.Contains(c.Message, "no cluster IP"):
						used++
					}
				}
				return refused == keySets/2 && used == keySets/2, nil
			})
			grewWithin(t, w, fmt.Sprintf("%d key Secrets of %d KiB (%d MiB)", keySets, keySecretPad>>10, keySets*keySecretPad>>20))
		},
	},
}
