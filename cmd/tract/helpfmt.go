package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tractdag/tract/docs"
)

// Every command's help has the same sections, in the order a reader
// wants them: the usage line, one paragraph saying what the command does
// (its Long, else its Short), its subcommands, its flags, the global flags
// by name, its examples, and the help topics that explain it at length
// (the guides of docs/, named by addTopics). cobra's own template puts
// the description before the usage line and every global flag's whole
// line after the command's flags.

// guideAnnotation marks a help topic that is a guide of docs/: its text
// is the page's, rendered for the terminal.
const guideAnnotation = "tract_guide"

// commandTopics returns, for each command, the guides its help points to
// ('tract help TOPIC'): where the long explanations of what it does are.
// Subcommands ("config set") point to their parent's.
func commandTopics() map[string][]string {
	return map[string][]string{
		"init":        {"commands"},
		"demo":        {"validators"},
		"config":      {"validators", "providers"},
		"commit":      {"commands"},
		"log":         {"history"},
		"search":      {"history"},
		"graph":       {"history"},
		"show":        {"history", "tasks"},
		"reset":       {"history"},
		"branch":      {"history", "sharing"},
		"checkout":    {"history"},
		"switch":      {"history"},
		"status":      {"commands"},
		"compile":     {"history", "import-export"},
		"chat":        {"validators", "tasks", "interactive-chat", "providers", "tools"},
		"events":      {"tasks"},
		"escalations": {"tasks"},
		"escalation":  {"tasks"},
		"stats":       {"tasks"},
		"compress":    {"history"},
		"models":      {"providers"},
		"serve":       {"proxy", "api", "providers", "mcp-server"},
		"mcp":         {"mcp-server"},
		"import":      {"import-export"},
		"export":      {"import-export"},
		"fsck":        {"reliability"},
		"gc":          {"history", "reliability"},
		"compact":     {"reliability"},
		"copy":        {"sharing"},
		"migrate":     {"sharing"},
		"reflog":      {"history"},
		"version":     {"commands"},
		"completion":  {"commands"},
		"help":        {"commands"},
	}
}

// topicsOf returns the guides c's help points to: its own, else its
// parent's.
func topicsOf(c *cobra.Command) []string {
	for ; c != nil && c.HasParent(); c = c.Parent() {
		if t, ok := commandTopics()[c.Name()]; ok {
			return t
		}
	}
	return nil
}

// newGuideTopic returns the help topic (a command with no Run) of guide
// g of docs/, which 'tract --help' lists and 'tract help TOPIC' prints.
func newGuideTopic(g docs.Guide) *cobra.Command {
	return &cobra.Command{
		Use:         g.Topic,
		Short:       g.Summary,
		Annotations: map[string]string{guideAnnotation: g.Topic},
	}
}

// isHelpTopic reports a help topic: a command that runs nothing and has
// no subcommands.
func isHelpTopic(c *cobra.Command) bool {
	return !c.Runnable() && !c.HasSubCommands() && c.HasParent()
}

