package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/tool"
)

func TestNewCmdChat_ToolFlags(t *testing.T) {
	got, err := parse(t, newCmdChat, "--tool", "lookup=./lookup --db 'my notes.db'", "--tool", "now=date -u",
		"--tool-schema", "lookup=lookup.json", "--max-tool-steps", "3", "hi")
	require.NoError(t, err)
	assert.Equal(t, 3, got.ToolFlags.MaxSteps)
	assert.Equal(t, []toolSpec{
		{name: "lookup", line: "./lookup --db 'my notes.db'", argv: []string{"./lookup", "--db", "my notes.db"}, schema: "lookup.json"},
		{name: "now", line: "date -u", argv: []string{"date", "-u"}},
	}, got.ToolFlags.specs)

	got, err = parse(t, newCmdChat, "hi")
	require.NoError(t, err)
	assert.Equal(t, 8, got.ToolFlags.MaxSteps, "the turn's default")
	assert.Empty(t, got.ToolFlags.specs)
}

func TestNewCmdChat_ToolFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tool", "lookup"}, `--tool "lookup": give NAME=CMD`},
		{[]string{"--tool", " =x"}, `no NAME before "="`},
		{[]string{"--tool", "a.b=x"}, `tool name "a.b": a tool's name is 1 to 64 letters`},
		{[]string{"--tool", "a=  "}, `--tool a: no command after "="`},
		{[]string{"--tool", "a=x", "--tool", "a=y"}, "--tool a is given twice"},
		{[]string{"--tool", "a=cat *.txt"}, `--tool a: CMD "cat *.txt": '*' at byte 4`},
		{[]string{"--tool", "a=echo 'x"}, `"'" at byte 5: is not closed`},
		{[]string{"--tool", "a=x", "--tool-schema", "b=s.json"}, "--tool-schema b: no --tool b=CMD names that tool"},
		{[]string{"--tool", "a=x", "--tool-schema", "a=s.json", "--tool-schema", "a=t.json"}, "--tool-schema a is given twice"},
		{[]string{"--tool", "a=x", "--tool-schema", "a="}, `--tool-schema a: no FILE after "="`},
		{[]string{"--tool", "a=x", "--max-tool-steps", "-1"}, "--max-tool-steps must be at least 1, got -1"},
		{[]string{"--approve-tools"}, "no --tool names one"},
		{[]string{"--tool", "a=x", "--approve-tools"}, "--approve-tools asks at the terminal"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parse(t, newCmdChat, append(tc.args, "hi")...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, exitUsage, exitCode(err))
		})
	}
}

func TestToolDef(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	dir, err := f.Getwd()
	require.NoError(t, err)
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("described.json", `{"description":" Looks a word up. ","type":"object","properties":{"w":{"type":"string"}}}`)
	write("plain.json", `{"type":"object"}`)
	write("array.json", `[]`)
	write("notobject.json", `{"type":["object","null"]}`)
	write("invalid.json", `{"type":"object","properties":{"a":{"minimum":"x"}}}`)

	def, err := toolDef(f, toolSpec{name: "t", line: "./t -v"})
	require.NoError(t, err)
	assert.Equal(t, "Runs the command: ./t -v", def.Description)
	assert.JSONEq(t, defaultToolSchema, string(def.Parameters))

	def, err = toolDef(f, toolSpec{name: "t", line: "./t", schema: "described.json"})
	require.NoError(t, err)
	assert.Equal(t, "Looks a word up.", def.Description, "the schema's description describes the tool")
	def, err = toolDef(f, toolSpec{name: "t", line: "./t", schema: "plain.json"})
	require.NoError(t, err)
	assert.Equal(t, "Runs the command: ./t", def.Description)
	assert.JSONEq(t, `{"type":"object"}`, string(def.Parameters))

	for file, want := range map[string]string{
		"array.json":     "--tool-schema t: array.json is not a JSON object",
		"notobject.json": `--tool-schema t: notobject.json does not say "type": "object"`,
		"invalid.json":   "--tool-schema t: ",
		"missing.json":   "--tool-schema t: ",
	} {
		_, err := toolDef(f, toolSpec{name: "t", line: "./t", schema: file})
		require.Error(t, err, file)
		assert.Contains(t, err.Error(), want, file)
		assert.Equal(t, exitUsage, exitCode(err), file)
	}
}

