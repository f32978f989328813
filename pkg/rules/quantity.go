package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseResourceList parses a resource list written as NAME=QUANTITY pairs
// separated by commas ("cpu=4,memory=8Gi"), for the flag named flag (which
// the messages name). Names must be qualified names, each given once;
// quantities must parse, be non-negative, and be stored exactly as written
// (see MaxQuantityLen and MaxExponent). An empty string is an empty list.
func ParseResourceList(flag, s string) (corev1.ResourceList, error) {
	list := corev1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return list, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("invalid --%s %q: write NAME=QUANTITY pairs, e.g. cpu=4,memory=8Gi", flag, s)
		}
		if errs := validation.IsQualifiedName(name); len(errs) > 0 {
			return nil, fmt.Errorf("invalid --%s: resource name %q: %s", flag, name, errs[0])
		}
		if _, dup := list[corev1.ResourceName(name)]; dup {
			return nil, fmt.Errorf("invalid --%s: %s is given twice", flag, name)
		}
		if len(value) > MaxQuantityLen {
			// Not echoed: the point is that it is too long to print.
			return nil, fmt.Errorf("invalid --%s: the quantity of %s is %d characters long; at most %d are accepted", flag, name, len(value), MaxQuantityLen)
		}
		if err := checkExponent(value); err != nil {
			return nil, fmt.Errorf("invalid --%s: %s=%s: %s", flag, name, value, err)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("invalid --%s: %s=%s is not a quantity (use e.g. 4, 500m, 8Gi)", flag, name, value)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("invalid --%s: %s=%s must not be negative", flag, name, value)
		}
		// What is sent is q.String(). apimachinery has no suffix above E
		// and prints 1000E (or 1e21 written out) as "1", so such a value
		// would be stored as something else entirely (found by
		// FuzzParseResources). Refuse what does not survive the trip.
		// The stored form must also pass our own exponent bound: 100e1000
		// is written within it but stored as 1e1002, which this flag would
		// then refuse when pasted back from 'queue describe' (also found
		// by FuzzParseResources).
		stored := q.String()
		if len(stored) > MaxQuantityLen {
			return nil, fmt.Errorf("invalid --%s: %s=%s would be stored in %d characters; at most %d are accepted", flag, name, value, len(stored), MaxQuantityLen)
		}
		if err := checkExponent(stored); err != nil {
			return nil, fmt.Errorf("invalid --%s: %s=%s would be stored as %s: %s", flag, name, value, stored, err)
		}
		if back, err := resource.ParseQuantity(stored); err != nil || back.Cmp(q) != 0 {
			return nil, fmt.Errorf("invalid --%s: %s=%s cannot be stored as written (Kubernetes would store %s); use a smaller quantity", flag, name, value, stored)
		}
		list[corev1.ResourceName(name)] = q
	}
	return list, nil
}

// MaxQuantityLen bounds how long a quantity may be written or stored.
// The longest real one (a 19-digit integer, nine decimals and a suffix)
// is about 30 characters; without a bound, a value of 100 000 digits took
// seconds to parse (apimachinery's rounding is quadratic in the digits)
// and was then echoed whole in the error line.
const MaxQuantityLen = 100

// MaxExponent bounds the decimal exponent of a quantity such as 5e3.
// apimachinery keeps only the low 32 bits of the exponent it parses
// (1e4294967297 would silently be 10), and rounding a quantity with a large
// negative exponent up to its smallest unit takes time that grows faster
// than the exponent (1e-2000000000 did not return; both found by
// FuzzParseResources). Real resources lie between 1n and a few E, so no
// real value needs an exponent near this bound; it applies both to what
// the user writes and to the form the value is stored in.
const MaxExponent = 1000

// exponentSuffix is the exponent form of a quantity's suffix.
var exponentSuffix = regexp.MustCompile(`[eE]([+-]?[0-9]+)$`)

// checkExponent refuses a quantity written with an exponent beyond
// ±MaxExponent, before apimachinery parses it.
func checkExponent(value string) error {
	m := exponentSuffix.FindStringSubmatch(value)
	if m == nil {
		return nil
	}
	if e, err := strconv.ParseInt(m[1], 10, 64); err != nil || e > MaxExponent || e < -MaxExponent {
		return fmt.Errorf("the exponent must be between -%d and %d", MaxExponent, MaxExponent)
	}
	return nil
}
