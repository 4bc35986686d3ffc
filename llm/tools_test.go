package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

var (
	lookupTool = llm.ToolDef{Name: "lookup", Description: "Look a word up.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}`)}
	nowTool    = llm.ToolDef{Name: "now"} // no parameters
	jsonSchema = &llm.Schema{Name: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}
)

func TestRequest_CheckTools(t *testing.T) {
	params := func(s string) llm.ToolDef { return llm.ToolDef{Name: "t", Parameters: json.RawMessage(s)} }
	cases := []struct {
		name string
		req  llm.Request
		want *llm.ToolDefError // nil: accepted
		msg  string
	}{
		{"no tools", llm.Request{}, nil, ""},
		{"tools, auto", llm.Request{Tools: []llm.ToolDef{lookupTool, nowTool}}, nil, ""},
		{"none without tools", llm.Request{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, nil, ""},
		{"forced tool offered", llm.Request{Tools: []llm.ToolDef{lookupTool, nowTool}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "now"}}, nil, ""},
		{"parameters null", llm.Request{Tools: []llm.ToolDef{params("null")}}, nil, ""},
		{"parameters {}", llm.Request{Tools: []llm.ToolDef{params(" {} ")}}, nil, ""},
		{"64-character name", llm.Request{Tools: []llm.ToolDef{{Name: strings.Repeat("a", 64)}}}, nil, ""},

		{"empty name", llm.Request{Tools: []llm.ToolDef{lookupTool, {}}},
			&llm.ToolDefError{Index: 1, Field: "name", Reason: "is empty"}, `tools[1] "": name is empty`},
		{"long name", llm.Request{Tools: []llm.ToolDef{{Name: strings.Repeat("a", 65)}}},
			&llm.ToolDefError{Index: 0, Tool: strings.Repeat("a", 65), Field: "name", Reason: "is 65 characters long, more than the 64 allowed"}, ""},
		{"space in name", llm.Request{Tools: []llm.ToolDef{{Name: "get weather"}}},
			&llm.ToolDefError{Index: 0, Tool: "get weather", Field: "name", Reason: `has ' ', which is not a letter, digit, "_" or "-"`},
			`tools[0] "get weather": name has ' ', which is not a letter, digit, "_" or "-"`},
		{"dot in name", llm.Request{Tools: []llm.ToolDef{{Name: "fs.read"}}},
			&llm.ToolDefError{Index: 0, Tool: "fs.read", Field: "name", Reason: `has '.', which is not a letter, digit, "_" or "-"`}, ""},
		{"duplicate", llm.Request{Tools: []llm.ToolDef{lookupTool, nowTool, lookupTool}},
			&llm.ToolDefError{Index: 2, Tool: "lookup", Field: "name", Reason: "is also the name of tools[0]: tool names must be unique"}, ""},
		{"named like the schema", llm.Request{Tools: []llm.ToolDef{{Name: "answer"}}, Schema: jsonSchema},
			&llm.ToolDefError{Index: 0, Tool: "answer", Field: "name", Reason: "is also the name of the request's schema, which Anthropic receives as a tool of that name"}, ""},
		{"parameters not JSON", llm.Request{Tools: []llm.ToolDef{params(`{"type":`)}},
			&llm.ToolDefError{Index: 0, Tool: "t", Field: "parameters", Reason: "are not valid JSON: unexpected end of JSON input"}, ""},
		{"parameters an array", llm.Request{Tools: []llm.ToolDef{params(`[1]`)}},
			&llm.ToolDefError{Index: 0, Tool: "t", Field: "parameters", Reason: "are an array, not a JSON Schema object"}, ""},
		{"parameters without type", llm.Request{Tools: []llm.ToolDef{params(`{"properties":{}}`)}},
			&llm.ToolDefError{Index: 0, Tool: "t", Field: "parameters", Reason: `have no "type": the arguments are an object, so the schema needs "type": "object"`}, ""},
		{"parameters of a string", llm.Request{Tools: []llm.ToolDef{params(`{"type":"string"}`)}},
			&llm.ToolDefError{Index: 0, Tool: "t", Field: "parameters", Reason: `have the type "string": the arguments are an object, so the type must be "object"`},
			`tools[0] "t": parameters have the type "string": the arguments are an object, so the type must be "object"`},
		{"forced tool not offered", llm.Request{Tools: []llm.ToolDef{lookupTool}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "now"}},
			&llm.ToolDefError{Index: -1, Tool: "now", Field: "tool_choice", Reason: `forces the tool "now", which is not among the 1 tools offered`},
			`tool_choice forces the tool "now", which is not among the 1 tools offered`},
		{"forced tool without a name", llm.Request{Tools: []llm.ToolDef{lookupTool}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}},
			&llm.ToolDefError{Index: -1, Field: "tool_choice", Reason: "forces a tool but names none"}, ""},
		{"required without tools", llm.Request{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}},
			&llm.ToolDefError{Index: -1, Field: "tool_choice", Reason: "requires a tool call, but the request offers no tools"}, ""},
		{"name without mode tool", llm.Request{Tools: []llm.ToolDef{lookupTool}, ToolChoice: llm.ToolChoice{Name: "lookup"}},
			&llm.ToolDefError{Index: -1, Tool: "lookup", Field: "tool_choice", Reason: `names the tool "lookup", but only mode "tool" names a tool (mode is "")`}, ""},
		{"unknown mode", llm.Request{Tools: []llm.ToolDef{lookupTool}, ToolChoice: llm.ToolChoice{Mode: "any"}},
			&llm.ToolDefError{Index: -1, Field: "tool_choice", Reason: `has the unknown mode "any" (want "" for auto, "none", "required" or "tool")`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.CheckTools()
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			var got *llm.ToolDefError
			require.ErrorAs(t, err, &got)
			assert.Equal(t, tc.want, got)
			if tc.msg != "" {
				assert.EqualError(t, err, tc.msg)
			}
		})
	}
}

