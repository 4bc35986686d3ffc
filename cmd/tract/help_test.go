package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/docs"
)

// helpOf returns what 'tract help PATH' prints for c.
func helpOf(c *cobra.Command) string {
	var b bytes.Buffer
	writeHelp(&b, c, 0)
	return b.String()
}

// sections are the headings of a command's help, in the order they come.
var sections = []string{"Commands:", "Flags:", "Global flags", "Examples:", "Learn more"}

// Every command's help is, in order: its usage line, one paragraph saying
// what it does (a labelled list, such as config's settings, may follow),
// its subcommands, flags, examples and the topics that say more.
func TestHelp_UsageDescriptionFlagsExamplesInThatOrder(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	for _, c := range append(allCommands(root), root) {
		if isHelpTopic(c) {
			continue
		}
		t.Run(c.CommandPath(), func(t *testing.T) {
			c.InitDefaultHelpFlag()
			help := helpOf(c)
			lines := strings.Split(help, "\n")
			assert.Equal(t, "Usage: "+useLine(c), lines[0], "the usage line comes first")
			assert.Empty(t, lines[1])
			desc, _, _ := strings.Cut(strings.Join(lines[2:], "\n"), "\n\n")
			assert.NotEmpty(t, desc, "a description follows the usage line")
			for _, s := range sections {
				assert.NotContains(t, desc, "\n"+s, "the description is one paragraph")
			}
			for _, extra := range strings.Split(c.Long, "\n\n")[1:] {
				first, _, _ := strings.Cut(extra, "\n")
				assert.True(t, strings.HasSuffix(first, ":"), "after its paragraph a description holds only labelled lists, not %q", first)
			}
			at := 0
			for _, s := range sections {
				i := strings.Index(help, "\n"+s)
				if i < 0 {
					continue
				}
				assert.Greater(t, i, at, "%q comes after the sections before it", s)
				at = i
			}
			if c.Runnable() {
				assert.Contains(t, help, "\nFlags:\n")
			}
		})
	}
}

// 'tract chat --help' reads in a minute, on an 80-column terminal as
// piped: the long explanations are in the guides it points to.
func TestHelp_ChatFitsOnAScreen(t *testing.T) {
	for _, tty := range []bool{true, false} {
		f, out, _ := testFactory(t, map[string]string{"COLUMNS": "80"})
		f.IO.OutTTY = tty
		root := newRootCmd(f)
		root.SetArgs([]string{"chat", "--help"})
		require.NoError(t, root.Execute())
		flush(f.IO.Out)
		n := strings.Count(out.String(), "\n")
		assert.LessOrEqual(t, n, 60, "on a terminal: %v; tract chat --help is %d lines:\n%s", tty, n, out.String())
		assert.Contains(t, out.String(), "validators, tasks")
	}
}

// Every help topic is a page of docs/, every command's help points to
// topics that exist, and each top-level command points to one.
func TestHelp_EveryTopicHasItsPage(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	topics := map[string]bool{}
	for _, c := range root.Commands() {
		if !isHelpTopic(c) {
			continue
		}
		topics[c.Name()] = true
		_, err := os.Stat(filepath.Join("..", "..", "docs", c.Name()+".md"))
		assert.NoError(t, err, "the help topic %s has no page docs/%s.md", c.Name(), c.Name())
		assert.NotEmpty(t, strings.TrimSpace(helpOf(c)), c.Name())
	}
	require.NotEmpty(t, topics)
	for name, ts := range commandTopics() {
		for _, topic := range ts {
			assert.True(t, topics[topic], "the help of %s points to %q, which is no help topic", name, topic)
		}
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			assert.NotEmpty(t, topicsOf(c), "the help of %s points to no guide: add it to commandTopics", c.Name())
		}
	}
}

// Every page of docs/ is a guide (a help topic), the exit-code table, or
// a package contract the README lists under "Reference"; and the README's
// table of contents links every guide.
func TestHelp_EveryDocsPageIsAGuideOrAContract(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, reference, ok := strings.Cut(string(readme), "\nReference:")
	require.True(t, ok, "the README has no 'Reference:' list of package contracts")
	guides := map[string]bool{"exit-codes": true}
	for _, g := range docs.Guides() {
		guides[g.Topic] = true
		md, err := docs.Markdown(g.Topic)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(md, "# "), "docs/%s.md starts with its title", g.Topic)
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		if guides[name] {
			assert.Contains(t, string(readme), "](docs/"+name+".md)", "the README's table of contents does not link the guide docs/%s.md", name)
			continue
		}
		assert.Contains(t, reference, "](docs/"+name+".md)", "docs/%s.md is neither a guide (docs.Guides) nor a contract the README lists under Reference", name)
	}
	_, err = docs.Markdown("../README")
	assert.Error(t, err)
	_, err = docs.Markdown("nosuch")
	assert.Error(t, err)
}

