package main

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
)

// testFactory returns a factory with fake streams and an environment map.
func testFactory(t *testing.T, env map[string]string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	io := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	f := newFactory(io, func(k string) string { return env[k] })
	dir := t.TempDir()
	f.Getwd = func() (string, error) { return dir, nil }
	clock := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	f.Clock = func() time.Time { clock = clock.Add(time.Second); return clock }
	return f, out, errOut
}

// parse runs cmd's flag and argument parsing with runF capturing the options.
func parse[O any](t *testing.T, newCmd func(*Factory, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	f, _, _ := testFactory(t, nil)
	var got *O
	cmd := newCmd(f, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	err := cmd.Execute()
	return got, err
}

// checkParse parses args with newCmd and checks the result: with wantErr
// set, a usage error that contains it; else the options want (whose
// Factory, which want leaves unset, is not compared).
func checkParse[O any](t *testing.T, newCmd func(*Factory, func(*O) error) *cobra.Command, args []string, want O, wantErr string) {
	t.Helper()
	got, err := parse(t, newCmd, args...)
	if wantErr != "" {
		require.ErrorContains(t, err, wantErr)
		assert.Equal(t, exitUsage, exitCode(err))
		return
	}
	require.NoError(t, err)
	reflect.ValueOf(got).Elem().FieldByName("Factory").SetZero()
	assert.Equal(t, want, *got)
}

func TestNewCmdLog_Flags(t *testing.T) {
	cases := []struct {
		args    []string
		want    LogOptions
		wantErr string
	}{
		{args: nil, want: LogOptions{Date: dateISO}},
		{args: []string{"-n", "3", "--oneline"}, want: LogOptions{Limit: 3, Oneline: true, Date: dateISO}},
		{args: []string{"--all", "--graph", "--json"}, want: LogOptions{All: true, Graph: true, JSON: true, Date: dateISO}},
		{args: []string{"main~2"}, want: LogOptions{Rev: "main~2", Date: dateISO}},
		{args: []string{"--format", "%h %s", "--date", "relative"}, want: LogOptions{Format: "%h %s", Date: dateRelative}},
		{args: []string{"--date", "unix"}, want: LogOptions{Date: dateUnix}},
		{args: []string{"--date", "short"}, wantErr: `--date "short": give iso, relative or unix`},
		{args: []string{"--format", "%h %q"}, wantErr: `unknown placeholder "%q" at byte 3`},
		{args: []string{"--format", "%"}, wantErr: `unknown placeholder "%"`},
		{args: []string{"--format", ""}, wantErr: "--format needs a template"},
		{args: []string{"--format", "%h", "--json"}, wantErr: "--format and --json"},
		{args: []string{"--format", "%h", "--oneline"}, wantErr: "--format and --oneline"},
		{args: []string{"--all", "main"}, wantErr: "--all shows every commit"},
		{args: []string{"-n", "-1"}, wantErr: "-n must be 0"},
		{args: []string{"a", "b"}, wantErr: "at most one revision"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdLog, tc.args, tc.want, tc.wantErr)
		})
	}
}

func TestNewCmdGraph_Flags(t *testing.T) {
	cases := []struct {
		args    []string
		want    GraphOptions
		wantErr string
	}{
		{args: nil, want: GraphOptions{Format: "dot"}},
		{args: []string{"--all", "--format", "mermaid", "-o", "g.md"}, want: GraphOptions{All: true, Format: "mermaid", Output: "g.md"}},
		{args: []string{"side"}, want: GraphOptions{Rev: "side", Format: "dot"}},
		{args: []string{"--format", "png"}, wantErr: `--format "png": give dot or mermaid`},
		{args: []string{"--all", "side"}, wantErr: "--all draws every commit"},
		{args: []string{"-o", "g.md"}, wantErr: "a Markdown file takes --format mermaid"},
		{args: []string{""}, wantErr: "empty revision"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdGraph, tc.args, tc.want, tc.wantErr)
		})
	}
}

func TestNewCmdReset_HardNeedsForce(t *testing.T) {
	_, err := parse(t, newCmdReset, "--hard", "HEAD~1")
	require.Error(t, err)
	assert.Equal(t, exitUsage, exitCode(err))
	assert.Contains(t, err.Error(), "--force")

	got, err := parse(t, newCmdReset, "--hard", "--force", "HEAD~1")
	require.NoError(t, err)
	assert.True(t, got.Hard)
	assert.Equal(t, "HEAD~1", got.Rev)

	_, err = parse(t, newCmdReset, "--soft", "--hard", "-f", "HEAD")
	assert.Error(t, err)
	_, err = parse(t, newCmdReset)
	assert.Error(t, err)
}

