// Package rules holds the Volcano domain rules that more than one part of
// kubectl-vc applies: how podgroups are counted by phase, which queue names
// are valid, how resource quantities are parsed and bounded, how a queue's
// resources bound each other and the queues around it, and how the queue
// hierarchy is walked (parents, cycles, missing parents). The CLI,
// the controllers and the tests use these, so a rule has one definition and
// the parts cannot disagree.
package rules
