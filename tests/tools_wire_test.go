package tests

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// The scenario of a validated tool turn, on both wires, through the
// scripted server: the model calls a tool, answers wrongly, is steered,
// calls the tool again and answers well. The branch holds user → call →
// result → answer; log --all shows the failed attempt with its tool step
// beside it; compile --json gives OpenAI's shapes back exactly.
func TestChat_ToolTurnSteeredOnBothWires(t *testing.T) {
	t.Parallel()
	for _, wire := range []string{llmtest.WireOpenAI, llmtest.WireAnthropic} {
		t.Run(wire, func(t *testing.T) {
			t.Parallel()
			key := "sk-test-key-42"
			if wire == llmtest.WireAnthropic {
				key = "sk-ant-test-key-42" // anthropicEnv's
			}
			srv := llmtest.NewServer(t, llmtest.WithAPIKey(key))
			srv.Reply(
				llmtest.Calls(llmtest.Call("lookup", `{"input":"paris"}`)),
				llmtest.Answer("It is sunny."),
				llmtest.Calls(llmtest.Call("lookup", `{"input":"paris"}`)),
				llmtest.Answer(`{"sky":"sunny"}`),
			)
			s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", "sk-test-key-42", "TRACT_MODEL", "m")
			if wire == llmtest.WireAnthropic {
				s = anthropicEnv(newSandbox(t), srv, "claude-test")
			}
			s.initRepo()
			writeScript(t, s, "lookup.sh", lookupScript)

			r := s.tract("chat", "--tool", "lookup=./lookup.sh", "--validate", "json", "Weather in Paris, as JSON?")
			requireExit(t, r, exitOK)
			assert.Equal(t, "{\"sky\":\"sunny\"}\n", r.Stdout)

			reqs := srv.Requests()
			require.Len(t, reqs, 4)
			for _, req := range reqs {
				assert.Equal(t, wire, req.Wire)
				require.Len(t, req.Tools, 1, "every request offers the tool")
				assert.Equal(t, "lookup", req.Tools[0].Name)
			}
			second := reqs[1].Messages
			require.Len(t, second, 3, "user, the call, its result")
			assert.Equal(t, "tool", second[2].Role)
			assert.Equal(t, reqs[0].Messages[0].Text(), second[0].Text())
			assert.Equal(t, "42", second[2].Text())
			assert.Contains(t, reqs[2].LastMessage(), "failed validation", "the third request carries the steering")

			// The branch: user → call → result → answer, purified.
			log := s.log()
			require.Len(t, log, 4)
			assert.Equal(t, []string{`{"sky":"sunny"}`, "42"}, texts(log[:2]))
			assert.Equal(t, "Weather in Paris, as JSON?", log[3].Text)
			// log --all keeps the failed attempt with its own tool step.
			all := s.ok("log", "--all", "--oneline").Stdout
			assert.Contains(t, all, "assistant: It is sunny.")
			assert.Regexp(t, `(?s)steering: .*assistant: It is sunny\..*tool: lookup → 42.*assistant: → lookup\(\{"input":"paris"\}\).*orphaned by purify`, all)

			var msgs []json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(s.ok("compile", "--json").Stdout), &msgs))
			require.Len(t, msgs, 4)
			var call struct {
				Role      string `json:"role"`
				Content   any    `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			require.NoError(t, json.Unmarshal(msgs[1], &call))
			assert.Equal(t, "assistant", call.Role)
			assert.Nil(t, call.Content)
			require.Len(t, call.ToolCalls, 1)
			assert.Equal(t, "function", call.ToolCalls[0].Type)
			assert.Equal(t, "lookup", call.ToolCalls[0].Function.Name)
			assert.JSONEq(t, `{"input":"paris"}`, call.ToolCalls[0].Function.Arguments)
			assert.JSONEq(t, `{"role":"tool","content":"42","tool_call_id":"`+call.ToolCalls[0].ID+`"}`, string(msgs[2]))
			s.fsckOK()
		})
	}
}
