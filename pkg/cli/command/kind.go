package command

import (
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is Volcano's bus.volcano.sh Command. Any object name is a valid
// Command name (generateName makes "<target>-<action>-xxxxx").
var Kind = &kind.Kind[busv1alpha1.Command, *busv1alpha1.Command, *busv1alpha1.CommandList]{
	Name: "Command", Example: "dev-openqueue-8jhw5",
	GVK: busv1alpha1.SchemeGroupVersion.WithKind("Command"),
	Client: func(c versioned.Interface, ns string) kind.Client[*busv1alpha1.Command, *busv1alpha1.CommandList] {
		return c.BusV1alpha1().Commands(ns)
	},
	Group: kind.Group{Use: "command", Aliases: []string{"commands", "cmd"}, Help: kind.Help{
		Short: "Inspect and delete pending Volcano Commands",
		Long: `
				A Command asks a controller to act on an object (e.g. CloseQueue on a queue).
				The controller deletes it once applied, so every Command still listed is
				waiting: a Command that stays is a stuck request worth looking into, and one
				no controller will apply can be deleted.`,
		Example: `
				kubectl vc command list -A -o wide
				kubectl vc command delete --all --queue dev -A`,
	}},
}
