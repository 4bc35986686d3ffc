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
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/cmdrun"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/tool"
)

// defaultToolSchema is the parameters' schema of a --tool given no
// --tool-schema: one string argument, "input".
const defaultToolSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`

// declinedTool is the error a tool call the user declined (--approve-tools)
// sends back to the model.
const declinedTool = "the user declined to run this tool"

// ToolFlags are chat's --tool, --tool-schema, --approve-tools and
// --max-tool-steps.
type ToolFlags struct {
	// Tools are the --tool NAME=CMD values, Schemas the --tool-schema
	// NAME=FILE values, as given.
	Tools, Schemas []string
	// Approve asks at the terminal before each run (--approve-tools).
	Approve bool
	// MaxSteps bounds the tool steps of an attempt (--max-tool-steps).
	MaxSteps int
	// specs are the tools, parsed by check.
	specs []toolSpec
}

// toolSpec is one --tool: its name, its command line split into argv, and
// its --tool-schema file ("" for the default schema).
type toolSpec struct {
	name, line string
	argv       []string
	schema     string
}

func addToolFlags(cmd *cobra.Command, tf *ToolFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&tf.Tools, "tool", nil, "let the model run CMD as tool NAME (repeatable)")
	setValueName(fl, "tool", "NAME=CMD")
	fl.StringArrayVar(&tf.Schemas, "tool-schema", nil, "JSON Schema of tool NAME's arguments")
	setValueName(fl, "tool-schema", "NAME=FILE")
	fl.BoolVar(&tf.Approve, "approve-tools", false, "ask before each tool runs (y/n/always)")
	fl.IntVar(&tf.MaxSteps, "max-tool-steps", tract.DefaultMaxToolSteps, "at most `N` tool steps per attempt")
}

// check parses the tool flags: each --tool is NAME=CMD with a name the
// providers accept, given once, and a command line that needs no shell;
// each --tool-schema names a --tool. --approve-tools needs a terminal to
// ask on (standard input and standard error).
func (tf *ToolFlags) check(f *Factory) error {
	tf.specs = nil
	byName := map[string]int{} // index in specs
	for _, v := range tf.Tools {
		name, line, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return usageErrorf("--tool %q: give NAME=CMD, as in --tool lookup='./lookup --db notes.db'", v)
		case name == "":
			return usageErrorf("--tool %q: no NAME before \"=\": give NAME=CMD", v)
		case hasKey(byName, name):
			return usageErrorf("--tool %s is given twice: give each tool one name", name)
		}
		if err := tool.CheckName(name); err != nil {
			return usageErrorf("--tool %q: %v", v, err)
		}
		argv, err := cmdrun.Split(line)
		switch {
		case errors.Is(err, cmdrun.ErrEmpty):
			return usageErrorf("--tool %s: no command after \"=\": give NAME=CMD", name)
		case err != nil:
			return usageErrorf("--tool %s: CMD %q: %v; tract runs CMD without a shell: for one, write %s=\"sh -c '…'\"", name, line, err, name)
		}
		byName[name] = len(tf.specs)
		tf.specs = append(tf.specs, toolSpec{name: name, line: strings.TrimSpace(line), argv: argv})
	}
	for _, v := range tf.Schemas {
		name, path, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return usageErrorf("--tool-schema %q: give NAME=FILE, the JSON Schema of the arguments of --tool NAME", v)
		case strings.TrimSpace(path) == "":
			return usageErrorf("--tool-schema %s: no FILE after \"=\": give NAME=FILE", name)
		}
		i, ok := byName[name]
		switch {
		case !ok:
			return usageErrorf("--tool-schema %s: no --tool %s=CMD names that tool", name, name)
		case tf.specs[i].schema != "":
			return usageErrorf("--tool-schema %s is given twice: give each tool one schema", name)
		}
		tf.specs[i].schema = strings.TrimSpace(path)
	}
	switch {
	case tf.MaxSteps < 1:
		return usageErrorf("--max-tool-steps must be at least 1, got %d", tf.MaxSteps)
	case tf.Approve && len(tf.specs) == 0:
		return usageErrorf("--approve-tools asks before a tool runs, but no --tool names one")
	case tf.Approve && !(f.IO.InTTY && f.IO.ErrTTY):
		return usageErrorf("--approve-tools asks at the terminal, but standard input or standard error is not one: " +
			"leave it out to run the tools you name without asking")
	}
	return nil
}

// toolDef reads spec's schema file (or takes the default) into the
// definition the model is sent: the schema's own "description", when it
// has one, describes the tool; otherwise the description names the
// command.
func toolDef(f *Factory, spec toolSpec) (llm.ToolDef, error) {
	def := llm.ToolDef{Name: spec.name, Description: "Runs the command: " + spec.line, Parameters: json.RawMessage(defaultToolSchema)}
	if spec.schema == "" {
		return def, nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return def, err
	}
	path := spec.schema
	if !filepath.IsAbs(path) {
		path = filepath.Join(wd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return def, usageErrorf("--tool-schema %s: %v", spec.name, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return def, usageErrorf("--tool-schema %s: %s is not a JSON object: give the JSON Schema of the arguments, as in %s", spec.name, spec.schema, defaultToolSchema)
	}
	var typ string
	if t, ok := obj["type"]; !ok || json.Unmarshal(t, &typ) != nil || typ != "object" {
		return def, usageErrorf(`--tool-schema %s: %s does not say "type": "object": a tool's arguments are a JSON object, as in %s`, spec.name, spec.schema, defaultToolSchema)
	}
	// Compiled as --validate schema:FILE compiles it, so that a schema the
	// turn could not check arguments against is refused now.
	if _, err := retry.Schema(path); err != nil {
		return def, usageErrorf("--tool-schema %s: %v", spec.name, err)
	}
	var desc string
	if d, ok := obj["description"]; ok && json.Unmarshal(d, &desc) == nil && strings.TrimSpace(desc) != "" {
		def.Description = strings.TrimSpace(desc)
	}
	def.Parameters = json.RawMessage(data)
	return def, nil
}