func TestToolCallLine(t *testing.T) {
	long := strings.Repeat("x", 400)
	cases := []struct {
		name, args, result string
		terminal           bool
		width              int
		want               string
	}{
		{"plain", `{"q":"x"}`, "42", false, 0, `tool: lookup({"q":"x"}) → 42`},
		{"no result", `{}`, "", false, 0, `tool: lookup({})`},
		{"line breaks", "{\n}", "a\nb\r\nc\n", false, 0, "tool: lookup({⏎}) → a⏎b⏎c"},
		{"piped: cut to 300", `{}`, long, false, 0, "tool: lookup({}) → " + strings.Repeat("x", 299) + "…"},
		{"terminal: cut to width", `{}`, long, true, 30, "tool: lookup({}) → xxxxxxxxxx…"},
		{"terminal: sanitised", `{}`, "\x1b[2Jboom", true, 80, "tool: lookup({}) → ^[[2Jboom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, toolCallLine("lookup", tc.args, tc.result, tc.terminal, tc.width))
		})
	}
}

func TestParseApproval(t *testing.T) {
	for in, want := range map[string]string{"y": "y", "Yes\n": "y", "": "n", "n": "n", " NO ": "n", "a": "a", "always": "a"} {
		got, ok := parseApproval(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := parseApproval("maybe")
	assert.False(t, ok)
}

func TestPromptApproval(t *testing.T) {
	var w strings.Builder
	ask := promptApproval(bufio.NewReader(strings.NewReader("maybe\na\n")), &w)
	got, err := ask(t.Context(), "lookup", "{\"q\":\"\x1b[2J\"}")
	require.NoError(t, err)
	assert.Equal(t, "a", got)
	assert.Equal(t, "run tool lookup({\"q\":\"^[[2J\"})? [y]es, [N]o, [a]lways: answer y, n or a (always run this tool)\n"+
		"run tool lookup({\"q\":\"^[[2J\"})? [y]es, [N]o, [a]lways: ", w.String())

	w.Reset()
	got, err = promptApproval(bufio.NewReader(strings.NewReader("")), &w)(t.Context(), "lookup", "{}")
	require.NoError(t, err)
	assert.Equal(t, "n", got, "the end of the input is no")
	assert.Contains(t, w.String(), "no (end of input)")
}

// Ctrl-C (a cancelled context) ends the question without an answer.
func TestPromptApproval_Cancelled(t *testing.T) {
	in, _ := io.Pipe() // nothing is ever typed
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := promptApproval(bufio.NewReader(in), io.Discard)(ctx, "lookup", "{}")
	assert.ErrorIs(t, err, context.Canceled)
}

// A run asks first when it asks: "n" runs nothing and is the declined
// error; "a" runs this call and every later one of the same tool without
// asking; each run is shown as a line.
func TestToolRun_Approval(t *testing.T) {
	var asked []string
	answers := []string{"n", "a"}
	var shown strings.Builder
	run := &toolRun{show: &shown, ask: func(_ context.Context, name, args string) (string, error) {
		asked = append(asked, name+args)
		a := answers[0]
		answers = answers[1:]
		return a, nil
	}}
	ran := 0
	run2 := run.wrap(tool.Tool{Def: llm.ToolDef{Name: "t"}, Run: func(context.Context, json.RawMessage) (string, error) {
		ran++
		return "ok", nil
	}})

	_, err := run2.Run(t.Context(), json.RawMessage(`{"n":1}`))
	assert.True(t, errors.Is(err, errDeclined))
	assert.Equal(t, declinedTool, err.Error())
	assert.Equal(t, 0, ran, "declined: not run")
	for range 2 {
		out, err := run2.Run(t.Context(), json.RawMessage(`{"n":2}`))
		require.NoError(t, err)
		assert.Equal(t, "ok", out)
	}
	assert.Equal(t, 2, ran)
	assert.Equal(t, []string{`t{"n":1}`, `t{"n":2}`}, asked, "always: asked no more")
	assert.Equal(t, "tool: t({\"n\":1}) → error: the user declined to run this tool\n"+
		"tool: t({\"n\":2}) → ok\ntool: t({\"n\":2}) → ok\n", shown.String())
}

// A tool's line (and its question) comes after what a streamed answer
// wrote: before ends that line first.
func TestToolRun_BeforeEachLine(t *testing.T) {
	var shown strings.Builder
	calls := 0
	run := &toolRun{show: &shown, before: func() { calls++; shown.WriteString("⏎") },
		ask: func(context.Context, string, string) (string, error) { return "y", nil }}
	tl := run.wrap(tool.Tool{Def: llm.ToolDef{Name: "t"}, Run: func(context.Context, json.RawMessage) (string, error) { return "ok", nil }})
	_, err := tl.Run(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "before the question, before the line")
	assert.Equal(t, "⏎⏎tool: t({}) → ok\n", shown.String())
}

func TestLineTracker(t *testing.T) {
	var b strings.Builder
	lt := &lineTracker{w: &b}
	lt.endLine()
	fmt.Fprint(lt, "Let me look.")
	lt.endLine()
	lt.endLine()
	fmt.Fprint(lt, "done\n")
	lt.endLine()
	assert.Equal(t, "Let me look.\ndone\n", b.String())
}
