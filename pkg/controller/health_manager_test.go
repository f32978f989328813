package controller_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// dies is a controller whose loop returns at once: a loop that died.
type dies struct{}

func (dies) Name() string                                                  { return "dies" }
func (dies) AddFlags(*pflag.FlagSet)                                       {}
func (dies) Validate() error                                               { return nil }
func (dies) Initialize(context.Context, *framework.ControllerOption) error { return nil }
func (dies) CacheReads() []framework.CacheRead                             { return nil }
func (dies) Run(context.Context)                                           {}

// TestHealthzFailsWhenAControllerDies (issue 42, Deliver 5): /healthz
// answered ok whatever the manager's state; a controller whose loop ended
// while serve runs now makes it fail, naming the controller.
func TestHealthzFailsWhenAControllerDies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := freeport.Addr(t)
	// Beside one that runs on: serve runs, one of its loops is dead.
	runs := newSlowStop()
	close(runs.release)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Config{Kubeconfig: fakeAPIServer(t),
			Controllers: []framework.Controller{dies{}, runs}, HealthAddr: addr, WaitForStop: true,
		})
	}()
	deadline := time.Now().Add(30 * time.Second)
	var code int
	var body string
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("Run returned: %v", err)
		default:
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			if code == http.StatusInternalServerError {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusInternalServerError || !strings.Contains(body, "the dies controller stopped") {
		t.Errorf("/healthz after the controller's loop ended: %d %q", code, body)
	}
	cancel()
	<-done
}
