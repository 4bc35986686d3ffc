package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolServer is a loopback OpenAI chat-completions server for the tool
// tests: it answers each request with the next of its replies (a text,
// or tool calls) and keeps the requests, as JSON, for the test to read.
type toolServer struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex // guards replies and requests
	// replies are answered in order.
	replies []toolReply
	// requests are the bodies received, decoded.
	requests []toolRequest
}

// toolReply is an answer: Content, Calls (each NAME and its arguments),
// or both.
type toolReply struct {
	Content string
	Calls   []toolCall
}

type toolCall struct {
	ID, Name, Args string
}

// toolRequest is what the tests read of a request.
type toolRequest struct {
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func newToolServer(t *testing.T, replies ...toolReply) *toolServer {
	ts := &toolServer{t: t, replies: replies}
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(func() {
		ts.srv.Close()
		ts.mu.Lock()
		defer ts.mu.Unlock()
		assert.Empty(t, ts.replies, "every scripted reply is used")
	})
	return ts
}

func (ts *toolServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req toolRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ts.mu.Lock()
	ts.requests = append(ts.requests, req)
	if len(ts.replies) == 0 {
		ts.mu.Unlock()
		http.Error(w, `{"error":{"message":"no scripted reply left"}}`, http.StatusInternalServerError)
		return
	}
	reply := ts.replies[0]
	ts.replies = ts.replies[1:]
	ts.mu.Unlock()

	msg := map[string]any{"role": "assistant", "content": reply.Content}
	finish := "stop"
	if len(reply.Calls) > 0 {
		calls := make([]map[string]any, len(reply.Calls))
		for i, c := range reply.Calls {
			calls[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}}
		}
		msg["tool_calls"], finish = calls, "tool_calls"
		if reply.Content == "" {
			msg["content"] = nil
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-tools", "object": "chat.completion", "model": testModel,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (ts *toolServer) reqs() []toolRequest {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]toolRequest(nil), ts.requests...)
}

// env points the sandbox's model settings at the server.
func (ts *toolServer) env(s *sandbox) *sandbox {
	return s.withEnv("OPENAI_BASE_URL", ts.srv.URL+"/v1", "OPENAI_API_KEY", "sk-test", "TRACT_MODEL", testModel, "TRACT_PROVIDER", "openai")
}

// writeScript writes an executable shell script into the sandbox.
func writeScript(t *testing.T, s *sandbox, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, name), []byte("#!/bin/sh\n"+body), 0o755))
}

// lookupScript saves its standard input (the call's arguments) to
// args.json and prints 42.
const lookupScript = "cat > args.json\necho 42\n"

// The model calls the tool, gets its output and answers: the branch holds
// user → call → result → answer, the second request sends the call and
// its result back in OpenAI's shapes, and log, show, compile and export
// show the steps.
func TestChat_ToolCalledAndAnswered(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
		toolReply{Content: "x is 42."},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)

	r := s.tract("chat", "--tool", "lookup=./lookup.sh", "What is x?")
	requireExit(t, r, exitOK)
	assert.Equal(t, "x is 42.\n", r.Stdout)
	assert.Contains(t, r.Stderr, `tool: lookup({"input":"x"}) → 42`)
	args, err := os.ReadFile(filepath.Join(s.dir, "args.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"input":"x"}`, string(args), "the call's arguments on standard input")

	reqs := ts.reqs()
	require.Len(t, reqs, 2)
	require.Len(t, reqs[0].Tools, 1)
	def := reqs[0].Tools[0]
	assert.Equal(t, "function", def.Type)
	assert.Equal(t, "lookup", def.Function.Name)
	assert.Equal(t, "Runs the command: ./lookup.sh", def.Function.Description)
	assert.JSONEq(t, `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`, string(def.Function.Parameters))
	second := reqs[1].Messages
	require.Len(t, second, 3, "user, the call, its result")
	assert.Equal(t, "tool", second[2]["role"])
	assert.Equal(t, "call_1", second[2]["tool_call_id"])
	assert.Equal(t, "42", second[2]["content"])

	// The branch: user → call → result → answer.
	log := s.ok("log", "--oneline")
	assert.Regexp(t, `^[0-9a-f]{8} \(HEAD -> main\) assistant: x is 42\.\n`+
		`[0-9a-f]{8} tool: lookup → 42\n`+
		`[0-9a-f]{8} assistant: → lookup\({"input":"x"}\)\n`+
		`[0-9a-f]{8} user: What is x\?\n$`, log.Stdout)
	show := s.ok("show", "HEAD~1")
	assert.Contains(t, show.Stdout, "Role:   tool\nTool:   lookup (call call_1)\n")
	assert.Contains(t, show.Stdout, "\n    42\n")
	assert.Contains(t, s.ok("show", "HEAD~2").Stdout, "→ tool call lookup({\"input\":\"x\"})")

	compiled := s.ok("compile")
	assert.Equal(t, "[user]\nWhat is x?\n\n[assistant]\n→ tool call lookup({\"input\":\"x\"})\n\n[tool: lookup]\n42\n\n[assistant]\nx is 42.\n", compiled.Stdout)
	// compile --json gives OpenAI's shapes exactly, as they were sent.
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s.ok("compile", "--json").Stdout), &msgs))
	require.Len(t, msgs, 4)
	assert.JSONEq(t, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"input\":\"x\"}"}}]}`, string(msgs[1]))
	assert.JSONEq(t, `{"role":"tool","content":"42","tool_call_id":"call_1"}`, string(msgs[2]))
	// export keeps them too.
	exported := s.ok("export")
	assert.Contains(t, exported.Stdout, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"input\":\"x\"}"}}]},{"role":"tool","content":"42","tool_call_id":"call_1"}`)
	s.fsckOK()
}

