package slinky

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KeyLabel marks a Secret whose key serve may sign Slurm tokens with, when
// a Controller's jwtKeyRef names it: an administrator sets it (kubectl
// label secret NAME kubectl-vc.io/slurm-jwt-key=true). Only someone who may
// write the Secret can set it, and writing a Secret (update, patch) answers
// with its contents: whoever set the label could read the key anyway.
const KeyLabel = "kubectl-vc.io/slurm-jwt-key"

// The labels and key of the JWT key Secret Slinky's Helm chart creates
// (helm/slurm/templates/secrets/jwtkey.yaml of SlinkyProject/slurm-operator:
// labels from slurm.labels, data key slurm.authJwtRef.key, "jwt.key" unless
// overridden). The chart's auth/slurm key Secret carries the same labels
// under the key "slurm.key": the key name keeps serve from signing with it.
const (
	chartPartOfLabel = "app.kubernetes.io/part-of"
	chartPartOf      = "slurm"
	chartLabel       = "helm.sh/chart"
	chartPrefix      = "slurm-"
	chartJWTKey      = "jwt.key"
)

// KeyTrusted tells whether serve may sign with key of secret: the Secret
// carries KeyLabel=true, or it is the JWT key Secret as Slinky's chart
// creates it. Any other Secret (a database password a Controller was
// pointed at, the auth/slurm key) is never used, whoever names it.
func KeyTrusted(secret *corev1.Secret, key string) bool {
	l := secret.Labels
	if l[KeyLabel] == "true" {
		return true
	}
	return l[chartPartOfLabel] == chartPartOf && strings.HasPrefix(l[chartLabel], chartPrefix) && key == chartJWTKey
}
