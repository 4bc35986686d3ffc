package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documents these tests keep in step with the commands: what a new
// command needs in them is its row in docs/commands.md's table of
// commands and, when it takes --json, the sections of docs/json.md that
// addJSONFlag names. The exit-code table of docs/exit-codes.md is
// generated.

var update = flag.Bool("update", false, "rewrite the generated exit-code table of docs/exit-codes.md")

var (
	commandsPath  = filepath.Join("..", "..", "docs", "commands.md")
	exitCodesPath = filepath.Join("..", "..", "docs", "exit-codes.md")
	jsonDocPath   = filepath.Join("..", "..", "docs", "json.md")
	exitCodesTag  = regexp.MustCompile(`(?s)(<!-- exit-codes: [^\n]*-->\n)(.*?)(<!-- end exit-codes -->\n)`)
)

// allCommands returns every command under root, subcommands included,
// root excepted.
func allCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		out = append(out, c)
		out = append(out, allCommands(c)...)
	}
	return out
}

// The exit-code table of docs/exit-codes.md is exitCodeTable, as 'tract
// help exit-codes' is: 'go test ./cmd/tract -run TestDocs_ExitCodesPage
// -update' regenerates it.
func TestDocs_ExitCodesPage(t *testing.T) {
	data, err := os.ReadFile(exitCodesPath)
	require.NoError(t, err)
	m := exitCodesTag.FindSubmatchIndex(data)
	require.NotNil(t, m, "docs/exit-codes.md has no <!-- exit-codes: ... --> ... <!-- end exit-codes --> block")
	want := exitCodesMarkdown()
	if *update {
		out := append(append(slices.Clone(data[:m[4]]), want...), data[m[5]:]...)
		require.NoError(t, os.WriteFile(exitCodesPath, out, 0o644))
		return
	}
	assert.Equal(t, want, string(data[m[4]:m[5]]),
		"docs/exit-codes.md's table is not exitCodeTable: run 'go test ./cmd/tract -run TestDocs_ExitCodesPage -update'")
}

// jsonDocSections returns the "### " headings of docs/json.md.
func jsonDocSections(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(jsonDocPath)
	require.NoError(t, err)
	var sections []string
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			sections = append(sections, strings.Trim(h, "`"))
		}
	}
	require.NotEmpty(t, sections)
	return sections
}

// Every command that takes --json names the sections of docs/json.md that
// document its output (addJSONFlag), each of them exists, and every
// section documents some command's output: a new command's --json cannot
// go undocumented, nor a removed one stay documented.
func TestDocs_JSONSections(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	documented := jsonDocSections(t)
	used := map[string]bool{}
	for _, c := range allCommands(newRootCmd(f)) {
		named := c.Annotations[jsonDocs]
		if c.Flags().Lookup("json") == nil {
			assert.Empty(t, named, "%s names JSON sections but takes no --json", c.CommandPath())
			continue
		}
		require.NotEmpty(t, named, "%s takes --json but names no section of docs/json.md: use addJSONFlag", c.CommandPath())
		for _, s := range strings.Split(named, "|") {
			assert.Contains(t, documented, s, "%s prints the record of %q, which docs/json.md has no section for", c.CommandPath(), s)
			used[s] = true
		}
	}
	for _, s := range documented {
		assert.True(t, used[s], "docs/json.md's section %q documents no command's --json output", s)
	}
}

// documentedCommands returns the commands the table of commands of
// docs/commands.md lists: the first word of each command in backquotes in
// the first cell of each row ("help exit-codes" lists help and the topic
// exit-codes; "help [COMMAND]" only help).
func documentedCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(commandsPath)
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(data), "\n## Commands\n")
	require.True(t, ok, "docs/commands.md has no '## Commands' section")
	table, _, _ = strings.Cut(table, "\n\n|")
	cell := regexp.MustCompile("^\\| (.*?[^\\\\]) \\|")
	code := regexp.MustCompile("`([^`]+)`")
	var names []string
	for _, l := range strings.Split(table, "\n") {
		m := cell.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(l, "|---") || m[1] == "command" {
			continue
		}
		for _, c := range code.FindAllStringSubmatch(m[1], -1) {
			words := strings.Fields(c[1])
			names = append(names, words[0])
			if words[0] == "help" && len(words) > 1 && !strings.HasPrefix(words[1], "[") {
				names = append(names, words[1])
			}
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// The table of commands of docs/commands.md has a row for every command
// and topic 'tract help' lists, and none for a command that does not
// exist.
func TestDocs_CommandsTable(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	var commands []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() || c.Name() == "help" {
			commands = append(commands, c.Name())
		}
	}
	sort.Strings(commands)
	assert.Equal(t, commands, documentedCommands(t), "docs/commands.md's table of commands ('## Commands') and the commands of 'tract help'")
}
