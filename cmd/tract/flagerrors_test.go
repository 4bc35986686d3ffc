package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// internals are words of Go, pflag or cobra that must not reach the user
// in an error: the strconv error under a flag value, Go type names, and
// pflag's own phrasing.
var internals = regexp.MustCompile(`strconv|Parse(Int|Uint|Float|Bool|Duration)|invalid syntax|\b(u?int(8|16|32|64)?|float(32|64)|time\.Duration|stringArray|stringSlice)\b|` +
	`invalid argument|flag needs an argument|bad flag syntax|unknown shorthand flag|unknown flag: `)

// runArgs runs tract with args in a directory with no repository and an
// empty environment; it returns the exit code, stdout and stderr.
func runArgs(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := testFactory(t, env)
	code := run(context.Background(), args, f.IO, f.Getenv)
	return code, out.String(), errOut.String()
}

// Bad flag values, missing values and unknown flags are said in tract's
// words, never pflag's or strconv's, and exit 2.
func TestRun_FlagErrorsInTractsWords(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"log", "-n", "abc"}, `tract: -n: "abc" is not a number: give a whole number, such as -n 10`},
		{[]string{"log", "--max-count=abc"}, `-n: "abc" is not a number`},
		{[]string{"log", "-n", "99999999999999999999"}, `-n: "99999999999999999999" is too large a number`},
		{[]string{"log", "-n"}, "tract: -n needs a value: give a whole number, such as -n 10"},
		{[]string{"log", "--max-count"}, "tract: --max-count needs a value"},
		{[]string{"log", "--all=maybe"}, `tract: --all: "maybe" is not true or false: give --all alone, or --all=false`},
		{[]string{"log", "--lock-timeout", "5"}, `tract: --lock-timeout: "5" is not a duration: give a number with a unit, such as 500ms, 30s, 5m or 1h30m`},
		{[]string{"chat", "--temperature", "warm"}, `tract: --temperature: "warm" is not a number: give a number, such as --temperature 0.5`},
		{[]string{"log", "--format"}, "tract: --format needs a value: give it as --format TEMPLATE or --format=TEMPLATE"},
		{[]string{"log", "---x"}, `tract: "---x" is not a flag: a flag is -x or --name`},
		{[]string{"log", "-x"}, "tract: unknown flag -x\n"},
		{[]string{"log", "-ax"}, "tract: unknown flag -a in -ax\nRun 'tract log --help' for usage.\n"},
		{[]string{"log", "-oneline"}, "tract: unknown flag -o in -oneline\n\nDid you mean this?\n\t--oneline\n"},
		{[]string{"log", "--onelin"}, "tract: unknown flag --onelin\n\nDid you mean this?\n\t--oneline\nRun 'tract log --help' for usage.\n"},
		{[]string{"log", "--ONELINE"}, "Did you mean this?\n\t--oneline\n"},
		{[]string{"log", "--no-pagr"}, "Did you mean this?\n\t--no-pager\n"},
		{[]string{"log", "--form"}, "Did you mean this?\n\t--format\n"},
		{[]string{"log", "--zzzzzz"}, "tract: unknown flag --zzzzzz\nRun 'tract log --help' for usage.\n"},
		{[]string{"--versoin"}, "Did you mean this?\n\t--version\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, tt.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.want)
			assert.NotRegexp(t, internals, errOut)
		})
	}
}

// usageCase is one usage error the walk over the command tree makes.
type usageCase struct {
	name string
	args []string
}