func TestNewCmdChat_Flags(t *testing.T) {
	got, err := parse(t, newCmdChat, "--validate", "json", "-V", "maxlen:10", "--max-attempts", "5",
		"--purify=false", "--provenance", "--system", "be terse", "--model", "m", "--temperature", "0.2", "--json", "hello")
	require.NoError(t, err)
	assert.Equal(t, []string{"json", "maxlen:10"}, got.Validate)
	assert.Equal(t, 5, got.MaxAttempts)
	assert.False(t, got.Purify)
	assert.True(t, got.Provenance)
	assert.Equal(t, "hello", got.Message)
	require.NotNil(t, got.Temperature)
	assert.Equal(t, 0.2, *got.Temperature)

	got, err = parse(t, newCmdChat, "-")
	require.NoError(t, err)
	assert.True(t, got.FromStdin)
	assert.True(t, got.Purify, "purify is on by default")
	assert.False(t, got.TaskSet)

	got, err = parse(t, newCmdChat, "--task", "03-01:task-3", "x")
	require.NoError(t, err)
	assert.Equal(t, "03-01:task-3", got.Task)
	assert.True(t, got.TaskSet)
	got, err = parse(t, newCmdChat, "--task", "", "x")
	require.NoError(t, err)
	assert.True(t, got.TaskSet, "an empty --task is passed on, for the library to refuse")
	assert.Nil(t, got.Temperature)

	_, err = parse(t, newCmdChat, "--max-attempts", "0", "x")
	assert.Equal(t, exitUsage, exitCode(err))
	for _, bad := range []string{"NaN", "Inf", "-1"} {
		_, err = parse(t, newCmdChat, "--temperature", bad, "x")
		assert.Equal(t, exitUsage, exitCode(err), "--temperature %s", bad)
	}
	_, err = parse(t, newCmdChat, "two", "words")
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestNewCmdCompress_Flags(t *testing.T) {
	got, err := parse(t, newCmdCompress, "--from", "HEAD~9", "--keep-last", "4", "--target-tokens", "200",
		"--content", "a", "--content", "b", "--validate", "maxlen:2000", "--dry-run")
	require.NoError(t, err)
	assert.Equal(t, "HEAD~9", got.From)
	assert.Equal(t, 4, got.KeepLast)
	assert.Equal(t, []string{"a", "b"}, got.Content)
	assert.True(t, got.DryRun)

	_, err = parse(t, newCmdCompress, "--to", "HEAD", "--keep-last", "2")
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"now": 0, "0": 0, "7d": 7 * 24 * time.Hour, "12h": 12 * time.Hour} {
		got, err := parseAge(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"soon", "-1d", "-5m", "d"} {
		_, err := parseAge(in)
		assert.Error(t, err, in)
	}
	got, err := parseAge("106751d")
	require.NoError(t, err)
	assert.Positive(t, got)
	// One day more would overflow into a negative age, which expires every
	// reflog entry instead of none.
	for _, in := range []string{"106752d", "99999999999999999999d"} {
		_, err := parseAge(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "at most 106751d", in)
	}
}

// TestRun_CommitLogShow drives commands through run() with fake streams.
func TestRun_CommitLogShow(t *testing.T) {
	f, out, errOut := testFactory(t, nil)
	db := filepath.Join(t.TempDir(), "t.db")
	exec := func(stdin string, args ...string) int {
		out.Reset()
		errOut.Reset()
		f.IO.In = strings.NewReader(stdin)
		root := newRootCmd(f)
		root.SetArgs(append([]string{"--db", db}, args...))
		cmd, err := root.ExecuteContextC(context.Background())
		if err != nil {
			return printError(f, cmd, err)
		}
		return exitOK
	}
	require.Equal(t, exitOK, exec("", "init"))
	assert.Contains(t, errOut.String(), "Initialized empty tract repository")
	require.Equal(t, exitOK, exec("", "commit", "--role", "user", "-m", "hello"))
	assert.Regexp(t, `^\[main [0-9a-f]{8}\] user: hello\n$`, out.String())
	require.Equal(t, exitOK, exec("from stdin\n", "commit", "--role", "assistant"))
	require.Equal(t, exitOK, exec("", "log", "--oneline"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "(HEAD -> main) assistant: from stdin")
	assert.NotContains(t, out.String(), "\x1b[", "no colour off a terminal")

	require.Equal(t, exitOK, exec("", "show", "--json", "HEAD~1"))
	assert.Contains(t, out.String(), `"text": "hello"`)

	assert.Equal(t, exitNotFound, exec("", "show", "nope"))
	assert.Contains(t, errOut.String(), `unknown revision "nope"`)
	assert.Equal(t, exitUsage, exec("", "commit", "--role", "narrator", "-m", "x"))
	assert.Equal(t, exitUsage, exec("", "log", "--bogus"))
	assert.Contains(t, errOut.String(), "Run 'tract log --help' for usage.")
	assert.Equal(t, exitUsage, exec("", "commit", "--role", "user", "--meta", "[1]", "-m", "x"))
	assert.Contains(t, errOut.String(), "metadata must be a JSON object")
}

func TestRenderGraphAll_SideChains(t *testing.T) {
	f, out, _ := testFactory(t, nil)
	db := filepath.Join(t.TempDir(), "t.db")
	for _, args := range [][]string{
		{"init"},
		{"commit", "-r", "user", "-m", "q"},
		{"commit", "-r", "assistant", "-m", "bad"},
		{"commit", "-r", "user", "-k", "steering", "-m", "fix it"},
		{"reset", "HEAD~2"},
		{"commit", "-r", "assistant", "-m", "good"},
	} {
		root := newRootCmd(f)
		root.SetArgs(append([]string{"--db", db}, args...))
		require.NoError(t, root.Execute(), args)
	}
	out.Reset()
	root := newRootCmd(f)
	root.SetArgs([]string{"--db", db, "log", "--all"})
	require.NoError(t, root.Execute())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5)
	assert.Regexp(t, `^\* [0-9a-f]{8} \(HEAD -> main\) assistant: good$`, lines[0])
	assert.Regexp(t, `^\| \* [0-9a-f]{8} \(ORIG_HEAD\) steering: fix it$`, lines[1])
	assert.Regexp(t, `^\| \* [0-9a-f]{8} assistant: bad$`, lines[2])
	assert.Equal(t, "|/  orphaned by reset --soft: moving to HEAD~2 (2 commits)", lines[3])
	assert.Regexp(t, `^\* [0-9a-f]{8} user: q$`, lines[4])
}

// writes records each Write call, as a terminal would receive them.
type writes struct{ calls []string }

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

// Standard output is buffered, but an answer streamed to a terminal reaches
// it piece by piece, as the model sends it.
func TestRun_StreamedAnswerIsFlushedAsItArrives(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("one two three four five"))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "TRACT_MODEL": "m"}
	db := filepath.Join(t.TempDir(), "t.db")
	quiet := func() *IOStreams {
		return &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "init"}, quiet(), func(k string) string { return env[k] }))

	term := &writes{}
	io := &IOStreams{In: strings.NewReader(""), Out: term, ErrOut: &bytes.Buffer{}, OutTTY: true}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "chat", "count to five"}, io, func(k string) string { return env[k] }))
	assert.Equal(t, "one two three four five\n", strings.Join(term.calls, ""))
	assert.Greater(t, len(term.calls), 2, "the answer arrived in one piece: %q", term.calls)
	require.True(t, srv.Requests()[0].Stream)
}

