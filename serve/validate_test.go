package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/serve"
)

// offBranch returns the texts of the commits of the repository that no
// branch holds (failed attempts and steering moved off by purify).
func (e *env) offBranch(branch string) []string {
	e.t.Helper()
	on := map[string]bool{}
	for ci, err := range e.repo.LogSeq(context.Background(), tract.LogFrom(branch)) {
		require.NoError(e.t, err)
		on[ci.Hash.String()] = true
	}
	var out []string
	for _, c := range e.all() {
		if !on[c.Hash.String()] {
			out = append(out, string(c.Kind)+" "+string(c.Role)+": "+c.Text)
		}
	}
	return out
}

func TestProxy_ValidatedRetriesAndReturnsOnlyTheAcceptedAnswer(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Reply{Content: "Sure! {\"a\": 1", Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}})
	e.model.Reply(llmtest.Reply{Content: `{"a": 1}`, Usage: &llm.Usage{PromptTokens: 30, CompletionTokens: 4, TotalTokens: 34}})
	resp, body := e.chat([]msg{{"user", "Give JSON."}}, serve.HeaderValidate, "json", serve.HeaderTask, "extract-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, `{"a": 1}`, answerOf(t, body))
	assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))
	var doc struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Usage  struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	assert.Equal(t, "chat.completion", doc.Object)
	assert.Equal(t, "gpt-test", doc.Model)
	assert.Equal(t, 40, doc.Usage.Prompt, "the attempts' usage is summed")
	assert.Equal(t, 9, doc.Usage.Completion)
	assert.Equal(t, 49, doc.Usage.Total)
	assert.NotContains(t, string(body), "Sure!")

	branch := resp.Header.Get(serve.HeaderBranch)
	require.True(t, strings.HasPrefix(branch, "serve/"), branch)
	assert.Equal(t, []string{"message user: Give JSON.", `message assistant: {"a": 1}`}, e.chain(branch), "the branch holds the clean answer")
	tip, err := e.repo.Show(context.Background(), branch)
	require.NoError(t, err)
	assert.Equal(t, tip.Hash.String(), resp.Header.Get(serve.HeaderCommit))
	assert.Equal(t, "extract-1", tip.MetaValue("task"))
	off := e.offBranch(branch)
	// Off the branch, in LogAll: the failed attempt, its steering and the
	// accepted attempt as first committed (purify re-commits it clean).
	require.Len(t, off, 3, "%v", off)
	assert.Contains(t, strings.Join(off, "\n"), `message assistant: Sure! {"a": 1`)
	assert.Contains(t, strings.Join(off, "\n"), "steering user: Your previous response failed validation: json")

	// The upstream was asked twice, the second time with the steering.
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "gpt-test", reqs[1].Model)
	assert.NotEqual(t, "Give JSON.", reqs[1].LastMessage())

	// The client resends the conversation with the accepted answer: it
	// extends the branch, nothing stored twice.
	e.model.Reply(llmtest.Answer("Done."))
	resp, body = e.chat([]msg{{"user", "Give JSON."}, {"assistant", `{"a": 1}`}, {"user", "Thanks."}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	assert.Len(t, e.chain(branch), 4)
}

func TestProxy_ValidatedExhaustion(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		t.Run(path, func(t *testing.T) {
			e := newEnv(t)
			e.model.Reply(llmtest.Answer("not json"), llmtest.Answer("still not"))
			resp, body := e.post(path, map[string]any{"model": "m", "max_tokens": 50, "messages": []msg{{"user", "JSON please."}}},
				serve.HeaderValidate, "json", serve.HeaderMaxAttempts, "2")
			require.Equal(t, serve.StatusExhausted, resp.StatusCode, string(body))
			assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))
			inspect := resp.Header.Get(serve.HeaderCommit)
			require.NotEmpty(t, inspect)
			var doc struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(body, &doc), string(body))
			if path == "/v1/messages" {
				assert.Equal(t, "error", doc.Type)
			}
			assert.Equal(t, "invalid_request_error", doc.Error.Type)
			assert.Contains(t, doc.Error.Message, "no answer passed validation in 2 attempts")
			assert.Contains(t, doc.Error.Message, "attempt 1: ")
			assert.Contains(t, doc.Error.Message, "attempt 2: ")
			assert.Contains(t, doc.Error.Message, inspect)
			ci, err := e.repo.Show(context.Background(), inspect)
			require.NoError(t, err)
			assert.Equal(t, "still not", ci.Text)
			assert.Len(t, e.model.Requests(), 2)

			// The client's retry of the same request answers the same
			// message on the same branch.
			branch := resp.Header.Get(serve.HeaderBranch)
			e.model.Reply(llmtest.Answer(`{"ok": 1}`))
			resp, body = e.post(path, map[string]any{"model": "m", "max_tokens": 50, "messages": []msg{{"user", "JSON please."}}},
				serve.HeaderValidate, "json")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
			got := e.chain(branch)
			assert.Equal(t, `message assistant: {"ok": 1}`, got[len(got)-1])
			n := 0
			for _, c := range e.all() {
				if c.Text == "JSON please." {
					n++
				}
			}
			assert.Equal(t, 1, n, "the question is stored once")
		})
	}
}

