package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// newHelpCmd is 'tract help [COMMAND]'. It replaces cobra's, which prints
// the usage and exits 0 for a topic that does not exist: like 'git help
// nosuch', an unknown topic is an error (exit 2) that says where the list
// is.
func newHelpCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Help about any command",
		Long: `Print the help of a command, such as 'tract help chat', or a help topic:
the exit codes ('tract help exit-codes') or a guide, such as 'tract help
validators', which is the page docs/validators.md rendered for the terminal
(through the pager on a terminal); with no argument, the list of commands
and topics.`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			parent, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range parent.Commands() {
				if sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() || sub.Name() == "help" {
					if strings.HasPrefix(sub.Name(), toComplete) {
						names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
					}
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			topic, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usageErrorf("no help topic %q: 'tract help' lists the commands and topics", strings.Join(args, " "))
			}
			topic.InitDefaultHelpFlag()
			topic.InitDefaultVersionFlag()
			if topic.Annotations[guideAnnotation] != "" {
				// A guide is pages long: on a terminal, through the pager.
				return withPager(f, func() error {
					writeHelp(f.IO.Out, topic, f.outWidth())
					return nil
				})
			}
			return topic.Help()
		},
	}
}
