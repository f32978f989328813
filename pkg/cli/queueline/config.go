package queueline

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// ConfigFlags name the scheduler configuration: a ConfigMap (the one
// Volcano's installation mounts as the scheduler's --scheduler-conf) or a
// file.
type ConfigFlags struct {
	ConfigMap string
	File      string
}

// DefaultConfigMap is namespace/name of the ConfigMap Volcano installs.
var DefaultConfigMap = keys.VolcanoNamespace + "/" + joborder.ConfigMapName

// AddFlags adds --scheduler-config and --scheduler-config-file.
func (f *ConfigFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ConfigMap, "scheduler-config", DefaultConfigMap, "NAMESPACE/NAME of the ConfigMap holding Volcano's scheduler configuration (key "+joborder.ConfigKey+")")
	cmd.Flags().StringVar(&f.File, "scheduler-config-file", "", "Read Volcano's scheduler configuration from this file instead of the ConfigMap")
}

// Validate checks the form of --scheduler-config, and that a file and a
// ConfigMap other than the default are not both named.
func (f *ConfigFlags) Validate() error {
	if f.ConfigMap == "" {
		f.ConfigMap = DefaultConfigMap
	}
	if f.File != "" && f.ConfigMap != DefaultConfigMap {
		return util.UsageErrorf("give --scheduler-config or --scheduler-config-file, not both")
	}
	ns, name, ok := strings.Cut(f.ConfigMap, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return util.UsageErrorf("invalid --scheduler-config %q: give NAMESPACE/NAME of a ConfigMap", f.ConfigMap)
	}
	return nil
}

// ReadConfig reads the configuration as the scheduler would: the file,
// else the ConfigMap's key volcano-scheduler.conf (or its only key).
// Without a ConfigMap the scheduler runs with its defaults, and so does
// the prediction, saying so. A file that cannot be read, or a
// configuration that does not parse, is an error.
func (f *ConfigFlags) ReadConfig(ctx context.Context, kube kubernetes.Interface) (joborder.Config, error) {
	if f.File != "" {
		data, err := os.ReadFile(f.File)
		if err != nil {
			return joborder.Config{}, util.UsageErrorf("cannot read the scheduler configuration file: %s", errText(err))
		}
		c, err := joborder.Parse(string(data), "file "+f.File)
		if err != nil {
			return c, util.UsageErrorf("%s", err)
		}
		return c, nil
	}
	if f.ConfigMap == "" {
		f.ConfigMap = DefaultConfigMap
	}
	ns, name, _ := strings.Cut(f.ConfigMap, "/")
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c := joborder.Default()
		switch {
		case apierrors.IsNotFound(err):
			c.Source = fmt.Sprintf("Volcano's default configuration (no ConfigMap %s)", f.ConfigMap)
		case apierrors.IsForbidden(err):
			c.Source = fmt.Sprintf("Volcano's default configuration (ConfigMap %s not readable: %s)", f.ConfigMap, util.Message(err))
		default:
			return c, err
		}
		return c, nil
	}
	key := joborder.ConfigKey
	data, ok := cm.Data[key]
	if !ok && len(cm.Data) == 1 {
		for k, v := range cm.Data {
			key, data, ok = k, v, true
		}
	}
	if !ok {
		c := joborder.Default()
		c.Source = fmt.Sprintf("Volcano's default configuration (ConfigMap %s has no key %s)", f.ConfigMap, joborder.ConfigKey)
		return c, nil
	}
	c, err := joborder.Parse(data, fmt.Sprintf("ConfigMap %s key %s", f.ConfigMap, key))
	if err != nil {
		return c, util.UsageErrorf("%s", err)
	}
	return c, nil
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