// writeHelp writes c's help to w; on a terminal width columns wide (0:
// not a terminal), the flags' descriptions wrap to fit it.
func writeHelp(w io.Writer, c *cobra.Command, width int) {
	if topic := c.Annotations[guideAnnotation]; topic != "" {
		md, err := docs.Markdown(topic)
		if err != nil {
			fmt.Fprintf(w, "%v\n", err)
			return
		}
		io.WriteString(w, renderMarkdown(md, width))
		return
	}
	if isHelpTopic(c) {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(c.Long))
		return
	}
	var b strings.Builder
	b.WriteString("Usage: " + useLine(c) + "\n\n")
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	b.WriteString(strings.TrimSpace(desc) + "\n")
	if c.HasAvailableSubCommands() {
		writeCommandList(&b, c)
	}
	if flags := flagUsages(c.LocalFlags(), width); flags != "" {
		b.WriteString("\nFlags:\n" + flags)
	}
	if inherited := flagNames(c.InheritedFlags()); len(inherited) > 0 {
		root := c.Root().Name()
		b.WriteString(wrap(fmt.Sprintf("Global flags (see '%s --help'): %s", root, strings.Join(inherited, ", ")), 78, "  ") + "\n")
	}
	if c.Example != "" {
		b.WriteString("\nExamples:\n" + strings.TrimRight(c.Example, "\n") + "\n")
	}
	switch topics := topicsOf(c); len(topics) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "\nLearn more: '%s help %s' (docs/%s.md)\n", c.Root().Name(), topics[0], topics[0])
	default:
		b.WriteString("\n" + wrap(fmt.Sprintf("Learn more with '%s help TOPIC' (docs/TOPIC.md): %s", c.Root().Name(), strings.Join(topics, ", ")), 78, "  ") + "\n")
	}
	io.WriteString(w, b.String())
}

// valueNameAnnotation is the annotation of a flag that names its value
// in the help ("--feedback plain|xml") with a name that is not a word of
// its usage, as pflag's convention (the usage's first `NAME` in back
// quotes) would need. setValueName sets it.
const valueNameAnnotation = "tract_value_name"

// setValueName names the value of fs's flag name in the help.
func setValueName(fs *pflag.FlagSet, name, value string) {
	if err := fs.SetAnnotation(name, valueNameAnnotation, []string{value}); err != nil {
		panic(err) // a flag defined a line above: a programming error
	}
}

// flagUsages lists the flags of fs as pflag's FlagUsagesWrapped does, a
// flag a line, its names and value in a column and its usage beside
// them, with three differences: a flag's value is named by setValueName
// or pflag's back-quote convention (the usage's `NAME`), never by a Go
// type; a default is written as it is typed (--feedback plain, not
// "plain"), quoted only when it holds spaces; and on a terminal width
// columns wide (0: not a terminal) each usage wraps to fit it.
func flagUsages(fs *pflag.FlagSet, width int) string {
	type row struct{ names, usage string }
	var rows []row
	col := 0
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		names := "      --" + fl.Name
		if fl.Shorthand != "" && fl.ShorthandDeprecated == "" {
			names = "  -" + fl.Shorthand + ", --" + fl.Name
		}
		_, usage := pflag.UnquoteUsage(fl)
		if value := flagValueName(fl); value != "" {
			names += " " + value
		}
		if d := flagDefault(fl); d != "" {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{names, usage})
		col = max(col, len(names)+3)
	})
	var b strings.Builder
	for _, r := range rows {
		usage := r.usage
		if width-col >= 20 {
			usage = wrap(usage, width-col, strings.Repeat(" ", col))
		}
		fmt.Fprintf(&b, "%-*s%s\n", col, r.names, usage)
	}
	return b.String()
}

// flagValueName is the name the help gives fl's value ("N", "TEXT",
// "plain|xml"): set by setValueName, else the usage's `NAME`, else
// pflag's (a Go type, which TestHelp_FlagValuesAreNamedInWords keeps out
// of tract's help); "" for a flag that takes none.
func flagValueName(fl *pflag.Flag) string {
	if v := fl.Annotations[valueNameAnnotation]; len(v) == 1 {
		return v[0]
	}
	name, _ := pflag.UnquoteUsage(fl)
	return name
}

// flagDefault is how the help writes fl's default: "" for none (a zero
// value, as pflag omits it), else the value as one would type it.
func flagDefault(fl *pflag.Flag) string {
	switch d := fl.DefValue; {
	case d == "" || d == "false" || d == "0" || d == "0s" || d == "[]":
		return ""
	case strings.ContainsAny(d, " \t\n\"'"):
		return strconv.Quote(d)
	default:
		return d
	}
}