// A command that fails sends its status and standard error to the model
// as the call's result; the model answers anyway and the chat succeeds.
func TestChat_ToolFails(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"y"}`}}},
		toolReply{Content: "I could not look y up."},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", "echo 'no such key: y' >&2\nexit 3\n")

	r := s.tract("chat", "--tool", "lookup=./lookup.sh", "What is y?")
	requireExit(t, r, exitOK)
	assert.Equal(t, "I could not look y up.\n", r.Stdout)
	assert.Contains(t, r.Stderr, `tool: lookup({"input":"y"}) → error: command lookup.sh exited with status 3: no such key: y`)
	reqs := ts.reqs()
	require.Len(t, reqs, 2)
	result := reqs[1].Messages[2]
	assert.Equal(t, "tool", result["role"])
	assert.Contains(t, result["content"], "command lookup.sh exited with status 3: no such key: y")
}

// Tool steps are shown when the chat runs in the interactive chat too,
// as lines of the transcript, and /log names a result's tool.
func TestChat_ToolInTheREPLTranscript(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
		toolReply{Content: "x is 42."},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)
	r := s.tractStdin("What is x?\n/log\n", "chat", "-i", "--tool", "lookup=./lookup.sh")
	requireExit(t, r, exitOK)
	assert.Contains(t, r.Stdout, "tool: lookup({\"input\":\"x\"}) → 42\n")
	assert.Contains(t, r.Stdout, "x is 42.")
	assert.Regexp(t, `[0-9a-f]{8} tool +message +lookup → 42\n`, r.Stdout, "/log names the tool of a result")
}

// --tool-schema gives the model the schema of the file, and its
// description; chat --json lists the tool steps.
func TestChat_ToolSchema(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"word":"purify"}`}}},
		toolReply{Content: "done"},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)
	schema := `{"description":"Looks a word up.","type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "lookup.json"), []byte(schema), 0o644))

	r := s.tract("chat", "--json", "--tool", "lookup=./lookup.sh", "--tool-schema", "lookup=lookup.json", "Define purify")
	requireExit(t, r, exitOK)
	// --json gives the tool steps the answer rests on.
	var rec struct {
		Answer    string `json:"answer"`
		ToolSteps []struct {
			Step    int      `json:"step"`
			Commit  string   `json:"commit"`
			Results []string `json:"results"`
			Calls   []struct {
				ID, Name, Arguments, Result string
			} `json:"calls"`
		} `json:"tool_steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rec), r.Stdout)
	assert.Equal(t, "done", rec.Answer)
	require.Len(t, rec.ToolSteps, 1)
	assert.Equal(t, 1, rec.ToolSteps[0].Step)
	assert.Len(t, rec.ToolSteps[0].Results, 1)
	require.Len(t, rec.ToolSteps[0].Calls, 1)
	call := rec.ToolSteps[0].Calls[0]
	assert.Equal(t, []string{"call_1", "lookup", `{"word":"purify"}`, "42"}, []string{call.ID, call.Name, call.Arguments, call.Result})
	reqs := ts.reqs()
	require.NotEmpty(t, reqs)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "Looks a word up.", reqs[0].Tools[0].Function.Description)
	assert.JSONEq(t, schema, string(reqs[0].Tools[0].Function.Parameters))
	args, err := os.ReadFile(filepath.Join(s.dir, "args.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"word":"purify"}`, string(args))
}

// Bad tool flags are refused in tract's words before anything is sent or
// written.
func TestChat_ToolFlagErrors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	writeScript(t, s, "lookup.sh", lookupScript)
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "array.json"), []byte(`[1]`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "string.json"), []byte(`{"type":"string"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "bad.json"), []byte(`{"type":"object","properties":{"a":{"type":12}}}`), 0o644))
	s = s.withEnv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1", "OPENAI_API_KEY", "sk-test", "TRACT_MODEL", testModel)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--tool", "lookup"}, `--tool "lookup": give NAME=CMD, as in --tool lookup='./lookup --db notes.db'`},
		{[]string{"--tool", "=./lookup.sh"}, `--tool "=./lookup.sh": no NAME before "=": give NAME=CMD`},
		{[]string{"--tool", "look up=./lookup.sh"}, `a tool's name is 1 to 64 letters, digits, "_" and "-"`},
		{[]string{"--tool", "lookup="}, `--tool lookup: no command after "=": give NAME=CMD`},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool", "lookup=./lookup.sh"}, "--tool lookup is given twice"},
		{[]string{"--tool", "lookup=./lookup.sh | tr a b"}, `--tool lookup: CMD "./lookup.sh | tr a b": '|' at byte 12: means something only to a shell, and the command runs without one (quote it to pass it on); tract runs CMD without a shell: for one, write lookup="sh -c '…'"`},
		{[]string{"--tool", "lookup=./missing.sh"}, "--tool lookup: command not found"},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "other=array.json"}, "--tool-schema other: no --tool other=CMD names that tool"},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "lookup"}, `--tool-schema "lookup": give NAME=FILE`},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "lookup=array.json"}, "--tool-schema lookup: array.json is not a JSON object"},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "lookup=string.json"}, `--tool-schema lookup: string.json does not say "type": "object"`},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "lookup=bad.json"}, "--tool-schema lookup: "},
		{[]string{"--tool", "lookup=./lookup.sh", "--tool-schema", "lookup=none.json"}, "--tool-schema lookup: "},
		{[]string{"--tool", "lookup=./lookup.sh", "--max-tool-steps", "0"}, "--max-tool-steps must be at least 1, got 0"},
		{[]string{"--tool", "lookup=./lookup.sh", "--approve-tools"}, "--approve-tools asks at the terminal, but standard input or standard error is not one"},
		{[]string{"--approve-tools"}, "--approve-tools asks before a tool runs, but no --tool names one"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			s := s.forTest(t)
			before := s.snapshot()
			r := s.tract(append(append([]string{"chat"}, tt.args...), "hello")...)
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, tt.want)
			s.requireUnchanged(before)
		})
	}
}

