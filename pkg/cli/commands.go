package cli

// Commands lists the command groups beyond version and completion. Each
// feature adds its constructor here.
func Commands() []Subcommand {
	return []Subcommand{}
}