// usageCases returns, for cmd (a path of the tree under root), the
// usage errors to try: each flag with bad values and with no value, an
// unknown flag, an unknown shorthand, and too many arguments.
func usageCases(cmd *cobra.Command) []usageCase {
	path := strings.Fields(cmd.CommandPath())[1:]
	with := func(extra ...string) []string { return append(append([]string{}, path...), extra...) }
	cases := []usageCase{
		{"unknown flag", with("--no-such-flag")},
		{"unknown flag with a value", with("--no-such-flag=1")},
		{"unknown shorthand", with("-" + unusedShorthand(cmd))},
		{"bad flag syntax", with("---x")},
		{"too many arguments", with("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9")},
	}
	visit := func(fl *pflag.Flag) {
		if fl.Hidden || fl.Name == "help" {
			return
		}
		long := "--" + fl.Name
		var bad []string
		switch t := fl.Value.Type(); {
		case t == "bool":
			bad = []string{"maybe", "2", ""}
		case isIntType(t):
			bad = []string{"abc", "1.5", "99999999999999999999999", "10s", ""}
		case t == "float32" || t == "float64":
			bad = []string{"abc", "1e999", "0,5", ""}
		case t == "duration":
			bad = []string{"abc", "5", "-", "1y", ""}
		}
		for _, v := range bad {
			cases = append(cases, usageCase{fmt.Sprintf("%s=%q", long, v), with(long + "=" + v)})
			if fl.Shorthand != "" && v != "" && fl.Value.Type() != "bool" {
				cases = append(cases, usageCase{fmt.Sprintf("-%s %q", fl.Shorthand, v), with("-"+fl.Shorthand, v)})
			}
		}
		if fl.NoOptDefVal == "" && fl.Value.Type() != "bool" {
			cases = append(cases, usageCase{long + " with no value", with(long)})
			if fl.Shorthand != "" {
				cases = append(cases, usageCase{"-" + fl.Shorthand + " with no value", with("-" + fl.Shorthand)})
			}
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return cases
}

// unusedShorthand returns a letter that is the shorthand of none of cmd's
// flags.
func unusedShorthand(cmd *cobra.Command) string {
	for _, c := range "ZYXWUTSRQPOJIGEDCBAzyxwutsjig" {
		if cmd.Flags().ShorthandLookup(string(c)) == nil && cmd.InheritedFlags().ShorthandLookup(string(c)) == nil {
			return string(c)
		}
	}
	panic("no unused shorthand")
}

// walk calls fn on every runnable command under cmd.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	for _, c := range cmd.Commands() {
		if c.Runnable() {
			fn(c)
		}
		walk(c, fn)
	}
}

// Every command's usage errors, over the whole tree (a new command or
// flag is covered the day it is added): bad values of every flag of a
// type pflag parses, a flag with no value, unknown flags, bad flag syntax
// and too many arguments all exit 2 and say what is wrong in tract's
// words, naming no Go type and no strconv error.
func TestRun_EveryCommandsUsageErrorsInTractsWords(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	n := 0
	walk(root, func(cmd *cobra.Command) {
		// 'completion SHELL' prints a script whatever follows it.
		if cmd.Parent().Name() == "completion" {
			return
		}
		for _, tc := range usageCases(cmd) {
			n++
			t.Run(cmd.CommandPath()+"/"+tc.name, func(t *testing.T) {
				args := append([]string{"--db", filepath.Join(t.TempDir(), "none.db")}, tc.args...)
				code, out, errOut := runArgs(t, nil, args...)
				assert.Equal(t, exitUsage, code, "tract %q\n%s%s", tc.args, out, errOut)
				assert.True(t, strings.HasPrefix(errOut, "tract: "), errOut)
				assert.NotRegexp(t, internals, errOut)
				assert.Contains(t, errOut, "--help' for usage.")
			})
		}
	})
	assert.Greater(t, n, 300, "the walk found the commands and their flags")
}

