// Command cluster starts ("up") or stops ("down") the local cluster for a
// person, with the CRDs installed and state in .cluster/ at the repository
// root; "load IMAGE.tar" loads an image into the local node. "up --level"
// chooses how much runs (see controlplane.Level): node
// (the default where this machine can run one: root and Debian's runc, CNI
// plugins and iptables), controllers, or apiserver.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "up" && os.Args[1] != "down" && os.Args[1] != "load") {
		fmt.Fprintln(os.Stderr, "usage: cluster up [--level node|controllers|apiserver] | cluster down | cluster load IMAGE.tar")
		os.Exit(2)
	}
	if os.Args[1] == "load" {
		// Loads an image tarball ('make image') into the local node.
		bin, err := controlplane.FindBinDir()
		if err == nil && len(os.Args) != 3 {
			err = fmt.Errorf("usage: cluster load IMAGE.tar")
		}
		if err == nil {
			err = controlplane.ImportNodeImage(context.Background(), bin, os.Args[2])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Printf("loaded %s into the local node\n", os.Args[2])
		return
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	level := fs.String("level", "", "how much of a cluster to run: node, controllers or apiserver (default: node where this machine can run one, else controllers)")
	_ = fs.Parse(os.Args[2:])
	root, err := controlplane.RepoRoot()
	if err == nil {
		dir := filepath.Join(root, ".cluster")
		if os.Args[1] == "up" {
			err = up(dir, *level)
		} else {
			err = down(dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func up(dir, levelName string) error {
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err == nil {
		return fmt.Errorf("a cluster is already up (%s): run 'make cluster-down' first", dir)
	}
	level := controlplane.Node
	if levelName != "" {
		l, err := controlplane.ParseLevel(levelName)
		if err != nil {
			return err
		}
		level = l
	} else if err := controlplane.NodeSupported(); err != nil {
		level = controlplane.Controllers
		fmt.Printf("no node: %v\n", err)
	}
	ctx := context.Background()
	// The CRDs go in before kube-controller-manager starts, so that its
	// controllers' discovery has them from the first moment. Volcano's
	// flow kinds go in too, standing in for Volcano as its Job CRD does, so
	// that every command works on the local cluster and doctor, after the
	// quick start, has nothing to warn about.
	installCRDs := func(ctx context.Context, cp *controlplane.ControlPlane) error {
		list, err := crds.All()
		if err != nil {
			return err
		}
		flow, err := volcanoflow.CRDs()
		if err != nil {
			return err
		}
		return crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, append(list, flow...)...)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, Detach: true, Level: level, BeforeControllers: installCRDs})
	if err != nil {
		return err
	}
	err = cp.WriteKubeconfig(filepath.Join(dir, "kubeconfig"), controlplane.AdminUser)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "level"), []byte(level.String()), 0o600)
	}
	if err != nil {
		_ = cp.Stop()
		return err
	}
	fmt.Printf("local cluster (%s) up at %s (logs in %s)\n", level, cp.URL, dir)
	fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(dir, "kubeconfig"))
	fmt.Printf("contexts: %q (cluster admin) and %q (no RBAC rights)\n", controlplane.AdminUser, controlplane.UnprivilegedUser)
	return nil
}

func down(dir string) error {
	for _, name := range []string{"kube-proxy", "kubelet", "containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			waitGone(pid)
		}
	}
	// A node leaves containers, mounts, iptables rules and its bridge
	// behind its processes; CleanNode removes them (and nothing, when no
	// node ran).
	if b, _ := os.ReadFile(filepath.Join(dir, "level")); strings.TrimSpace(string(b)) == controlplane.Node.String() {
		bin, err := controlplane.FindBinDir()
		if err != nil {
			return err
		}
		if err := controlplane.CleanNode(bin); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Println("local cluster stopped")
	return nil
}