func TestPreview(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghi…"},
		{"ééééé", 4, "ééé…"},
		{"éééé", 4, "éééé"},
		{"first\nsecond", 72, "first…"},
		{"a\r\nb", 72, "a…"},
		{"no limit at all", 0, "no limit at all"},
		{"", 5, ""},
		{"a\tb", 10, "a b"},
		{"\x1b]0;title\a\x1b[31mred", 72, "^[]0;title^G^[[31mred"},
		{"back\bspace\x00\x7f", 72, "back^Hspace^@^?"},
		{"a\u0085b\u00a0c\u009b2J", 72, "a^[Eb\u00a0c^[[2J"},
	} {
		assert.Equal(t, tc.want, preview(tc.in, tc.width), "preview(%q, %d)", tc.in, tc.width)
	}
}

// On a terminal, show and log print a stored text with the control
// characters that would drive the terminal shown in caret notation (see
// screenText); to a pipe or a file, as stored.
func TestShow_TextOnATerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(db)
	require.NoError(t, err)
	_, err = tr.User(context.Background(), "title\x1b]0;pwned\a and\tred \x1b[31mtext\nline two")
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	for _, tty := range []bool{true, false} {
		for _, cmd := range [][]string{{"show"}, {"log"}, {"log", "--format", "%h %B"}} {
			out := &bytes.Buffer{}
			io := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &bytes.Buffer{}, OutTTY: tty}
			args := append([]string{"--db", db, "--no-pager"}, cmd...)
			noColor := func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }
			require.Equal(t, exitOK, run(context.Background(), args, io, noColor))
			if tty {
				assert.Contains(t, out.String(), "title^[]0;pwned^G and\tred ^[[31mtext\n", cmd)
				assert.NotContains(t, out.String(), "\x1b", cmd)
			} else {
				assert.Contains(t, out.String(), "title\x1b]0;pwned\a and\tred \x1b[31mtext", cmd)
			}
		}
	}
	// A reflog line is one line wherever it goes: its message (the
	// text's first line) with its control characters shown.
	out := &bytes.Buffer{}
	io := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &bytes.Buffer{}}
	require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "reflog"}, io, func(string) string { return "" }))
	assert.Contains(t, out.String(), "title^[]0;pwned^G and red ^[[31mtext")
	assert.NotContains(t, out.String(), "\x1b")
}

func TestNewCmdReflog_Flags(t *testing.T) {
	cases := []struct {
		args    []string
		want    ReflogOptions
		wantErr string
	}{
		{args: nil, want: ReflogOptions{}},
		{args: []string{"main", "-n", "3", "--json"}, want: ReflogOptions{Ref: "main", Limit: 3, JSON: true}},
		{args: []string{"--date", "unix"}, want: ReflogOptions{Date: dateUnix}},
		{args: []string{"-n", "-2"}, wantErr: "-n must be 0"},
		{args: []string{"a", "b"}, wantErr: "at most one ref"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdReflog, tc.args, tc.want, tc.wantErr)
		})
	}
}
