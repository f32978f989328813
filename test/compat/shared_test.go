package compat

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

// compatTests are this package's tests that read upstream's own CRDs.
const compatTests = "^(TestGeneratedCRDsMatchUpstreamSchemas|TestObjectsAcceptedByBothCRDSets|TestSlinkyOperatorKindsOnUpstreamCRDs)$"

// TestCompatibilityWithoutSharedDir runs this package's compatibility
// tests again, in this very test binary, with the shared folder hidden (an
// empty directory named by KUBECTL_VC_SHARED_DIR), as a plain clone has it:
// they skip and say what was not checked; under CI=true they fail instead.
func TestCompatibilityWithoutSharedDir(t *testing.T) {
	empty := t.TempDir()
	rerun := func(ci string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", compatTests, "-test.v", "-test.count=1")
		env := []string{cptest.SharedDirEnv + "=" + empty, "CI=" + ci}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, cptest.SharedDirEnv+"=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := rerun("")
	if err != nil {
		t.Fatalf("without the shared folder and without CI the compatibility tests must skip, not fail: %v\n%s", err, out)
	}
	for _, name := range []string{"TestGeneratedCRDsMatchUpstreamSchemas", "TestObjectsAcceptedByBothCRDSets", "TestSlinkyOperatorKindsOnUpstreamCRDs"} {
		if !strings.Contains(out, "--- SKIP: "+name) {
			t.Errorf("%s did not skip:\n%s", name, out)
		}
	}
	if !strings.Contains(out, "NOT checked") || !strings.Contains(out, cptest.SharedDirEnv) {
		t.Errorf("the skip does not say what was not checked and how to provide the files:\n%s", out)
	}

	out, err = rerun("true")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("under CI=true a missing shared folder must fail the run; got err=%v\n%s", err, out)
	}
	if !strings.Contains(out, "--- FAIL: TestGeneratedCRDsMatchUpstreamSchemas") || !strings.Contains(out, "CI=true: required") {
		t.Errorf("under CI=true the failure does not name the missing CRDs:\n%s", out)
	}
}