// useLine is c's usage line: for a command that only groups others,
// "tract config COMMAND".
func useLine(c *cobra.Command) string {
	if !c.Runnable() && c.HasAvailableSubCommands() {
		return c.CommandPath() + " COMMAND"
	}
	return c.UseLine()
}

// writeCommandList writes c's subcommands and, for the root, its help
// topics.
func writeCommandList(b *strings.Builder, c *cobra.Command) {
	var commands, topics []*cobra.Command
	width := 0
	for _, sub := range c.Commands() {
		switch {
		case sub.IsAvailableCommand():
			commands = append(commands, sub)
		case isHelpTopic(sub) && !sub.Hidden:
			topics = append(topics, sub)
		default:
			continue
		}
		width = max(width, len(sub.Name()))
	}
	b.WriteString("\nCommands:\n")
	for _, sub := range commands {
		fmt.Fprintf(b, "  %-*s  %s\n", width, sub.Name(), sub.Short)
	}
	if len(topics) > 0 {
		fmt.Fprintf(b, "\nHelp topics ('%s help TOPIC'):\n", c.Root().Name())
		for _, sub := range topics {
			fmt.Fprintf(b, "  %-*s  %s\n", width, sub.Name(), sub.Short)
		}
	}
	if !c.HasParent() {
		fmt.Fprintf(b, "\n'%s help COMMAND' (or '%s COMMAND --help') says more about a command.\n", c.Name(), c.Name())
	}
}

// flagNames lists the flags of fs by name: "--db", "-q/--quiet".
func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		name := "--" + fl.Name
		if fl.Shorthand != "" {
			name = "-" + fl.Shorthand + "/" + name
		}
		names = append(names, name)
	})
	slices.Sort(names)
	return names
}

// mdPatterns are the regular expressions that render a guide's Markdown.
type mdPatterns struct {
	heading, fence, linkRef, image, bold, italic, comment, codeSpan, guidePages, listItem, blankRun *regexp.Regexp
}

// markdown returns the patterns, compiled the first time a guide is
// rendered rather than as every command starts (they were a sixth of the
// main package's start-up).
var markdown = sync.OnceValue(func() *mdPatterns {
	return &mdPatterns{
		heading:    regexp.MustCompile(`^(#{1,6}) (.*)$`),
		fence:      regexp.MustCompile("^(\\s*)```"),
		linkRef:    regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`),
		image:      regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+)\)`),
		bold:       regexp.MustCompile(`\*\*([^*]+)\*\*`),
		italic:     regexp.MustCompile(`(^|[\s(])\*([^*\s][^*]*)\*`),
		comment:    regexp.MustCompile(`^<!--.*-->$`),
		codeSpan:   regexp.MustCompile("`([^`]*)`"),
		guidePages: regexp.MustCompile(`^([a-z-]+)\.md(#.*)?$`),
		// The start of a list item, its marker and the space after.
		listItem: regexp.MustCompile(`^\s*(?:[-*]|\d+\.) `),
		blankRun: regexp.MustCompile(`\n{3,}`),
	}
})

