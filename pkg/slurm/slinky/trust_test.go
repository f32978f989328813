package slinky

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeyTrusted(t *testing.T) {
	chart := map[string]string{"app.kubernetes.io/part-of": "slurm", "helm.sh/chart": "slurm-1.0.1", "app.kubernetes.io/managed-by": "Helm"}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		key    string
		want   bool
	}{
		{"unlabelled", nil, "jwt.key", false},
		{"opted in", map[string]string{KeyLabel: "true"}, "anything", true},
		{"label not true", map[string]string{KeyLabel: "yes"}, "jwt.key", false},
		{"Slinky's chart's JWT key", chart, "jwt.key", true},
		{"Slinky's chart's auth/slurm key", chart, "slurm.key", false},
		{"part-of slurm, another chart", map[string]string{"app.kubernetes.io/part-of": "slurm", "helm.sh/chart": "mariadb-1"}, "jwt.key", false},
		{"chart label alone", map[string]string{"helm.sh/chart": "slurm-1.0.1"}, "jwt.key", false},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "k", Labels: tc.labels}}
		if got := KeyTrusted(s, tc.key); got != tc.want {
			t.Errorf("%s: KeyTrusted = %v, want %v", tc.name, got, tc.want)
		}
	}
}
