package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// shapeLines are messages of every shape an OpenAI client writes, in the
// documented key order, as JSON lines.
var shapeLines = []string{
	`{"role":"system","content":"You answer with tools.","name":"setup"}`,
	`{"role":"user","content":[{"type":"text","text":"Weather where this was taken?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("A", 12*1024) + `","detail":"high"}}]}`,
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],"refusal":null}`,
	`{"role":"tool","content":"22C & sunny","tool_call_id":"call_1"}`,
	`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},{"type":"file","file":{"file_id":"file-1"}}]}`,
}

// tract import takes every shape, and tract compile --json gives each back
// as it came; show and log describe what is not text.
func TestImport_EveryShapeRoundTrips(t *testing.T) {
	s := newSandbox(t)
	s.initRepo()
	in := filepath.Join(s.dir, "chat.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join(shapeLines, "\n")+"\n"), 0o644))
	s.ok("import", in)

	var got []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s.ok("compile", "--json").Stdout), &got))
	require.Len(t, got, len(shapeLines))
	for i, raw := range got {
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, raw))
		assert.Equal(t, shapeLines[i], b.String(), "message %d", i+1)
	}

	// Re-importing what compile printed makes the same messages.
	s2 := newSandbox(t)
	s2.initRepo()
	s2.okStdin(s.ok("compile", "--json").Stdout, "import")
	assert.Equal(t, s.ok("compile", "--json").Stdout, s2.ok("compile", "--json").Stdout)

	log := s.ok("log").Stdout
	assert.Contains(t, log, `→ tool call get_weather({"city":"Paris"})`)
	assert.Contains(t, log, "22C & sunny")

	show := s.ok("show", "HEAD~3").Stdout
	assert.Contains(t, show, "    Weather where this was taken?\n    [image: data:image/png…(12 KB)]")
	assert.Contains(t, show, "content:       2 parts: text, image_url (detail high)")
	assert.NotContains(t, show, "AAAAAAAA", "show does not dump the image")

	show = s.ok("show", "HEAD~2").Stdout
	assert.Contains(t, show, `→ tool call get_weather({"city":"Paris"})`)
	assert.Contains(t, show, "tool call:     call_1 get_weather")
	assert.Contains(t, show, "content:       null")
	assert.Contains(t, show, "also:          refusal")

	show = s.ok("show", "HEAD~1").Stdout
	assert.Contains(t, show, "tool_call_id:  call_1")

	text := s.ok("compile").Stdout
	assert.Contains(t, text, "[user]\n[audio: wav, 8 B]\n[file: file-1]")
	s.fsckOK()
}

// A shape tract does not support is refused with the message's number,
// its line and the member; nothing is imported.
func TestImport_UnsupportedShapeNamesLineAndField(t *testing.T) {
	s := newSandbox(t)
	s.initRepo()
	for _, tc := range []struct{ line, err string }{
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"refusal","refusal":"no"}]}`,
			`message 2 (line 2): content[1].type "refusal" is not supported (supported: text, image_url, input_audio, file)`},
		{`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"custom","function":{"name":"f","arguments":""}}]}`,
			`message 2 (line 2): tool_calls[0].type "custom" is not supported (supported: function)`},
		{`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`,
			`message 2 (line 2): content[0].cache_control is not supported in a "text" part`},
	} {
		r := s.tractStdin(`{"role":"user","content":"first"}`+"\n"+tc.line+"\n", "import")
		requireExit(t, r, exitUsage)
		assertNoCrash(t, r)
		assert.Contains(t, r.Stderr, tc.err)
	}
	assert.Empty(t, s.log(), "nothing imported")
}

// An answer that calls a tool is committed with the call: chat --json
// lists it, show describes it, compile sends it back, and the tool's
// result imported after it goes to the model with its call id.
func TestChat_ToolCallAnswerIsKept(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_7", Type: "function",
		Function: llm.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}, llmtest.Answer("Sunny, 22C."))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	var res struct {
		Answer    string         `json:"answer"`
		ToolCalls []llm.ToolCall `json:"tool_calls"`
	}
	require.NoError(t, json.Unmarshal([]byte(s.ok("chat", "--json", "weather in Paris?").Stdout), &res))
	assert.Equal(t, `→ tool call get_weather({"city":"Paris"})`, res.Answer)
	require.Len(t, res.ToolCalls, 1)
	assert.Equal(t, "call_7", res.ToolCalls[0].ID)
	assert.Contains(t, s.ok("show").Stdout, "tool call:     call_7 get_weather")

	s.okStdin(`{"role":"tool","content":"22C, sunny","tool_call_id":"call_7"}`, "import")
	s.ok("chat", "so?")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	body := string(reqs[1].Body)
	assert.Contains(t, body, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","content":"22C, sunny","tool_call_id":"call_7"},{"role":"user","content":"so?"}`)
}

// Every shape goes out through tract export and comes back through
// import --format openai byte for byte.
func TestExport_EveryShapeRoundTrips(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	in := filepath.Join(s.dir, "chat.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join(shapeLines, "\n")+"\n"), 0o644))
	s.ok("import", in)

	first := s.ok("export").Stdout
	var line struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &line))
	require.Len(t, line.Messages, len(shapeLines))
	for i, raw := range line.Messages {
		assert.Equal(t, shapeLines[i], string(raw), "message %d", i+1)
	}
	out := filepath.Join(s.dir, "sft.jsonl")
	require.NoError(t, os.WriteFile(out, []byte(first), 0o644))
	s.ok("import", "--format", "openai", "--name", "copy", out)
	assert.Equal(t, first, s.ok("export", "copy-1").Stdout)
	s.fsckOK()
}
