package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table a run picks its one subcommand from names each as the command
// names itself, and holds every command of the whole tree.
func TestSubcommands_MatchTheTree(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	var names []string
	for _, c := range subcommands() {
		assert.Equal(t, c.name, c.build(f).Name())
		names = append(names, c.name)
	}
	var tree []string
	for _, cmd := range newRootCmd(f).Commands() {
		if cmd.Name() != "completion" && cmd.Name() != "help" {
			tree = append(tree, cmd.Name())
		}
	}
	assert.ElementsMatch(t, tree, names)
}

func TestCommandName(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootOnly(f)
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"log", "-n", "1"}, "log"},
		{[]string{"--db", "x.db", "log"}, "log"},
		{[]string{"--db=x.db", "status"}, "status"},
		{[]string{"-q", "--no-pager", "--lock-timeout", "1s", "show"}, "show"},
		{[]string{"--quiet=true", "reflog"}, "reflog"},
		{[]string{"--no-color", "log", "-2"}, "log"},
		{[]string{"--version"}, ""},
		{[]string{"--bogus", "log"}, ""},
		{[]string{"-h"}, ""},
		{[]string{"--", "log"}, ""},
		{[]string{"--db"}, ""},
		{[]string{"help", "log"}, "help"},
		{[]string{"frobnicate"}, "frobnicate"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, commandName(root, tt.args), "%q", tt.args)
	}
}

// A run builds only the command it runs, and behaves as with the whole
// tree: its usage errors, its help; a name that is no command still gets
// the whole tree, for cobra's suggestions.
func TestRun_BuildsTheOneCommand(t *testing.T) {
	f, out, errOut := testFactory(t, nil)
	db := filepath.Join(t.TempDir(), "t.db")
	root := newRootCmdFor(f, []string{"--db", db, "log"})
	require.Len(t, root.Commands(), 1)
	assert.Equal(t, "log", root.Commands()[0].Name())
	assert.Len(t, newRootCmdFor(f, []string{"lgo"}).Commands(), len(newRootCmd(f).Commands()))

	exec := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return run(context.Background(), args, f.IO, f.Getenv)
	}
	require.Equal(t, exitOK, exec("--db", db, "init"))
	require.Equal(t, exitOK, exec("--db", db, "commit", "-r", "user", "-m", "hello"))
	require.Equal(t, exitOK, exec("--db", db, "log", "--oneline"))
	assert.Contains(t, out.String(), "(HEAD -> main) user: hello")
	assert.Equal(t, exitUsage, exec("--db", db, "log", "--bogus"))
	assert.Contains(t, errOut.String(), "Run 'tract log --help' for usage.")
	require.Equal(t, exitOK, exec("log", "--help"))
	assert.True(t, strings.HasPrefix(out.String(), "Usage: tract log [REV] [flags]\n"), out.String())
	assert.Contains(t, out.String(), "Global flags (see 'tract --help'): --db,", "the global flags")
	assert.Equal(t, exitUsage, exec("lgo"))
	assert.Contains(t, errOut.String(), "\tlog\n", "cobra suggests the command")
}