// wireClient is a client of one wire format for a script server.
type wireClient struct {
	wire string
	new  func(t *testing.T, srv *llmtest.Server) llm.Client
}

var wireClients = []wireClient{
	{llmtest.WireOpenAI, func(t *testing.T, srv *llmtest.Server) llm.Client {
		c, _ := newClient(t, srv.URL())
		return c
	}},
	{llmtest.WireAnthropic, func(t *testing.T, srv *llmtest.Server) llm.Client {
		c, _ := newAnthropic(t, srv)
		return c
	}},
}

// members decodes the members of a request body.
func members(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	return m
}

// assertMember checks a member of a request body: its JSON, or with want
// "" that it is absent.
func assertMember(t *testing.T, body map[string]json.RawMessage, name, want string) {
	t.Helper()
	got, ok := body[name]
	if want == "" {
		assert.False(t, ok, "%s sent: %s", name, got)
		return
	}
	if assert.True(t, ok, "%s not sent", name) {
		assert.JSONEq(t, want, string(got), name)
	}
}

// The tools and the tool choice go out in each wire's shape, streamed or
// not; a schema beside tools goes to Anthropic as one more tool.
func TestClients_SendToolsAndToolChoice(t *testing.T) {
	const (
		openAILookup    = `{"type":"function","function":{"name":"lookup","description":"Look a word up.","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`
		openAINow       = `{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}`
		anthropicLookup = `{"name":"lookup","description":"Look a word up.","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`
		anthropicNow    = `{"name":"now","input_schema":{"type":"object","properties":{}}}`
		anthropicSchema = `{"name":"answer","description":"Give the answer as this tool's input.","input_schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`
		both            = `[` + openAILookup + `,` + openAINow + `]`
		anthropicBoth   = `[` + anthropicLookup + `,` + anthropicNow + `]`
		withSchema      = `[` + anthropicLookup + `,` + anthropicNow + `,` + anthropicSchema + `]`
	)
	cases := []struct {
		name                       string
		tools                      []llm.ToolDef
		choice                     llm.ToolChoice
		schema                     *llm.Schema
		openAITools, openAIChoice  string // "": not sent
		anthropicTools, anthChoice string
	}{
		{"no tools", nil, llm.ToolChoice{}, nil, "", "", "", ""},
		{"none without tools", nil, llm.ToolChoice{Mode: llm.ToolChoiceNone}, nil, "", "", "", ""},
		{"auto", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{}, nil, both, "", anthropicBoth, ""},
		{"none", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceNone}, nil, both, `"none"`, anthropicBoth, `{"type":"none"}`},
		{"required", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceRequired}, nil, both, `"required"`, anthropicBoth, `{"type":"any"}`},
		{"forced", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "now"}, nil,
			both, `{"type":"function","function":{"name":"now"}}`, anthropicBoth, `{"type":"tool","name":"now"}`},
		{"schema alone", nil, llm.ToolChoice{}, jsonSchema, "", "", `[` + anthropicSchema + `]`, `{"type":"tool","name":"answer"}`},
		{"schema and tools, auto", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{}, jsonSchema, both, "", withSchema, `{"type":"any"}`},
		{"schema and tools, required", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceRequired}, jsonSchema,
			both, `"required"`, withSchema, `{"type":"any"}`},
		{"schema and tools, none", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceNone}, jsonSchema,
			both, `"none"`, withSchema, `{"type":"tool","name":"answer"}`},
		{"schema and tools, forced", []llm.ToolDef{lookupTool, nowTool}, llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "lookup"}, jsonSchema,
			both, `{"type":"function","function":{"name":"lookup"}}`, withSchema, `{"type":"tool","name":"lookup"}`},
	}
	for _, tc := range cases {
		for _, wc := range wireClients {
			for _, stream := range []bool{false, true} {
				t.Run(tc.name+"/"+wc.wire+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
					srv := llmtest.NewServer(t)
					srv.Reply(llmtest.Answer("ok"))
					req := llm.Request{Messages: userMsg("hi"), Tools: tc.tools, ToolChoice: tc.choice, Schema: tc.schema}
					if stream {
						req.OnDelta = func(string) {}
					}
					_, err := wc.new(t, srv).Complete(context.Background(), req)
					require.NoError(t, err)
					body := members(t, srv.Requests()[0].Body)
					wantTools, wantChoice := tc.openAITools, tc.openAIChoice
					if wc.wire == llmtest.WireAnthropic {
						wantTools, wantChoice = tc.anthropicTools, tc.anthChoice
					}
					assertMember(t, body, "tools", wantTools)
					assertMember(t, body, "tool_choice", wantChoice)
				})
			}
		}
	}
}