// Every text flag of every command, given values its command may refuse
// when it runs: whatever the outcome, no Go or strconv text reaches the
// user.
func TestRun_EveryTextFlagsErrorsInTractsWords(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	walk(root, func(cmd *cobra.Command) {
		if cmd.Parent().Name() == "completion" {
			return
		}
		path := strings.Fields(cmd.CommandPath())[1:]
		visit := func(fl *pflag.Flag) {
			if t := fl.Value.Type(); fl.Hidden || t != "string" && t != "stringArray" {
				return
			}
			for _, v := range []string{"bogus", "-1", "99999999999999999999999", "1e999", "%"} {
				args := append(append([]string{}, path...), "--"+fl.Name+"="+v)
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					t.Chdir(t.TempDir()) // --db=bogus, -o bogus, …: a file named after the value lands here
					_, _, errOut := runArgs(t, map[string]string{"OPENAI_API_KEY": "k", "TRACT_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "TRACT_BACKOFF": "1ms"},
						append([]string{"--db", filepath.Join(t.TempDir(), "none.db")}, args...)...)
					assert.NotRegexp(t, internals, errOut)
				})
			}
		}
		cmd.LocalFlags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(visit)
	})
}

// 'tract --version' prints what 'tract version' prints.
func TestRun_VersionFlag(t *testing.T) {
	code, want, _ := runArgs(t, nil, "version")
	require.Equal(t, exitOK, code)
	code, got, errOut := runArgs(t, nil, "--version")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, want, got)
	assert.Regexp(t, `^tract \S+ \(go\S+ \S+/\S+, schema \d+\)\n$`, got)
	_, help, _ := runArgs(t, nil, "--help")
	assert.Contains(t, help, "--version")
}

func TestExpandCountShorthand(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	root := newRootCmd(f)
	tests := []struct{ args, want []string }{
		{[]string{"log", "-2"}, []string{"log", "--max-count=2"}},
		{[]string{"log", "--oneline", "-10", "main"}, []string{"log", "--oneline", "--max-count=10", "main"}},
		{[]string{"--db", "x.db", "log", "-3"}, []string{"--db", "x.db", "log", "--max-count=3"}},
		{[]string{"reflog", "main", "-5"}, []string{"reflog", "main", "--max-count=5"}},
		// A flag's value stays its value.
		{[]string{"log", "--format", "-2"}, []string{"log", "--format", "-2"}},
		{[]string{"log", "-n", "-2"}, []string{"log", "-n", "-2"}},
		{[]string{"log", "--date", "-1", "-1"}, []string{"log", "--date", "-1", "--max-count=1"}},
		{[]string{"log", "--", "-2"}, []string{"log", "--", "-2"}},
		// Commands that take no -N, and things that are not -N.
		{[]string{"show", "-2"}, []string{"show", "-2"}},
		{[]string{"log", "-"}, []string{"log", "-"}},
		{[]string{"log", "-2x"}, []string{"log", "-2x"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, expandCountShorthand(root, tt.args), "%q", tt.args)
	}
}

// 'log -N' and 'reflog -N' are -n N, as in git.
func TestRun_LogCountShorthand(t *testing.T) {
	f, out, errOut := testFactory(t, nil)
	db := filepath.Join(t.TempDir(), "t.db")
	exec := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return run(context.Background(), append([]string{"--db", db}, args...), f.IO, f.Getenv)
	}
	require.Equal(t, exitOK, exec("init"))
	for _, m := range []string{"one", "two", "three"} {
		require.Equal(t, exitOK, exec("commit", "-r", "user", "-m", m))
	}
	require.Equal(t, exitOK, exec("log", "--oneline", "-2"), errOut.String())
	assert.Equal(t, 2, strings.Count(out.String(), "\n"), out.String())
	assert.Contains(t, out.String(), "three")
	assert.NotContains(t, out.String(), "one")
	require.Equal(t, exitOK, exec("reflog", "-1"), errOut.String())
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), out.String())
	assert.Equal(t, exitUsage, exec("show", "-2"))
	assert.Contains(t, errOut.String(), "unknown flag -2")
}

