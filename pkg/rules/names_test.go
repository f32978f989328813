package rules

import (
	"strings"
	"testing"
)

func TestQueueNames(t *testing.T) {
	for _, tc := range []struct {
		name          string
		okNew, okSeen bool
	}{
		{"team-a", true, true},
		{"a.b", false, true}, // a subdomain: may exist, cannot be created here
		{"", false, false},
		{"Team", false, false},
		{strings.Repeat("a", 64), false, true},
		{"-a", false, false},
	} {
		if err := ValidateNewQueueName(tc.name); (err == nil) != tc.okNew {
			t.Errorf("ValidateNewQueueName(%q) = %v, want ok=%v", tc.name, err, tc.okNew)
		}
		if err := ValidateQueueName(tc.name); (err == nil) != tc.okSeen {
			t.Errorf("ValidateQueueName(%q) = %v, want ok=%v", tc.name, err, tc.okSeen)
		}
	}
}