// A request whose tools fail CheckTools never reaches the server.
func TestClients_RefuseBadToolsBeforeSending(t *testing.T) {
	bad := llm.Request{Messages: userMsg("hi"), Tools: []llm.ToolDef{{Name: "get weather"}}}
	for _, wc := range wireClients {
		t.Run(wc.wire, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			_, err := wc.new(t, srv).Complete(context.Background(), bad)
			var tde *llm.ToolDefError
			require.ErrorAs(t, err, &tde)
			assert.Equal(t, "get weather", tde.Tool)
			assert.EqualError(t, err, `chat completion: tools[0] "get weather": name has ' ', which is not a letter, digit, "_" or "-"`)
			assert.Empty(t, srv.Requests())
		})
	}
	t.Run("scripted", func(t *testing.T) {
		s := llm.NewScripted()
		_, err := s.Complete(context.Background(), bad)
		var tde *llm.ToolDefError
		require.ErrorAs(t, err, &tde)
		s.Verify(t)
	})
}

// The whole loop on each wire, streamed and not: the model calls two
// tools in parallel (with some text), the calls come back in order, the
// results go back in the wire's shape (Anthropic: one user message of
// tool_result blocks), and the answer the script gives for those results
// comes back.
func TestClients_ToolCallRoundTrip(t *testing.T) {
	for _, wc := range wireClients {
		for _, stream := range []bool{false, true} {
			t.Run(wc.wire+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				srv := llmtest.NewServer(t)
				srv.Reply(llmtest.Reply{Content: "Let me look.", ToolCalls: []llm.ToolCall{
					llmtest.Call("lookup", `{"q":"tract"}`),
					llm.NewToolCall("call_now", "now", `{}`),
				}})
				srv.When("a DAG of commits", llmtest.Answer("Tract keeps a DAG of commits."))
				c := wc.new(t, srv)
				var deltas strings.Builder
				req := llm.Request{Messages: userMsg("What is tract?"), Tools: []llm.ToolDef{lookupTool, nowTool}}
				if stream {
					req.OnDelta = func(d string) { deltas.WriteString(d) }
				}

				resp, err := c.Complete(context.Background(), req)
				require.NoError(t, err)
				id := "call_scriptserver_1_0"
				finish := "tool_calls"
				if wc.wire == llmtest.WireAnthropic {
					id, finish = "toolu_scriptserver_1_0", "tool_use"
				}
				calls := []llm.ToolCall{llm.NewToolCall(id, "lookup", `{"q":"tract"}`), llm.NewToolCall("call_now", "now", `{}`)}
				assert.Equal(t, calls, resp.ToolCalls)
				assert.Equal(t, "Let me look.", resp.Content)
				assert.Equal(t, finish, resp.FinishReason)
				if stream {
					assert.Equal(t, "Let me look.", deltas.String(), "only the text is streamed")
				}

				req.Messages = append(req.Messages, resp.Message(),
					llm.Message{Role: "tool", ToolCallID: id, Content: "a DAG of commits"},
					llm.Message{Role: "tool", ToolCallID: "call_now", Content: "21:30"})
				resp, err = c.Complete(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, "Tract keeps a DAG of commits.", resp.Content)
				assert.Empty(t, resp.ToolCalls)

				reqs := srv.Requests()
				require.Len(t, reqs, 2)
				got := reqs[1].Messages
				if wc.wire == llmtest.WireOpenAI {
					got = got[1:] // Anthropic's system message is the system field
				}
				assert.Equal(t, req.Messages[1:], got, "the server reads back what was sent, in OpenAI shape")
				var body struct {
					Messages json.RawMessage `json:"messages"`
				}
				require.NoError(t, json.Unmarshal(reqs[1].Body, &body))
				want := `[{"role":"system","content":"Be brief."},{"role":"user","content":"What is tract?"},` +
					`{"role":"assistant","content":"Let me look.","tool_calls":[` +
					`{"id":"` + id + `","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"tract\"}"}},` +
					`{"id":"call_now","type":"function","function":{"name":"now","arguments":"{}"}}]},` +
					`{"role":"tool","content":"a DAG of commits","tool_call_id":"` + id + `"},` +
					`{"role":"tool","content":"21:30","tool_call_id":"call_now"}]`
				if wc.wire == llmtest.WireAnthropic {
					want = `[{"role":"user","content":"What is tract?"},` +
						`{"role":"assistant","content":[{"type":"text","text":"Let me look."},` +
						`{"type":"tool_use","id":"` + id + `","name":"lookup","input":{"q":"tract"}},` +
						`{"type":"tool_use","id":"call_now","name":"now","input":{}}]},` +
						`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"a DAG of commits"},` +
						`{"type":"tool_result","tool_use_id":"call_now","content":"21:30"}]}]`
				}
				assert.JSONEq(t, want, string(body.Messages))
			})
		}
	}
}