// --no-color turns colour off on a terminal, as NO_COLOR and TERM=dumb do.
func TestRun_NoColor(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	logOn := func(env map[string]string, args ...string) string {
		f, _, _ := testFactory(t, env)
		var out bytes.Buffer
		f.IO.Out, f.IO.OutTTY = &out, true
		code := run(context.Background(), append([]string{"--db", db, "--no-pager"}, args...), f.IO, f.Getenv)
		require.Equal(t, exitOK, code)
		return out.String()
	}
	logOn(nil, "init")
	logOn(nil, "commit", "-r", "user", "-m", "hello")
	assert.Contains(t, logOn(nil, "log", "--oneline"), "\x1b[", "colour on a terminal")
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"--no-color":             {nil, []string{"--no-color", "log", "--oneline"}},
		"--no-color after":       {nil, []string{"log", "--oneline", "--no-color"}},
		"NO_COLOR":               {map[string]string{"NO_COLOR": "1"}, []string{"log", "--oneline"}},
		"TERM=dumb":              {map[string]string{"TERM": "dumb"}, []string{"log", "--oneline"}},
		"--no-color on standard": {nil, []string{"--no-color", "status"}},
	} {
		got := logOn(tc.env, tc.args...)
		assert.NotContains(t, got, "\x1b[", name)
		assert.NotEmpty(t, got, name)
	}
	f, _, _ := testFactory(t, nil)
	f.IO.ErrTTY = true
	assert.True(t, errColor(f))
	f.NoColor = true
	assert.False(t, errColor(f), "--no-color reaches standard error too")
}

// A bad value in an environment variable says which variable and how to
// fix or unset it; the command line is not at fault, so no "Run 'tract X
// --help'" follows.
func TestRun_EnvironmentErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{map[string]string{"TRACT_LOCK_TIMEOUT": "abc"}, []string{"log"}, []string{
			`tract: TRACT_LOCK_TIMEOUT="abc" is not a lock timeout: give a duration such as 10s`,
			"fix it (export TRACT_LOCK_TIMEOUT=10s) or unset it (unset TRACT_LOCK_TIMEOUT)",
			"--lock-timeout overrides it for one command."}},
		{map[string]string{"TRACT_MAX_MESSAGE_SIZE": "big"}, []string{"log"}, []string{
			`tract: TRACT_MAX_MESSAGE_SIZE="big" is not a size`, "(unset TRACT_MAX_MESSAGE_SIZE)", "--max-message-size overrides it"}},
		{map[string]string{"TRACT_MAX_INPUT": "big"}, []string{"import", "x.jsonl"}, []string{
			`tract: TRACT_MAX_INPUT="big" is not a size`, "export TRACT_MAX_INPUT=16GiB"}},
		{map[string]string{"TRACT_PROVIDER": "acme", "TRACT_MODEL": "m", "OPENAI_API_KEY": "k"}, []string{"chat", "hi"}, []string{
			`tract: unknown provider "acme" (from TRACT_PROVIDER)`, "(unset TRACT_PROVIDER)", "--provider overrides it"}},
		{map[string]string{"TRACT_BACKOFF": "soon", "TRACT_MODEL": "m", "OPENAI_API_KEY": "k"}, []string{"chat", "hi"}, []string{
			`tract: TRACT_BACKOFF="soon" is not a backoff`, "(unset TRACT_BACKOFF)."}},
		{map[string]string{"TRACT_TIMEOUT": "abc", "TRACT_MODEL": "m", "OPENAI_API_KEY": "k"}, []string{"chat", "hi"}, []string{
			`tract: TRACT_TIMEOUT: "abc" is not a timeout`, "(unset TRACT_TIMEOUT)", "--timeout overrides it"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "t.db")
			code, _, _ := runArgs(t, nil, "--db", db, "init")
			require.Equal(t, exitOK, code)
			code, _, errOut := runArgs(t, tt.env, append([]string{"--db", db}, tt.args...)...)
			assert.Equal(t, exitUsage, code, errOut)
			for _, w := range tt.want {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "--help' for usage")
		})
	}
}
