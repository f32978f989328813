package queueline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

const gangOnly = "actions: enqueue\ntiers:\n- plugins:\n  - name: gang\n"

// ReadConfig reads what the scheduler would be started with: the
// ConfigMap's volcano-scheduler.conf, its only key, or Volcano's defaults
// when there is none; a file instead when one is named.
func TestReadConfig(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		objs    []*corev1.ConfigMap
		flag    string
		source  string
		plugins int
		def     bool
	}{
		{"the key", []*corev1.ConfigMap{cm("volcano-system", "volcano-scheduler-configmap", map[string]string{"volcano-scheduler.conf": gangOnly, "other": "x"})}, "", "ConfigMap volcano-system/volcano-scheduler-configmap key volcano-scheduler.conf", 1, false},
		{"its only key", []*corev1.ConfigMap{cm("ops", "sched", map[string]string{"conf.yaml": gangOnly})}, "ops/sched", "ConfigMap ops/sched key conf.yaml", 1, false},
		{"no such key", []*corev1.ConfigMap{cm("ops", "sched", map[string]string{"a": gangOnly, "b": gangOnly})}, "ops/sched", "Volcano's default configuration (ConfigMap ops/sched has no key volcano-scheduler.conf)", 3, true},
		{"no ConfigMap", nil, "", "Volcano's default configuration (no ConfigMap volcano-system/volcano-scheduler-configmap)", 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kube := fake.NewClientset()
			for _, o := range c.objs {
				if _, err := kube.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			f := ConfigFlags{ConfigMap: c.flag}
			if err := f.Validate(); err != nil {
				t.Fatal(err)
			}
			conf, err := f.ReadConfig(ctx, kube)
			if err != nil {
				t.Fatal(err)
			}
			if conf.Source != c.source || conf.Default != c.def || len(conf.Tiers[0].Plugins) != c.plugins {
				t.Errorf("got %+v", conf)
			}
		})
	}
	t.Run("a file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "volcano-scheduler.conf")
		if err := os.WriteFile(p, []byte(gangOnly), 0o600); err != nil {
			t.Fatal(err)
		}
		f := ConfigFlags{File: p}
		conf, err := f.ReadConfig(ctx, fake.NewClientset())
		if err != nil || conf.Source != "file "+p {
			t.Errorf("got %+v, %v", conf, err)
		}
		f.File = p + ".missing"
		if _, err := f.ReadConfig(ctx, fake.NewClientset()); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("missing file: %v", err)
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		for _, f := range []ConfigFlags{{ConfigMap: "noslash"}, {ConfigMap: "Bad_NS/x"}, {ConfigMap: "a/b", File: "f"}} {
			if err := f.Validate(); err == nil {
				t.Errorf("%+v accepted", f)
			}
		}
	})
}