// A steering text after the results of parallel calls joins their user
// message, after the tool_result blocks, as Anthropic requires.
func TestAnthropic_ToolResultsBeforeText(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	c, _ := newAnthropic(t, srv)
	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{llm.NewToolCall("a", "lookup", `{"q":"x"}`), llm.NewToolCall("b", "now", "")}},
		{Role: "tool", ToolCallID: "a", Content: "1"},
		{Role: "tool", ToolCallID: "b", Content: "2"},
		{Role: "user", Content: "Use both."},
	}})
	require.NoError(t, err)
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(srv.Requests()[0].Body, &body))
	require.Len(t, body.Messages, 3)
	assert.JSONEq(t, `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"lookup","input":{"q":"x"}},{"type":"tool_use","id":"b","name":"now","input":{}}]}`, string(body.Messages[1]))
	assert.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"tool_result","tool_use_id":"b","content":"2"},{"type":"text","text":"Use both."}]}`, string(body.Messages[2]))
}

// Anthropic's tool_use blocks become ToolCalls however they arrive: whole
// or streamed, an input in pieces, none at all, or only in the block's
// start; the schema's tool is the answer, not a call.
func TestAnthropic_ToolUseVariants(t *testing.T) {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	start := ev("message_start", `{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":5,"output_tokens":1}}}`)
	stop := ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	block := func(i int, content string) string {
		return ev("content_block_start", `{"type":"content_block_start","index":`+string(rune('0'+i))+`,"content_block":`+content+`}`)
	}
	delta := func(i int, d string) string {
		return ev("content_block_delta", `{"type":"content_block_delta","index":`+string(rune('0'+i))+`,"delta":`+d+`}`)
	}
	piece := func(i int, p string) string {
		b, _ := json.Marshal(p)
		return delta(i, `{"type":"input_json_delta","partial_json":`+string(b)+`}`)
	}
	blockStop := func(i int) string {
		return ev("content_block_stop", `{"type":"content_block_stop","index":`+string(rune('0'+i))+`}`)
	}
	lookup := llm.NewToolCall("toolu_1", "lookup", `{"q":"tract"}`)
	now := llm.NewToolCall("toolu_2", "now", `{}`)
	cases := []struct {
		name, body, ct string
		schema         bool
		content        string
		want           []llm.ToolCall
	}{
		{"whole", `{"type":"message","model":"claude","content":[{"type":"text","text":"Looking."},` +
			`{"type":"tool_use","id":"toolu_1","name":"lookup","input":{ "q" : "tract" }},{"type":"tool_use","id":"toolu_2","name":"now","input":{}}],"stop_reason":"tool_use"}`,
			"application/json", false, "Looking.", []llm.ToolCall{lookup, now}},
		{"whole, input missing", `{"type":"message","content":[{"type":"tool_use","id":"toolu_2","name":"now"}],"stop_reason":"tool_use"}`,
			"application/json", false, "", []llm.ToolCall{now}},
		{"whole, with the schema's tool", `{"type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":"tract"}},` +
			`{"type":"tool_use","id":"toolu_9","name":"answer","input":{"ok":true}}],"stop_reason":"tool_use"}`,
			"application/json", true, `{"ok":true}`, []llm.ToolCall{lookup}},
		{"streamed", start +
			block(0, `{"type":"text","text":""}`) + delta(0, `{"type":"text_delta","text":"Looking."}`) + blockStop(0) +
			block(1, `{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}`) + piece(1, `{"q":`) + piece(1, `"tract"}`) + blockStop(1) +
			block(2, `{"type":"tool_use","id":"toolu_2","name":"now","input":{}}`) + blockStop(2) + stop,
			"text/event-stream", false, "Looking.", []llm.ToolCall{lookup, now}},
		{"streamed, input in the start", start +
			block(0, `{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q": "tract"}}`) + blockStop(0) + stop,
			"text/event-stream", false, "", []llm.ToolCall{lookup}},
		{"streamed, with the schema's tool", start +
			block(0, `{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}`) + piece(0, `{"q":"tract"}`) + blockStop(0) +
			block(1, `{"type":"tool_use","id":"toolu_9","name":"answer","input":{}}`) + piece(1, `{"ok":`) + piece(1, `true}`) + blockStop(1) + stop,
			"text/event-stream", true, `{"ok":true}`, []llm.ToolCall{lookup}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Body: tc.body, ContentType: tc.ct})
			c, _ := newAnthropic(t, srv, llm.WithMaxRetries(0))
			var deltas strings.Builder
			req := llm.Request{Messages: userMsg("x"), Tools: []llm.ToolDef{lookupTool, nowTool},
				OnDelta: func(d string) { deltas.WriteString(d) }}
			if tc.schema {
				req.Schema = jsonSchema
			}
			resp, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.ToolCalls)
			assert.Equal(t, tc.content, resp.Content)
			assert.Equal(t, "tool_use", resp.FinishReason)
			if tc.ct == "text/event-stream" {
				assert.Equal(t, tc.content, deltas.String(), "the text, or the schema's input, is streamed; the calls are not")
			}
		})
	}
}