// renderMarkdown turns a guide's Markdown into text for a terminal:
// headings in capitals (or underlined), code blocks indented, code spans,
// emphasis and HTML comments dropped, and links written as their text
// with where they lead ('tract help TOPIC' for another guide). On a
// terminal width columns wide (0: not a terminal), a paragraph with a
// line wider than that is wrapped to fit it (see fitParagraphs).
func renderMarkdown(md string, width int) string {
	pat := markdown()
	guides := map[string]bool{"exit-codes": true}
	for _, g := range docs.Guides() {
		guides[g.Topic] = true
	}
	var b, text strings.Builder
	// Text is rendered a run of lines at a time: a link's text may
	// span two lines.
	flushText := func() {
		b.WriteString(fitParagraphs(renderInline(text.String(), guides), width))
		text.Reset()
	}
	inCode := false
	codeIndent := ""
	for _, l := range strings.Split(strings.TrimRight(md, "\n"), "\n") {
		if m := pat.fence.FindStringSubmatch(l); m != nil {
			flushText()
			inCode = !inCode
			codeIndent = m[1]
			continue
		}
		if inCode {
			if l == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("    " + strings.TrimPrefix(l, codeIndent) + "\n")
			continue
		}
		if pat.comment.MatchString(strings.TrimSpace(l)) {
			continue
		}
		if m := pat.heading.FindStringSubmatch(l); m != nil {
			flushText()
			h := renderInline(m[2], guides)
			if len(m[1]) <= 2 {
				b.WriteString(strings.ToUpper(h) + "\n")
			} else {
				b.WriteString(h + "\n" + strings.Repeat("-", len([]rune(h))) + "\n")
			}
			continue
		}
		text.WriteString(l + "\n")
	}
	flushText()
	// Comments dropped leave runs of blank lines.
	out := pat.blankRun.ReplaceAllString(b.String(), "\n\n")
	return strings.TrimLeft(out, "\n")
}

// fitParagraphs wraps to width columns each paragraph of rendered prose
// (its lines between blank lines) that has a line wider than that, a
// list item at a time, each kept at its indentation; other paragraphs,
// and tables, stay as they are. width 0 changes nothing.
func fitParagraphs(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		j := i
		for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
			j++
		}
		out = append(out, fitParagraph(lines[i:j], width)...)
		if j < len(lines) {
			out = append(out, lines[j])
		}
		i = j
	}
	return strings.Join(out, "\n")
}

// fitParagraph wraps the lines of one paragraph to width columns if one
// is wider (see fitParagraphs).
func fitParagraph(para []string, width int) []string {
	wide := false
	for _, l := range para {
		if strings.HasPrefix(strings.TrimSpace(l), "|") {
			return para // a table
		}
		wide = wide || displayWidth(l) > width
	}
	if !wide {
		return para
	}
	pat := markdown()
	var out, words []string
	indent := ""
	flush := func() {
		if len(words) > 0 {
			out = append(out, indent+wrap(strings.Join(words, " "), width-len(indent), strings.Repeat(" ", len(indent))))
		}
		words = nil
	}
	for _, l := range para {
		if m := pat.listItem.FindString(l); m != "" {
			flush()
			indent = m
			words = strings.Fields(l[len(m):])
			continue
		}
		if len(words) == 0 {
			indent = l[:len(l)-len(strings.TrimLeft(l, " "))]
		}
		words = append(words, strings.Fields(l)...)
	}
	flush()
	return out
}

// renderInline renders the spans of one line of Markdown.
func renderInline(l string, guides map[string]bool) string {
	pat := markdown()
	// A picture (a screenshot) is named, with its file: a terminal shows
	// no picture.
	l = pat.image.ReplaceAllStringFunc(l, func(s string) string {
		m := pat.image.FindStringSubmatch(s)
		return "(picture: " + m[1] + ", docs/" + strings.TrimPrefix(m[2], "docs/") + ")"
	})
	l = pat.linkRef.ReplaceAllStringFunc(l, func(s string) string {
		m := pat.linkRef.FindStringSubmatch(s)
		text, target := m[1], m[2]
		switch g := pat.guidePages.FindStringSubmatch(target); {
		case strings.Contains(target, "://"):
			return text + " (" + target + ")"
		case g != nil && guides[g[1]]:
			return text + " ('tract help " + g[1] + "')"
		case strings.HasPrefix(target, "#"):
			return text
		case strings.HasPrefix(target, "../"):
			return text + " (" + strings.TrimPrefix(target, "../") + ")"
		default:
			return text + " (docs/" + target + ")"
		}
	})
	l = pat.bold.ReplaceAllString(l, "$1")
	l = pat.italic.ReplaceAllString(l, "$1$2")
	l = pat.codeSpan.ReplaceAllString(l, "$1")
	return strings.ReplaceAll(l, `\|`, "|")
}
