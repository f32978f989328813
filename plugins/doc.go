// Package plugins holds the controllers that 'kubectl vc serve' runs, one
// folder each (queue, podgroup, nodeset). Each registers itself with
// pkg/controller/framework in an init function.
package plugins
