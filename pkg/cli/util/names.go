package util

import "k8s.io/apimachinery/pkg/util/validation"

// ValidateQueueFlag checks a --queue value: the name of any queue (a
// DNS-1123 subdomain, as Volcano's CRD allows).
func ValidateQueueFlag(q string) error {
	if errs := validation.IsDNS1123Subdomain(q); len(errs) > 0 {
		return UsageErrorf("invalid --queue %q: %s", q, errs[0])
	}
	return nil
}

// ValidateObjectName checks the name of an existing object of a kind
// whose names are DNS-1123 subdomains (any object name), for a flag that
// names an object of another kind than the command's (pod list --job).
func ValidateObjectName(kind, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return UsageErrorf("invalid %s name %q: %s", kind, name, errs[0])
	}
	return nil
}
