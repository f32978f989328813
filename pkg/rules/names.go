package rules

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateNewQueueName checks the name of a queue to be created. Queue
// names become part of Command names (<queue>-closequeue-xxxxx, which must
// be valid object names), so a new queue must have a DNS-1123 label.
func ValidateNewQueueName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("invalid queue name %q: %s", name, errs[0])
	}
	return nil
}

// ValidateQueueName checks the name of an existing queue: Volcano's CRD
// allows any DNS-1123 subdomain, so queues made elsewhere may have one.
func ValidateQueueName(name string) error {
	if name == "" {
		return errors.New("queue name must not be empty")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("invalid queue name %q: %s", name, errs[0])
	}
	return nil
}