// With a schema beside the caller's tools, Anthropic's model answers by
// calling either: a call of the schema's tool is the structured answer,
// a call of another tool a tool call.
func TestAnthropic_SchemaBesideTools(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Calls(llmtest.Call("lookup", `{"q":"x"}`)), llmtest.Calls(llmtest.Call("answer", `{"ok":true}`)))
			c, _ := newAnthropic(t, srv)
			req := llm.Request{Messages: userMsg("x"), Tools: []llm.ToolDef{lookupTool}, Schema: jsonSchema}
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, []llm.ToolCall{llm.NewToolCall("toolu_scriptserver_1_0", "lookup", `{"q":"x"}`)}, resp.ToolCalls)
			assert.Equal(t, "", resp.Content)
			assert.Equal(t, llm.StructuredSent, resp.Structured)

			req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, Content: "found"})
			resp, err = c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.Empty(t, resp.ToolCalls)
			assert.Equal(t, `{"ok":true}`, resp.Content)
			assert.Equal(t, llm.StructuredSent, resp.Structured)

			r := srv.Requests()[1]
			assert.Equal(t, llm.ToolChoice{Mode: llm.ToolChoiceRequired}, r.ToolChoice, "the model must call a tool: one of the caller's or the answer's")
			assert.Equal(t, []string{"lookup", "answer"}, []string{r.Tools[0].Name, r.Tools[1].Name})
		})
	}
}