func TestProxy_ValidatedBadHeadersWriteNothing(t *testing.T) {
	cases := []struct {
		name   string
		header []string
		want   string
	}{
		{"unknown kind", []string{serve.HeaderValidate, "jsno"}, "jsno"},
		{"bad argument", []string{serve.HeaderValidate, "maxlen:lots"}, "maxlen"},
		{"command", []string{serve.HeaderValidate, "cmd:true"}, "may not name a cmd: validator"},
		{"attempts", []string{serve.HeaderValidate, "json", serve.HeaderMaxAttempts, "0"}, "want a whole number from 1 to 20"},
		{"attempts without validator", []string{serve.HeaderMaxAttempts, "3"}, "name a validator"},
		{"task", []string{serve.HeaderValidate, "json", serve.HeaderTask, " "}, "X-Tract-Task: task id"},
	}
	for _, c := range cases {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
			t.Run(c.name+path, func(t *testing.T) {
				e := newEnv(t)
				resp, body := e.post(path, map[string]any{"model": "m", "messages": []msg{{"user", "x"}}}, c.header...)
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
				assert.Contains(t, string(body), c.want)
				assert.Contains(t, string(body), `"invalid_request_error"`)
				if path == "/v1/messages" {
					assert.Contains(t, string(body), `"type":"error"`)
				}
				assert.Empty(t, e.all())
				assert.Empty(t, e.model.Requests())
			})
		}
	}
	t.Run("tools", func(t *testing.T) {
		e := newEnv(t)
		tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "f"}}}
		resp, body := e.post("/v1/chat/completions", map[string]any{"model": "m", "tools": tools, "messages": []msg{{"user", "x"}}},
			serve.HeaderValidate, "json")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
		assert.Contains(t, string(body), "cannot offer tools")
		assert.Empty(t, e.all())
	})
}

func TestProxy_ValidatedAnthropic(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Reply{Content: "nope", Usage: &llm.Usage{PromptTokens: 8, CompletionTokens: 1, TotalTokens: 9}})
	e.model.Reply(llmtest.Reply{Content: `["ok"]`, Usage: &llm.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23}})
	resp, body := e.post("/v1/messages", map[string]any{"model": "claude-test", "max_tokens": 100, "system": "Answer in JSON.",
		"messages": []any{map[string]any{"role": "user", "content": "List."}}}, serve.HeaderValidate, "json")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var doc struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), string(body))
	assert.Equal(t, "message", doc.Type)
	assert.Equal(t, "assistant", doc.Role)
	require.Len(t, doc.Content, 1)
	assert.Equal(t, `["ok"]`, doc.Content[0].Text)
	assert.Equal(t, "end_turn", doc.StopReason)
	assert.Equal(t, 28, doc.Usage.In)
	assert.Equal(t, 4, doc.Usage.Out)
	assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))
	branch := resp.Header.Get(serve.HeaderBranch)
	assert.Equal(t, []string{"message system: Answer in JSON.", "message user: List.", `message assistant: ["ok"]`}, e.chain(branch))
	ci, err := e.repo.Show(context.Background(), branch)
	require.NoError(t, err)
	assert.Equal(t, "claude-test", ci.MetaValue("model"))
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "claude-test", reqs[0].Model)
}

