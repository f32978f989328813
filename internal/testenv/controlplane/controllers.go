package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// startControllers runs kube-controller-manager and kube-scheduler as the
// admin user and waits until both work: the controller manager has made the
// default ServiceAccount of the default namespace, and the scheduler's
// health endpoint answers.
func (cp *ControlPlane) startControllers(ctx context.Context) error {
	cp.kubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	if err := cp.WriteKubeconfig(cp.kubeconfig, AdminUser); err != nil {
		return err
	}
	ports, err := freeport.Ports("127.0.0.1", 2)
	if err != nil {
		return err
	}
	common := []string{
		"--kubeconfig=" + cp.kubeconfig,
		"--authentication-kubeconfig=" + cp.kubeconfig,
		"--authorization-kubeconfig=" + cp.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--v=0",
	}
	kcmArgs := append([]string{
		"--secure-port=" + strconv.Itoa(ports[0]),
		// Tokens for the controllers' own ServiceAccounts (each controller
		// acts with its bootstrap role, as in a real cluster) and for the
		// kube-root-ca.crt ConfigMap that every pod's token volume mounts.
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + filepath.Join(cp.Dir, "sa.key"),
		"--root-ca-file=" + filepath.Join(cp.Dir, "ca.crt"),
		"--cluster-name=kubectl-vc-local",
		// A dead node's pods are evicted after this long; the default five
		// minutes would outlive any test.
		"--node-monitor-grace-period=20s",
	}, common...)
	if cp.kcm, err = cp.spawn("kube-controller-manager", kcmArgs); err != nil {
		return err
	}
	schedArgs := append([]string{"--secure-port=" + strconv.Itoa(ports[1])}, common...)
	if cp.sched, err = cp.spawn("kube-scheduler", schedArgs); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	kube, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return err
	}
	// The scheduler serves HTTPS with a self-signed certificate; only its
	// liveness matters here, so the certificate is not checked.
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	schedHealth := "https://127.0.0.1:" + strconv.Itoa(ports[1]) + "/healthz"
	var last error
	for {
		_, last = kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if last == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, schedHealth, nil)
			resp, err := insecure.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
				err = fmt.Errorf("kube-scheduler /healthz: HTTP %d", resp.StatusCode)
			}
			last = err
		}
		select {
		case <-cp.kcm.done:
			return fmt.Errorf("kube-controller-manager exited (see %s)", filepath.Join(cp.Dir, "kube-controller-manager.log"))
		case <-cp.sched.done:
			return fmt.Errorf("kube-scheduler exited (see %s)", filepath.Join(cp.Dir, "kube-scheduler.log"))
		case <-ctx.Done():
			return fmt.Errorf("controllers not ready (see the logs in %s): %v", cp.Dir, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
