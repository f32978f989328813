package v1beta1

import "strings"

// RevisionName is the name of the ControllerRevision of a NodeSet with the
// given hash: "<nodeset>-<hash>", the NodeSet name cut so that the whole
// fits a revision name, as the Kubernetes workload controllers name theirs.
func RevisionName(nodeSet, hash string) string {
	const maxPrefix = 223 // 253 minus room for "-" and a hash
	if len(nodeSet) > maxPrefix {
		nodeSet = nodeSet[:maxPrefix]
	}
	return nodeSet + "-" + hash
}

// PodRevisionHash is the hash of the revision a pod of the named NodeSet was
// made from: its controller.kubernetes.io/hash label (Slinky's operator and
// this controller), else the revision name in controller-revision-hash
// (earlier versions of this controller) without the "<nodeset>-" prefix.
// Empty when the pod carries neither.
func PodRevisionHash(nodeSet string, podLabels map[string]string) string {
	if h, ok := podLabels[LabelRevisionHash]; ok {
		return h
	}
	if name, ok := podLabels[LabelLegacyRevisionHash]; ok {
		return strings.TrimPrefix(name, nodeSet+"-")
	}
	return ""
}

// RevisionHash is the hash of a ControllerRevision of the named NodeSet:
// its controller.kubernetes.io/hash label, else what its name says.
func RevisionHash(nodeSet, revisionName string, revisionLabels map[string]string) string {
	if h, ok := revisionLabels[LabelRevisionHash]; ok && h != "" {
		return h
	}
	return strings.TrimPrefix(revisionName, RevisionName(nodeSet, ""))
}