func TestProxy_ValidatedStreamSendsTheAcceptedAnswer(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		e := newEnv(t)
		e.model.Reply(llmtest.Reply{Content: "{bad", Usage: &llm.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}},
			llmtest.Reply{Content: `{"n": 2}`, Usage: &llm.Usage{PromptTokens: 9, CompletionTokens: 3, TotalTokens: 12}})
		resp, body := e.post("/v1/chat/completions", map[string]any{"model": "m", "stream": true,
			"stream_options": map[string]any{"include_usage": true},
			"messages":       []msg{{"user", "Count."}}}, serve.HeaderValidate, "json")
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))
		assert.NotEmpty(t, resp.Header.Get(serve.HeaderCommit))
		events := sse(t, body)
		require.NotEmpty(t, events)
		assert.Equal(t, "[DONE]", events[len(events)-1])
		assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n: "+serve.HeaderBranch+": "+resp.Header.Get(serve.HeaderBranch)+
			"\n: "+serve.HeaderCommit+": "+resp.Header.Get(serve.HeaderCommit)+"\n\n"), "the stream ends naming its commit, as one passed through:\n%s", body)
		var text strings.Builder
		var usage []int
		for _, ev := range events[:len(events)-1] {
			var chunk struct {
				Object  string `json:"object"`
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Usage *struct {
					Total int `json:"total_tokens"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(ev), &chunk), ev)
			assert.Equal(t, "chat.completion.chunk", chunk.Object)
			for _, c := range chunk.Choices {
				text.WriteString(c.Delta.Content)
			}
			if chunk.Usage != nil {
				usage = append(usage, chunk.Usage.Total)
				assert.Empty(t, chunk.Choices, "usage comes in a chunk of its own")
			}
		}
		assert.Equal(t, `{"n": 2}`, text.String())
		assert.Equal(t, []int{19}, usage, "asked for, the summed usage comes last")
		assert.NotContains(t, string(body), "{bad")
	})
	t.Run("anthropic", func(t *testing.T) {
		e := newEnv(t)
		e.model.Reply(llmtest.Answer("{bad"), llmtest.Answer(`{"n": 2}`))
		resp, body := e.post("/v1/messages", map[string]any{"model": "claude-test", "max_tokens": 10, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": "Count."}}}, serve.HeaderValidate, "json")
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		var types []string
		var text strings.Builder
		for _, ev := range sse(t, body) {
			var doc struct {
				Type  string `json:"type"`
				Delta struct {
					Text string `json:"text"`
				} `json:"delta"`
			}
			require.NoError(t, json.Unmarshal([]byte(ev), &doc), ev)
			types = append(types, doc.Type)
			text.WriteString(doc.Delta.Text)
		}
		assert.Equal(t, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, types)
		assert.Equal(t, `{"n": 2}`, text.String())
		assert.Contains(t, string(body), "event: message_start\n")
	})
}

func TestProxy_DefaultValidation(t *testing.T) {
	e := newEnv(t, serve.WithDefaultValidation([]string{"json"}, 2))
	e.model.Reply(llmtest.Answer("no"), llmtest.Answer("nope"))
	resp, body := e.chat([]msg{{"user", "JSON."}})
	assert.Equal(t, serve.StatusExhausted, resp.StatusCode, string(body))
	assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))

	// A request's own validators replace the defaults.
	e.model.Reply(llmtest.Answer("short"))
	resp, body = e.chat([]msg{{"user", "Anything."}}, serve.HeaderValidate, "maxlen:10")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "short", answerOf(t, body))
	assert.Equal(t, "1", resp.Header.Get(serve.HeaderAttempts))

	_, err := serve.New(context.Background(), e.repo, serve.WithDefaultValidation([]string{"jsno"}, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "jsno")
}

func TestProxy_ValidatedHeadersJoinedByTheClient(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer(`{"long": "enough"}`), llmtest.Answer(`{}`))
	// fetch's Headers joins a repeated header's values with ", ".
	resp, body := e.chat([]msg{{"user", "JSON."}}, serve.HeaderValidate, "json, maxlen:5")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, `{}`, answerOf(t, body))
	assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts), "both validators judged the first answer")

	// A spec whose argument holds a comma is taken whole.
	e.model.Reply(llmtest.Answer("ab"))
	resp, body = e.chat([]msg{{"user", "Letters."}}, serve.HeaderValidate, "regex:^[a-z]{1,3}$")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "1", resp.Header.Get(serve.HeaderAttempts))

	resp, body = e.chat([]msg{{"user", "x"}}, serve.HeaderValidate, "json, cmd:true")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "may not name a cmd: validator")
}

func TestProxy_ValidatedUpstreamFailure(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Reply{Status: 500, Message: "boom"})
	resp, body := e.chat([]msg{{"user", "JSON."}}, serve.HeaderValidate, "json")
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "boom")
	assert.Contains(t, string(body), `"server_error"`)
	assert.NotContains(t, string(body), upstreamKey)
	branch := resp.Header.Get(serve.HeaderBranch)
	got := e.chain(branch)
	require.Len(t, got, 2, "%v", got)
	assert.True(t, strings.HasPrefix(got[1], "error assistant: "), got[1])
	tip, err := e.repo.Show(context.Background(), branch)
	require.NoError(t, err)
	assert.Equal(t, tip.Hash.String(), resp.Header.Get(serve.HeaderCommit))
	require.Len(t, e.model.Requests(), 1, "no retry of the proxy's own: the client's SDK retries")

	// The client's retry answers the same message on the same branch.
	e.model.Reply(llmtest.Answer(`[1]`))
	resp, body = e.chat([]msg{{"user", "JSON."}}, serve.HeaderValidate, "json")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	got = e.chain(branch)
	require.Len(t, got, 3, "%v", got)
	assert.Equal(t, "message assistant: [1]", got[2])
}

func TestProxy_ValidatedPassThroughKey(t *testing.T) {
	e := newEnv(t)
	e.proxy.Config.Handler = mustHandler(t, e.repo, serve.WithOpenAI(e.model.URL(), ""), serve.WithAnthropic(e.model.AnthropicURL(), ""))
	e.model.Reply(llmtest.Answer(`{}`), llmtest.Answer(`{}`))
	resp, body := e.chat([]msg{{"user", "JSON."}}, serve.HeaderValidate, "json", "Authorization", "Bearer "+upstreamKey)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = e.post("/v1/messages", map[string]any{"model": "c", "max_tokens": 5, "messages": []msg{{"user", "JSON!"}}},
		serve.HeaderValidate, "json", "x-api-key", upstreamKey)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

	resp, body = e.chat([]msg{{"user", "Again."}}, serve.HeaderValidate, "json", "Authorization", "Bearer sk-client-wrong-key-0000")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, string(body))
	assert.NotContains(t, string(body), "sk-client-wrong-key-0000")
	for _, c := range e.all() {
		assert.NotContains(t, c.Text, "sk-client-wrong-key-0000")
		assert.NotContains(t, string(c.Meta), "sk-client-wrong-key-0000")
	}
}

func TestProxy_ValidatedClientDisconnectCancelsTheTurn(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.model.Reply(llmtest.Answer("not json"), llmtest.Reply{Content: `{}`, Hold: hold})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.proxy.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"JSON."}]}`))
	require.NoError(t, err)
	req.Header.Set(serve.HeaderValidate, "json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return len(e.model.Requests()) == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	require.Error(t, <-done)
	// The upstream's answer is never released: the turn ends only if the
	// client's disconnect cancelled the upstream call. (Released at once,
	// it could be recorded before the server noticed the disconnect.)
	t.Cleanup(func() { close(hold) })
	// Close waits for the handler: the turn has ended, recorded — the
	// failed attempt and its steering, and no accepted answer.
	e.proxy.Close()
	var steering bool
	for _, c := range e.all() {
		steering = steering || c.Kind == tract.KindSteering
		assert.NotEqual(t, "{}", c.Text, "the answer of the cancelled call is not recorded")
	}
	assert.True(t, steering, "the failed attempt's steering is recorded")
}

func TestProxy_ValidatedLLMJudgeAsksTheRequestsUpstream(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("Bonjour"), llmtest.Answer(`{"pass": false, "reason": "not English"}`),
		llmtest.Answer("Hello"), llmtest.Answer(`{"pass": true, "reason": "English"}`))
	resp, body := e.chat([]msg{{"user", "Greet me."}}, serve.HeaderValidate, "llm:the answer is in English")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "Hello", answerOf(t, body))
	assert.Equal(t, "2", resp.Header.Get(serve.HeaderAttempts))
	reqs := e.model.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, "gpt-test", reqs[1].Model, "the judge is the request's model")
	assert.Contains(t, reqs[1].LastMessage(), "Bonjour")
}