// Scripted answers with tool calls too, giving each an ID, and its rules
// match the tool results a request ends in.
func TestScripted_ToolCalls(t *testing.T) {
	s := llm.NewScripted(llm.Reply{ToolCalls: []llm.ToolCall{{Function: llm.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}, llm.NewToolCall("mine", "now", "{}")}})
	s.When("42", llm.Reply{Content: "It is 42."})
	req := llm.Request{Messages: userMsg("q"), Tools: []llm.ToolDef{lookupTool, nowTool}}
	var deltas []string
	req.OnDelta = func(d string) { deltas = append(deltas, d) }
	resp, err := s.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []llm.ToolCall{llm.NewToolCall("call_scripted_1_0", "lookup", `{"q":"x"}`), llm.NewToolCall("mine", "now", "{}")}, resp.ToolCalls)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Empty(t, deltas)

	req.Messages = append(req.Messages, resp.Message(),
		llm.Message{Role: "tool", ToolCallID: "call_scripted_1_0", Content: "42"},
		llm.Message{Role: "tool", ToolCallID: "mine", Content: "noon"})
	resp, err = s.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "It is 42.", resp.Content, "the rule matched the first of the results")
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Equal(t, []llm.ToolDef{lookupTool, nowTool}, s.Requests()[1].Tools)
	s.Verify(t)
}

func TestMatchText(t *testing.T) {
	cases := []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{"none", nil, ""},
		{"text", userMsg("hi"), "hi"},
		{"tool calls", []llm.Message{{Role: "assistant", ToolCalls: []llm.ToolCall{llm.NewToolCall("a", "f", "{}")}}}, "→ tool call f({})"},
		{"results", []llm.Message{{Role: "tool", Content: "old"}, {Role: "user", Content: "q"},
			{Role: "assistant", ToolCalls: []llm.ToolCall{llm.NewToolCall("a", "f", "{}"), llm.NewToolCall("b", "g", "{}")}},
			{Role: "tool", ToolCallID: "a", Content: "1"}, {Role: "tool", ToolCallID: "b", Content: "2"}}, "1\n2"},
		{"results, then text", []llm.Message{{Role: "tool", Content: "1"}, {Role: "user", Content: "more"}}, "more"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, llm.MatchText(tc.msgs))
		})
	}
}
