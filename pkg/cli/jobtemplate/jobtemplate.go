// Package jobtemplate implements 'kubectl vc jobtemplate' for Volcano's
// flow.volcano.sh JobTemplates (create -f, list, describe, delete): a
// Volcano Job's spec under a name, which a JobFlow's steps name. Volcano's
// jobtemplate controller records in each template's status the jobs made
// from it; kubectl vc serve has no such controller. Its Kind (kind.go)
// says what a JobTemplate has of its own; the commands are the shared ones
// of pkg/cli/write, list and describe.
package jobtemplate
