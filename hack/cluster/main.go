// Command cluster starts ("up") or stops ("down") the local control plane
// for a person: etcd and kube-apiserver on loopback with the CRDs installed,
// state in .cluster/ at the repository root.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "up" && os.Args[1] != "down") {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down")
		os.Exit(2)
	}
	root, err := controlplane.RepoRoot()
	if err == nil {
		dir := filepath.Join(root, ".cluster")
		if os.Args[1] == "up" {
			err = up(dir)
		} else {
			err = down(dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func up(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err == nil {
		return fmt.Errorf("a cluster is already up (%s): run 'make cluster-down' first", dir)
	}
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, Detach: true})
	if err != nil {
		return err
	}
	list, err := crds.All()
	if err == nil {
		err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, list...)
	}
	if err == nil {
		err = cp.WriteKubeconfig(filepath.Join(dir, "kubeconfig"), controlplane.AdminUser)
	}
	if err != nil {
		_ = cp.Stop()
		return err
	}
	fmt.Printf("local control plane up at %s (logs in %s)\n", cp.URL, dir)
	fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(dir, "kubeconfig"))
	fmt.Printf("contexts: %q (cluster admin) and %q (no RBAC rights)\n", controlplane.AdminUser, controlplane.UnprivilegedUser)
	return nil
}

func down(dir string) error {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			waitGone(pid)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Println("local control plane stopped")
	return nil
}