// toolRun is what a chat's tools share: where each run is shown, and the
// approvals asked for (--approve-tools).
type toolRun struct {
	mu sync.Mutex // guards the fields below, and writes to show and ask's writer
	// show writes the line of each run ("tool: NAME(ARGS) → RESULT").
	show io.Writer
	// terminal says show is a terminal: results are cut to width, and
	// sanitised.
	terminal bool
	width    func() int
	// ask asks whether to run a call (nil: run each without asking); it
	// returns "y", "n" or "a".
	ask func(ctx context.Context, name, args string) (string, error)
	// always holds the tools the user answered "always" for.
	always map[string]bool
	// before, when set, is called before a line is shown or a question
	// asked: a streamed answer ends its line first.
	before func()
}

// buildTools makes the tools of tf, each running its command in the
// working directory for at most timeout, through run.
func buildTools(f *Factory, tf *ToolFlags, timeout time.Duration, run *toolRun) ([]tool.Tool, error) {
	if len(tf.specs) == 0 {
		return nil, nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	tools := make([]tool.Tool, 0, len(tf.specs))
	for _, spec := range tf.specs {
		def, err := toolDef(f, spec)
		if err != nil {
			return nil, err
		}
		t, err := tool.Command(def, spec.argv, tool.Dir(wd), tool.Timeout(timeout))
		if err != nil {
			return nil, usageErrorf("--tool %s: %v", spec.name, unwrapToolName(err, spec.name))
		}
		tools = append(tools, run.wrap(t))
	}
	return tools, nil
}

// unwrapToolName drops the "tool NAME: " that tool.Command's errors start
// with: the flag already names it.
func unwrapToolName(err error, name string) string {
	msg := err.Error()
	return strings.TrimPrefix(msg, "tool "+name+": ")
}

// wrap runs t through run: asking first when run asks, and showing the
// call and its result after.
func (r *toolRun) wrap(t tool.Tool) tool.Tool {
	inner := t.Run
	name := t.Def.Name
	t.Run = func(ctx context.Context, args json.RawMessage) (string, error) {
		if err := r.approve(ctx, name, string(args)); err != nil {
			r.line(name, string(args), "", err)
			return "", err
		}
		out, err := inner(ctx, args)
		if ctx.Err() == nil {
			r.line(name, string(args), out, err)
		}
		return out, err
	}
	return t
}

// errDeclined is the error of a call the user declined.
var errDeclined = errors.New(declinedTool)

// approve asks whether to run a call, unless run does not ask or the user
// answered "always" for the tool; a "no" is errDeclined.
func (r *toolRun) approve(ctx context.Context, name, args string) error {
	if r.ask == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.always[name] {
		return nil
	}
	if r.before != nil {
		r.before()
	}
	answer, err := r.ask(ctx, name, args)
	if err != nil {
		return err
	}
	switch answer {
	case "a":
		if r.always == nil {
			r.always = map[string]bool{}
		}
		r.always[name] = true
	case "n":
		return errDeclined
	}
	return nil
}

// line shows one run: "tool: NAME(ARGS) → RESULT", or "→ error: …".
func (r *toolRun) line(name, args, out string, err error) {
	if r.show == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.before != nil {
		r.before()
	}
	result := out
	if err != nil {
		result = "error: " + err.Error()
	}
	fmt.Fprintln(r.show, toolCallLine(name, args, result, r.terminal, r.widthNow()))
}

func (r *toolRun) widthNow() int {
	if r.width == nil {
		return 0
	}
	return r.width()
}

// promptApproval asks on w whether to run each call and reads the answer
// from in: y, n (or Enter), or a for always; the end of the input is no.
// A cancelled ctx (Ctrl-C) ends the wait at once: the chat is over, and
// the read left waiting is never used.
func promptApproval(in *bufio.Reader, w io.Writer) func(ctx context.Context, name, args string) (string, error) {
	type read struct {
		line string
		err  error
	}
	return func(ctx context.Context, name, args string) (string, error) {
		for {
			fmt.Fprintf(w, "run tool %s(%s)? [y]es, [N]o, [a]lways: ", name, screenText(args))
			got := make(chan read, 1)
			go func() {
				line, err := in.ReadString('\n')
				got <- read{line, err}
			}()
			var line string
			var err error
			select {
			case <-ctx.Done():
				fmt.Fprintln(w)
				return "", ctx.Err()
			case r := <-got:
				line, err = r.line, r.err
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return "", fmt.Errorf("read the answer: %w", err)
			}
			if strings.TrimSpace(line) == "" && errors.Is(err, io.EOF) {
				fmt.Fprintln(w, "no (end of input)")
				return "n", nil
			}
			if a, ok := parseApproval(line); ok {
				return a, nil
			}
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(w, "no (end of input)")
				return "n", nil
			}
			fmt.Fprintln(w, "answer y, n or a (always run this tool)")
		}
	}
}

// parseApproval reads an answer to the approval prompt: y, yes is "y";
// n, no or nothing is "n"; a, always is "a".
func parseApproval(line string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return "y", true
	case "", "n", "no":
		return "n", true
	case "a", "always":
		return "a", true
	}
	return "", false
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// lineTracker writes to w and remembers whether what it wrote last left
// a line unfinished (a streamed answer's text), for endLine to end it.
type lineTracker struct {
	w   io.Writer
	mid atomic.Bool
}

func (t *lineTracker) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.mid.Store(p[n-1] != '\n')
	}
	return n, err
}

// endLine ends the line the last write left unfinished, if it did.
func (t *lineTracker) endLine() {
	if t.mid.Load() {
		fmt.Fprintln(t)
	}
}

// Flush flushes the writer underneath.
func (t *lineTracker) Flush() error {
	flush(t.w)
	return nil
}