// toolLog is the log of a branch made by importing a conversation with
// two parallel calls: results name their tools, and the call's line
// lists both calls.
func TestLog_ImportedToolSteps(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	conv := `[{"role":"user","content":"What is x, and the weather?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}},{"id":"call_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"call_1","content":"42"},
{"role":"tool","tool_call_id":"call_2","content":"Sunny\nand warm"},
{"role":"assistant","content":"x is 42; Paris is sunny."}]`
	s.okStdin(conv, "import")

	log := s.ok("log", "--oneline").Stdout
	want := []string{
		"assistant: x is 42; Paris is sunny.",
		"tool: weather → Sunny…",
		"tool: lookup → 42",
		`assistant: → lookup({"q":"x"}), weather({"city":"Paris"})`,
		"user: What is x, and the weather?",
	}
	got := lines(log)
	require.Len(t, got, len(want), log)
	for i, w := range want {
		assert.Contains(t, got[i], w)
	}
	// The same names when the log starts at a result (its call is read
	// back), and in the full log.
	assert.Contains(t, s.ok("log", "--oneline", "-n", "1", "HEAD~1").Stdout, "tool: weather → Sunny…")
	assert.Contains(t, s.ok("log", "-n", "2").Stdout, "Role:   tool\nTool:   weather (call call_2)\n")
	assert.Contains(t, s.ok("log", "--all").Stdout, "tool: lookup → 42")
	compiled := s.ok("compile").Stdout
	assert.Contains(t, compiled, "[tool: lookup]\n42\n\n[tool: weather]\nSunny\nand warm\n")
	fmt.Fprint(io.Discard, compiled)
}

// A model that still calls tools after --max-tool-steps ends the chat
// with an error that says so, and a hint to raise the limit; the call
// over the limit does not run, and the steps made stay in log --all.
func TestChat_ToolStepLimit(t *testing.T) {
	t.Parallel()
	ts := newToolServer(t,
		toolReply{Calls: []toolCall{{ID: "call_1", Name: "lookup", Args: `{"input":"x"}`}}},
		toolReply{Calls: []toolCall{{ID: "call_2", Name: "lookup", Args: `{"input":"z"}`}}},
	)
	s := ts.env(newSandbox(t))
	s.initRepo()
	writeScript(t, s, "lookup.sh", "cat >> calls.txt\necho >> calls.txt\necho 42\n")

	r := s.tract("chat", "--tool", "lookup=./lookup.sh", "--max-tool-steps", "1", "What is x?")
	assert.NotEqual(t, exitOK, r.Code, r)
	assert.Contains(t, r.Stderr, "the model called tools again after 1 tool step")
	assert.Contains(t, r.Stderr, "--max-tool-steps")
	calls, err := os.ReadFile(filepath.Join(s.dir, "calls.txt"))
	require.NoError(t, err)
	assert.Equal(t, "{\"input\":\"x\"}\n", string(calls), "the call over the limit does not run")
	assert.Contains(t, s.ok("log", "--all").Stdout, "tool: lookup → 42")
	s.fsckOK()
}