// A guide is rendered for the terminal: headings, code, links and
// emphasis in plain text.
func TestHelp_RenderMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, md, want string }{
		{"title and section", "# Chat and validators\n\n## A failed turn\n\n### Deeper\n",
			"CHAT AND VALIDATORS\n\nA FAILED TURN\n\nDeeper\n------\n"},
		{"code spans and emphasis", "Run `tract log --all` **now**, *gently*.\n", "Run tract log --all now, gently.\n"},
		{"a link to a guide", "See [Tasks](tasks.md#escalation).\n", "See Tasks ('tract help tasks').\n"},
		{"a link to a contract", "See [retry.md](retry.md).\n", "See retry.md (docs/retry.md).\n"},
		{"a link outside docs", "See [the map](../ARCHITECTURE.md).\n", "See the map (ARCHITECTURE.md).\n"},
		{"a web link", "See [jsonschema](https://example.com/x).\n", "See jsonschema (https://example.com/x).\n"},
		{"an anchor", "See [below](#limits).\n", "See below.\n"},
		{"a picture", "![The graph](web-graph.png)\n", "(picture: The graph, docs/web-graph.png)\n"},
		{"a code block indented, the docs test's comment dropped", "<!-- docs-test: reply x -->\n\n```console\n$ tract log\n* 1234abcd user: hi\n```\n",
			"    $ tract log\n    * 1234abcd user: hi\n"},
		{"a table's escaped bar", "| `a \\| b` | c |\n", "| a | b | c |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, renderMarkdown(tc.md, 0))
		})
	}
}

// The guides render without Markdown left over: no fences, no HTML
// comments, no link syntax.
func TestHelp_GuidesRenderClean(t *testing.T) {
	leftover := regexp.MustCompile("(?m)^```|<!--|\\]\\([^)]*\\)")
	for _, g := range docs.Guides() {
		md, err := docs.Markdown(g.Topic)
		require.NoError(t, err)
		for i, l := range strings.Split(renderMarkdown(md, 0), "\n") {
			if !strings.HasPrefix(l, "    ") { // code is shown as it is
				assert.NotRegexp(t, leftover, l, "%s, line %d", g.Topic, i+1)
			}
		}
	}
}

// On a terminal 80 columns wide, every line of every command's help
// fits it: the usage line, the description, the command list, the flags
// (whose descriptions wrap), the examples; and so does the prose of the
// guides 'tract help TOPIC' prints (their code and tables are shown as
// they are).
func TestHelp_FitsAnEightyColumnTerminal(t *testing.T) {
	f, _, _ := testFactory(t, map[string]string{"COLUMNS": "80"})
	f.IO.OutTTY = true
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	for _, c := range append(allCommands(root), root) {
		t.Run(c.CommandPath(), func(t *testing.T) {
			c.InitDefaultHelpFlag()
			var b bytes.Buffer
			writeHelp(&b, c, f.outWidth())
			for i, line := range strings.Split(b.String(), "\n") {
				if isHelpTopic(c) && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "|")) {
					continue
				}
				assert.LessOrEqual(t, displayWidth(line), 80, "line %d: %q", i+1, line)
			}
		})
	}
}

// A guide's paragraph with a line too wide for the terminal is wrapped,
// list items keeping their indentation; others, and tables, are left as
// they are.
func TestHelp_FitParagraphs(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"narrow enough", "one two\nthree\n", "one two\nthree\n"},
		{"a wide paragraph", "one two three four\nfive\n\nsix seven\n",
			"one two three\nfour five\n\nsix seven\n"},
		{"list items", "- one two three four\n  five\n- six\n", "- one two\n  three four\n  five\n- six\n"},
		{"a table", "| one | two | three four five |\n", "| one | two | three four five |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fitParagraphs(tc.in, 14))
		})
	}
	assert.Equal(t, "one two three four\n", fitParagraphs("one two three four\n", 0), "piped: as written")
}

// chat's help gives a flag one line; docs/validators.md's table of
// chat's flags says what each does at length, under the same names.
func TestHelp_ChatFlagsAreExplainedInTheGuide(t *testing.T) {
	md, err := docs.Markdown("validators")
	require.NoError(t, err)
	_, table, ok := strings.Cut(md, "\n## Chat's flags\n")
	require.True(t, ok, "docs/validators.md has no section \"Chat's flags\"")
	table, _, _ = strings.Cut(table, "\n## ")
	f, _, _ := testFactory(t, nil)
	chat, _, err := newRootCmd(f).Find([]string{"chat"})
	require.NoError(t, err)
	rows := 0
	for _, line := range strings.Split(flagUsages(chat.LocalFlags(), 0), "\n") {
		names, _, _ := strings.Cut(strings.TrimSpace(line), "   ")
		if names == "" || strings.HasSuffix(names, "--help") {
			continue
		}
		rows++
		assert.Contains(t, table, "\n| `"+strings.ReplaceAll(names, "|", `\|`)+"` | ", "docs/validators.md's table does not explain %s", names)
	}
	assert.Equal(t, rows, strings.Count(table, "\n| `"), "a row of the table is no flag of chat")
}

// A flag's help names its value in words (--max-attempts N, --feedback
// plain|xml), never by a Go type as pflag does (--max-attempts int).
func TestHelp_FlagValuesAreNamedInWords(t *testing.T) {
	goType := regexp.MustCompile(`^ +(-\S, )?--\S+ (string|int|int32|int64|uint|float|float32|float64|duration|stringArray|strings|ints|uints|bools|value) `)
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	for _, c := range append(allCommands(root), root) {
		if isHelpTopic(c) {
			continue
		}
		c.InitDefaultHelpFlag()
		for _, line := range strings.Split(flagUsages(c.LocalFlags(), 0), "\n") {
			assert.NotRegexp(t, goType, line, c.CommandPath())
		}
	}
}
