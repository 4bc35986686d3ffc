package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/serve"
)

const upstreamKey = "sk-upstream-secret-123456"

// env is a repository, a scripted upstream and the proxy in front of it.
type env struct {
	t     *testing.T
	repo  *tract.Tract
	model *llmtest.Server
	proxy *httptest.Server
}

func newEnv(t *testing.T, opts ...serve.Option) *env {
	t.Helper()
	repo, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(t, err)
	t.Cleanup(func() {
		rep, err := repo.Fsck(context.Background())
		assert.NoError(t, err)
		if rep != nil {
			assert.True(t, rep.OK(), "fsck: %+v", rep)
		}
		repo.Close()
	})
	model := llmtest.NewServer(t, llmtest.WithAPIKey(upstreamKey))
	opts = append([]serve.Option{serve.WithOpenAI(model.URL(), upstreamKey), serve.WithAnthropic(model.AnthropicURL(), upstreamKey)}, opts...)
	h, err := serve.New(context.Background(), repo, opts...)
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	t.Cleanup(proxy.Close)
	return &env{t: t, repo: repo, model: model, proxy: proxy}
}

// msg is an OpenAI message.
type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// post sends a chat completion and returns the response, its body read.
func (e *env) post(path string, body any, header ...string) (*http.Response, []byte) {
	e.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(e.t, err)
	req, err := http.NewRequest(http.MethodPost, e.proxy.URL+path, bytes.NewReader(b))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp, data
}

func (e *env) chat(msgs []msg, header ...string) (*http.Response, []byte) {
	e.t.Helper()
	return e.post("/v1/chat/completions", map[string]any{"model": "gpt-test", "messages": msgs}, header...)
}

// answerOf returns a chat completion's answer text.
func answerOf(t *testing.T, body []byte) string {
	t.Helper()
	var doc struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), string(body))
	require.NotEmpty(t, doc.Choices, string(body))
	return doc.Choices[0].Message.Content
}

// all returns every commit of the repository.
func (e *env) all() []*tract.CommitInfo {
	e.t.Helper()
	h, err := e.repo.LogAll(context.Background())
	require.NoError(e.t, err)
	out := h.Commits
	for _, o := range h.Orphans {
		out = append(out, o.Commits...)
	}
	return out
}

// chain returns the texts of branch's first-parent chain, oldest first,
// as "kind role: text".
func (e *env) chain(branch string) []string {
	e.t.Helper()
	var out []string
	for ci, err := range e.repo.LogSeq(context.Background(), tract.LogFrom(branch)) {
		require.NoError(e.t, err)
		out = append([]string{fmt.Sprintf("%s %s: %s", ci.Kind, ci.Role, ci.Text)}, out...)
	}
	return out
}

// branches returns the repository's branch names.
func (e *env) branches() []string {
	e.t.Helper()
	bs, err := e.repo.Branches(context.Background())
	require.NoError(e.t, err)
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

func TestProxy_PlainRecordsMessagesAndAnswer(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Reply{Content: "Paris.", Usage: &llm.Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}})
	resp, body := e.chat([]msg{{"system", "Be brief."}, {"user", "Capital of France?"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "Paris.", answerOf(t, body))
	branch := resp.Header.Get(serve.HeaderBranch)
	require.True(t, strings.HasPrefix(branch, "serve/"), branch)
	assert.Equal(t, []string{"message system: Be brief.", "message user: Capital of France?", "message assistant: Paris."}, e.chain(branch))

	ci, err := e.repo.Show(context.Background(), resp.Header.Get(serve.HeaderCommit))
	require.NoError(t, err)
	assert.Equal(t, "gpt-test", ci.MetaValue("model"))
	assert.Equal(t, "openai", ci.MetaValue("provider"))
	assert.Equal(t, map[string]any{"prompt_tokens": 7.0, "completion_tokens": 2.0, "total_tokens": 9.0}, ci.MetaValue("usage"))

	// The upstream got tract's key, not the client's, and the body as sent.
	reqs := e.model.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Capital of France?", reqs[0].LastMessage())
	assert.NotContains(t, string(body), upstreamKey)
}

func TestProxy_ToolsPassThrough(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Reply{ToolCalls: []llm.ToolCall{llm.NewToolCall("call_1", "weather", `{"city":"Oslo"}`)}})
	e.model.Reply(llmtest.Answer("Cold."))
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "weather", "parameters": map[string]any{"type": "object"}}}}
	resp, body := e.post("/v1/chat/completions", map[string]any{"model": "m", "tools": tools,
		"messages": []msg{{"user", "Weather in Oslo?"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"weather"`)
	branch := resp.Header.Get(serve.HeaderBranch)

	msgs := []any{
		map[string]any{"role": "user", "content": "Weather in Oslo?"},
		map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function", "function": map[string]any{"name": "weather", "arguments": `{"city":"Oslo"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "-3C"},
	}
	resp, body = e.post("/v1/chat/completions", map[string]any{"model": "m", "tools": tools, "messages": msgs})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch), "the resent tool call extends the branch")
	assert.Len(t, e.chain(branch), 4)
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "weather", reqs[0].Tools[0].Name)
	compiled, err := e.repo.Compile(context.Background(), tract.CompileAt(branch))
	require.NoError(t, err)
	require.Len(t, compiled, 4)
	require.Len(t, compiled[1].ToolCalls, 1)
	assert.Equal(t, "call_1", compiled[1].ToolCalls[0].ID)
}

// sse reads a server-sent event stream's data lines.
func sse(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// streamRecord returns the branch and commit a streamed response names
// at its end, once as trailers and once as comment lines after the last
// event, failing the test unless both are there and agree.
func streamRecord(t *testing.T, resp *http.Response, body []byte) (branch, commit string) {
	t.Helper()
	assert.Empty(t, resp.Header.Get(serve.HeaderCommit), "the commit is not known when the headers go")
	branch, commit = resp.Trailer.Get(serve.HeaderBranch), resp.Trailer.Get(serve.HeaderCommit)
	require.NotEmpty(t, branch, "trailers: %v", resp.Trailer)
	require.Len(t, commit, 64)
	assert.True(t, bytes.HasSuffix(body, []byte("\n\n: "+serve.HeaderBranch+": "+branch+"\n: "+serve.HeaderCommit+": "+commit+"\n\n")),
		"the stream ends with the comment lines:\n%s", body)
	return branch, commit
}

func TestProxy_StreamPassesChunksAndRecordsAnswer(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("one two three four"))
	resp, body := e.post("/v1/chat/completions", map[string]any{"model": "m", "stream": true,
		"messages": []msg{{"user", "Count."}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "text/event-stream", strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	events := sse(t, body)
	require.Greater(t, len(events), 3, "the chunks pass as they came")
	assert.Equal(t, "[DONE]", events[len(events)-1])
	bs := e.branches()
	require.Len(t, bs, 1)
	assert.Equal(t, []string{"message user: Count.", "message assistant: one two three four"}, e.chain(bs[0]))
	branch, commit := streamRecord(t, resp, body)
	assert.Equal(t, bs[0], branch)
	tip, err := e.repo.Resolve(context.Background(), branch)
	require.NoError(t, err)
	assert.Equal(t, tip.String(), commit)
}

func TestProxy_Anthropic(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newEnv(t)
			e.model.Reply(llmtest.Reply{Content: "Bonjour.", ToolCalls: []llm.ToolCall{llm.NewToolCall("toolu_1", "greet", `{"to":"you"}`)}})
			e.model.Reply(llmtest.Answer("Done."))
			req := map[string]any{"model": "claude-test", "max_tokens": 100, "stream": stream, "system": "Be French.",
				"messages": []any{map[string]any{"role": "user", "content": "Hello"}}}
			resp, body := e.post("/v1/messages", req)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			bs := e.branches()
			require.Len(t, bs, 1)
			commit := resp.Header.Get(serve.HeaderCommit)
			if stream {
				var branch string
				branch, commit = streamRecord(t, resp, body)
				assert.Equal(t, bs[0], branch)
			}
			tip, err := e.repo.Resolve(context.Background(), bs[0])
			require.NoError(t, err)
			assert.Equal(t, tip.String(), commit)
			assert.Equal(t, []string{"message system: Be French.", "message user: Hello"}, e.chain(bs[0])[:2])
			require.Len(t, e.chain(bs[0]), 3)
			ci, err := e.repo.Show(context.Background(), bs[0])
			require.NoError(t, err)
			assert.Equal(t, "anthropic", ci.MetaValue("provider"))
			m, err := ci.Message()
			require.NoError(t, err)
			require.Len(t, m.ToolCalls, 1)
			assert.Equal(t, "toolu_1", m.ToolCalls[0].ID)
			assert.JSONEq(t, `{"to":"you"}`, m.ToolCalls[0].Function.Arguments)

			// The resent conversation, tool result included, extends it.
			req["messages"] = []any{
				map[string]any{"role": "user", "content": "Hello"},
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": "Bonjour."},
					map[string]any{"type": "tool_use", "id": "toolu_1", "name": "greet", "input": map[string]any{"to": "you"}}}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "greeted"}}},
			}
			resp, body = e.post("/v1/messages", req)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Equal(t, []string{bs[0]}, e.branches())
			got := e.chain(bs[0])
			require.Len(t, got, 5)
			assert.Equal(t, "message tool: greeted", got[3])
			assert.Equal(t, "message assistant: Done.", got[4])
		})
	}
}

func TestProxy_ConversationOverThreeCallsStoresEachMessageOnce(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("A3"))
	conv := []msg{{"system", "S"}, {"user", "U1"}}
	var branch string
	for i, want := range []string{"A1", "A2", "A3"} {
		resp, body := e.chat(conv)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		got := answerOf(t, body)
		require.Equal(t, want, got)
		if i == 0 {
			branch = resp.Header.Get(serve.HeaderBranch)
		}
		assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
		conv = append(conv, msg{"assistant", got}, msg{"user", fmt.Sprintf("U%d", i+2)})
	}
	assert.Equal(t, []string{"message system: S", "message user: U1", "message assistant: A1", "message user: U2",
		"message assistant: A2", "message user: U3", "message assistant: A3"}, e.chain(branch))
	assert.Len(t, e.all(), 7, "no message stored twice")
	assert.Equal(t, []string{branch}, e.branches())
}

func TestProxy_DivergingConversationForks(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("B2"), llmtest.Answer("A2 again"))
	conv := []msg{{"user", "U1"}}
	resp, _ := e.chat(conv)
	main := resp.Header.Get(serve.HeaderBranch)
	conv = append(conv, msg{"assistant", "A1"}, msg{"user", "U2"})
	e.chat(conv)

	// Another second question: a fork after A1.
	resp, _ = e.chat([]msg{{"user", "U1"}, {"assistant", "A1"}, {"user", "V2"}})
	fork := resp.Header.Get(serve.HeaderBranch)
	require.NotEqual(t, main, fork)
	assert.Equal(t, []string{"message user: U1", "message assistant: A1", "message user: V2", "message assistant: B2"}, e.chain(fork))
	assert.Len(t, e.chain(main), 4)
	assert.Len(t, e.all(), 6, "the fork shares U1 and A1")
	forkBase, err := e.repo.Resolve(context.Background(), fork+"~2")
	require.NoError(t, err)
	mainBase, err := e.repo.Resolve(context.Background(), main+"~2")
	require.NoError(t, err)
	assert.Equal(t, mainBase, forkBase)

	// The same request again (a regenerate) answers beside the first answer.
	resp, _ = e.chat(conv)
	again := resp.Header.Get(serve.HeaderBranch)
	assert.NotEqual(t, main, again)
	assert.Equal(t, e.chain(main)[:3], e.chain(again)[:3])
	assert.Equal(t, "message assistant: A2 again", e.chain(again)[3])
	assert.Len(t, e.all(), 7)
}

func TestProxy_NamedBranch(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("B2"))
	resp, _ := e.chat([]msg{{"user", "U1"}}, serve.HeaderBranch, "agent/one")
	assert.Equal(t, "agent/one", resp.Header.Get(serve.HeaderBranch))
	resp, _ = e.chat([]msg{{"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}}, serve.HeaderBranch, "agent/one")
	assert.Equal(t, "agent/one", resp.Header.Get(serve.HeaderBranch))
	assert.Len(t, e.chain("agent/one"), 4)
	// Diverging on a named branch forks NAME-HASH, and leaves NAME alone.
	resp, _ = e.chat([]msg{{"user", "U1"}, {"assistant", "A1"}, {"user", "V2"}}, serve.HeaderBranch, "agent/one")
	fork := resp.Header.Get(serve.HeaderBranch)
	assert.True(t, strings.HasPrefix(fork, "agent/one-"), fork)
	assert.Len(t, e.chain("agent/one"), 4)
	assert.Len(t, e.chain(fork), 4)
	assert.Len(t, e.all(), 6)

	resp, body := e.chat([]msg{{"user", "x"}}, serve.HeaderBranch, "bad..name")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "X-Tract-Branch")
}

func TestProxy_RestartReadsConversationsBack(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"))
	resp, _ := e.chat([]msg{{"user", "U1"}})
	branch := resp.Header.Get(serve.HeaderBranch)
	// A new Handler on the same repository continues the conversation.
	h, err := serve.New(context.Background(), e.repo, serve.WithOpenAI(e.model.URL(), upstreamKey))
	require.NoError(t, err)
	e.proxy.Config.Handler = h
	resp, _ = e.chat([]msg{{"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}})
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	assert.Len(t, e.all(), 4)
}

func TestProxy_UpstreamFailureLeavesErrorCommit(t *testing.T) {
	t.Run("500", func(t *testing.T) {
		e := newEnv(t)
		e.model.Reply(llmtest.Reply{Status: 500, Message: "boom"}, llmtest.Answer("ok"))
		resp, body := e.chat([]msg{{"user", "U1"}})
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		assert.Contains(t, string(body), "boom")
		branch := resp.Header.Get(serve.HeaderBranch)
		got := e.chain(branch)
		require.Len(t, got, 2)
		assert.Equal(t, "error assistant: model call failed: the upstream answered 500: boom", got[1])
		// The client's retry goes on after the error, U1 not stored again.
		resp, _ = e.chat([]msg{{"user", "U1"}})
		assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
		assert.Len(t, e.chain(branch), 3)
		assert.Len(t, e.all(), 3)
	})
	t.Run("401 echoing the key", func(t *testing.T) {
		e := newEnv(t, serve.WithOpenAI("", "")) // pass-through
		e.proxy.Config.Handler = mustHandler(t, e.repo, serve.WithOpenAI(e.model.URL(), ""))
		resp, body := e.chat([]msg{{"user", "U1"}}, "Authorization", "Bearer sk-client-wrong-key-0000")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.NotContains(t, string(body), "sk-client-wrong-key-0000")
		for _, c := range e.all() {
			assert.NotContains(t, c.Text, "sk-client-wrong-key-0000")
			assert.NotContains(t, string(c.Meta), "sk-client-wrong-key-0000")
		}
	})
	t.Run("refused", func(t *testing.T) {
		e := newEnv(t)
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		e.proxy.Config.Handler = mustHandler(t, e.repo, serve.WithOpenAI(dead.URL+"/v1", upstreamKey))
		resp, body := e.chat([]msg{{"user", "U1"}})
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
		assert.Contains(t, string(body), `"type":"server_error"`)
		assert.Contains(t, string(body), "cannot be reached")
		got := e.chain(resp.Header.Get(serve.HeaderBranch))
		require.Len(t, got, 2)
		assert.Contains(t, got[1], "error assistant: model call failed: the upstream cannot be reached")
	})
	t.Run("timeout", func(t *testing.T) {
		e := newEnv(t)
		hold := make(chan struct{})
		defer close(hold)
		e.model.Reply(llmtest.Reply{Content: "late", Hold: hold})
		e.proxy.Config.Handler = mustHandler(t, e.repo, serve.WithOpenAI(e.model.URL(), upstreamKey), serve.WithTimeout(20*time.Millisecond))
		resp, body := e.chat([]msg{{"user", "U1"}})
		assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
		got := e.chain(resp.Header.Get(serve.HeaderBranch))
		require.Len(t, got, 2)
		assert.Contains(t, got[1], "the upstream sent nothing for 20ms")
	})
	t.Run("anthropic shape", func(t *testing.T) {
		e := newEnv(t)
		e.model.Reply(llmtest.Reply{Status: 529, Message: "Overloaded"})
		resp, body := e.post("/v1/messages", map[string]any{"model": "claude-x", "max_tokens": 10,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		assert.Equal(t, 529, resp.StatusCode)
		assert.Contains(t, string(body), `"type":"error"`)
	})
}

func mustHandler(t *testing.T, repo *tract.Tract, opts ...serve.Option) *serve.Handler {
	t.Helper()
	h, err := serve.New(context.Background(), repo, opts...)
	require.NoError(t, err)
	return h
}

func TestProxy_ClientDisconnectCancelsUpstream(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newEnv(t)
			hold := make(chan struct{})
			reply := llmtest.Reply{Content: "never seen", Hold: hold}
			if stream {
				reply = llmtest.Reply{Content: "one two three four five six", ChunkDelay: time.Hour}
			}
			e.model.Reply(reply)
			ctx, cancel := context.WithCancel(context.Background())
			b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "messages": []msg{{"user", "U1"}}})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.proxy.URL+"/v1/chat/completions", bytes.NewReader(b))
			done := make(chan struct{})
			go func() {
				defer close(done)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			require.Eventually(t, func() bool { return len(e.model.Requests()) == 1 }, 5*time.Second, time.Millisecond)
			cancel()
			<-done
			// The handler records the cancellation, and no half answer.
			require.Eventually(t, func() bool { return len(e.all()) == 2 }, 5*time.Second, time.Millisecond)
			bs := e.branches()
			require.Len(t, bs, 1)
			got := e.chain(bs[0])
			assert.Equal(t, "error assistant: model call failed: cancelled: the client disconnected", got[1])
			close(hold)
		})
	}
}

func TestProxy_BadInputWritesNothing(t *testing.T) {
	cases := []struct {
		name   string
		path   string
		body   string
		header []string
		status int
		want   string
	}{
		{"malformed", "/v1/chat/completions", `{"messages": [`, nil, 400, "not a chat-completions request"},
		{"no messages", "/v1/chat/completions", `{"model":"m","messages":[]}`, nil, 400, "no messages"},
		{"bad role", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"x"}]}`, nil, 400, `role \"wizard\"`},
		{"malformed anthropic", "/v1/messages", `[]`, nil, 400, `"type":"invalid_request_error"`},
		{"oversized", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 300) + `"}]}`, nil, 413, "larger than 200 bytes"},
		{"wrong token", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, []string{"Authorization", "Bearer nope"}, 401, "requires its token"},
		{"no token", "/v1/messages", `{"messages":[{"role":"user","content":"x"}]}`, nil, 401, `"type":"authentication_error"`},
		{"unknown route", "/v1/embeddings", `{}`, []string{"Authorization", "Bearer tok"}, 404, "no route POST /v1/embeddings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, serve.WithMaxBodySize(200), serve.WithToken("tok"))
			req, _ := http.NewRequest(http.MethodPost, e.proxy.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer tok")
			for i := 0; i+1 < len(c.header); i += 2 {
				req.Header.Set(c.header[i], c.header[i+1])
			}
			if c.header == nil && c.name == "no token" {
				req.Header.Del("Authorization")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, c.status, resp.StatusCode, string(body))
			assert.Contains(t, string(body), c.want)
			assert.Empty(t, e.all())
			assert.Empty(t, e.model.Requests())
		})
	}
}

func TestProxy_TokenGuardsEveryRoute(t *testing.T) {
	e := newEnv(t, serve.WithToken("tok"))
	e.model.Models("gpt-a")
	e.model.Reply(llmtest.Answer("hi"), llmtest.Answer("again"))
	resp, _ := e.chat([]msg{{"user", "U1"}}, "Authorization", "Bearer tok")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = e.chat([]msg{{"user", "U1"}}, "x-api-key", "tok") // as the Anthropic SDKs send it
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = e.chat([]msg{{"user", "U1"}}, "x-api-key", "nope")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodGet, e.proxy.URL+"/v1/models", nil)
	r2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, r2.StatusCode)
	req.Header.Set("Authorization", "Bearer tok")
	r3, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(r3.Body)
	r3.Body.Close()
	assert.Equal(t, http.StatusOK, r3.StatusCode)
	assert.Contains(t, string(body), "gpt-a")
}

func TestProxy_ConcurrentConversationsLoseNothing(t *testing.T) {
	e := newEnv(t)
	e.model.Otherwise(llmtest.Answer("ok"))
	const convs, turns = 8, 3
	var wg sync.WaitGroup
	commits := make(chan string, convs*turns*2)
	for c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := []msg{{"user", fmt.Sprintf("conversation %d", c%4)}} // two goroutines per conversation
			stream := c%2 == 1                                           // half the clients stream
			for i := range turns {
				b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "messages": conv})
				resp, err := http.Post(e.proxy.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
				if !assert.NoError(t, err) {
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				if !stream {
					commits <- resp.Header.Get(serve.HeaderCommit)
				}
				conv = append(conv, msg{"assistant", "ok"}, msg{"user", fmt.Sprintf("turn %d", i)})
			}
		}()
	}
	wg.Wait()
	close(commits)
	tips := map[string]bool{}
	for _, b := range e.branches() {
		h, err := e.repo.Resolve(context.Background(), b)
		require.NoError(t, err)
		tips[h.String()] = true
	}
	n := 0
	for c := range commits {
		n++
		ci, err := e.repo.Show(context.Background(), c)
		require.NoError(t, err, "every answer is recorded")
		assert.Equal(t, "ok", ci.Text)
	}
	assert.Equal(t, convs*turns/2, n)
	answers := 0
	for _, c := range e.all() {
		if c.Role == tract.RoleAssistant {
			answers++
		}
	}
	assert.Equal(t, convs*turns, answers, "every answer, streamed or not, is recorded")
	// Every answer is on a branch: no commit was left off.
	onBranch := map[string]bool{}
	for _, b := range e.branches() {
		for ci, err := range e.repo.LogSeq(context.Background(), tract.LogFrom(b)) {
			require.NoError(t, err)
			onBranch[ci.Hash.String()] = true
		}
	}
	for _, c := range e.all() {
		assert.True(t, onBranch[c.Hash.String()], "commit %s off every branch", c.Hash.Short())
	}
	// Each user message of a conversation is stored once: 4 first
	// messages, each resent by two goroutines.
	firsts := 0
	for _, c := range e.all() {
		if strings.HasPrefix(c.Text, "conversation ") {
			firsts++
		}
	}
	assert.Equal(t, 4, firsts)
}

// An answer over the message size limit reaches the client but is
// recorded as refused, as a validated turn refuses it.
func TestProxy_AnswerOverTheLimitIsRecordedAsRefused(t *testing.T) {
	repo, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), tract.WithNoSync(), tract.WithLimits(tract.Limits{MessageSize: 300}))
	require.NoError(t, err)
	defer repo.Close()
	model := llmtest.NewServer(t)
	model.Reply(llmtest.Answer(strings.Repeat("long ", 100)))
	proxy := httptest.NewServer(mustHandler(t, repo, serve.WithOpenAI(model.URL(), "k")))
	defer proxy.Close()
	e := &env{t: t, repo: repo, model: model, proxy: proxy}
	resp, body := e.chat([]msg{{"user", "U1"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, answerOf(t, body), "long long")
	got := e.chain(resp.Header.Get(serve.HeaderBranch))
	require.Len(t, got, 2)
	assert.Contains(t, got[1], "error assistant: model answer refused: the answer is 500 B, over the message size limit (300 B)")
}

// A commit the index holds, erased by a hard reset, is noticed: the
// conversation is matched again against what the repository holds.
func TestProxy_ErasedCommitsAreNoticed(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"))
	resp, _ := e.chat([]msg{{"user", "U1"}})
	branch := resp.Header.Get(serve.HeaderBranch)
	_, err := e.repo.OnBranch(branch).Reset(context.Background(), branch+"~1", tract.Hard)
	require.NoError(t, err)
	resp, body := e.chat([]msg{{"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	assert.Equal(t, []string{"message user: U1", "message assistant: A1", "message user: U2", "message assistant: A2"}, e.chain(branch))
}

func TestProxy_ModelsPassThroughToEitherWire(t *testing.T) {
	e := newEnv(t)
	e.model.Models("model-a", "model-b")
	for _, header := range [][]string{nil, {"anthropic-version", "2023-06-01"}} {
		req, _ := http.NewRequest(http.MethodGet, e.proxy.URL+"/v1/models", nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Contains(t, string(body), "model-b")
	}
	assert.Empty(t, e.all(), "listing models records nothing")

	req, _ := http.NewRequest(http.MethodPost, e.proxy.URL+"/v1/models", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, http.MethodGet, resp.Header.Get("Allow"))
}

// An upstream that stops in the middle of its answer is cut off after
// the timeout, and the call recorded as failed, streamed or not.
func TestProxy_UpstreamStallingMidAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n")
				} else {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"choices":[`)
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			defer stalled.Close()
			e := newEnv(t)
			e.proxy.Config.Handler = mustHandler(t, e.repo, serve.WithOpenAI(stalled.URL+"/v1", "k"), serve.WithTimeout(20*time.Millisecond))
			resp, body := e.post("/v1/chat/completions", map[string]any{"model": "m", "stream": stream, "messages": []msg{{"user", "U1"}}})
			if stream {
				assert.Equal(t, http.StatusOK, resp.StatusCode, "the stream had begun")
				assert.Contains(t, string(body), "Hel")
				_, commit := streamRecord(t, resp, body)
				ci, err := e.repo.Show(context.Background(), commit)
				require.NoError(t, err)
				assert.Equal(t, tract.KindError, ci.Kind, "the trailer names the error commit")
			} else {
				assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
			}
			bs := e.branches()
			require.Len(t, bs, 1)
			got := e.chain(bs[0])
			require.Len(t, got, 2)
			assert.Contains(t, got[1], "error assistant: model call failed: the upstream")
			assert.Contains(t, got[1], "20ms")
		})
	}
}

// A message resent in other bytes (members reordered, spaced, with
// members of no weight) is the same message: the conversation extends its
// branch, nothing stored twice.
func TestProxy_ResentInOtherBytesIsTheSameMessage(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("A3"))
	send := func(body string) *http.Response {
		resp, err := http.Post(e.proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
		return resp
	}
	branch := send(`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"}]}`).Header.Get(serve.HeaderBranch)
	resp := send(`{"messages": [ {"content": "S", "role": "system"},
		{"content":"U1",  "role":"user"},
		{"role":"assistant","content":"A1","refusal":null},
		{"role":"user","content":[{"type":"text","text":"U2"}]}], "model": "m"}`)
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	resp = send(`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"assistant","content":"A1"},` +
		`{"role":"user","content":[{"type":"text","text":"U2"}]},{"role":"assistant","content":"A2"},{"role":"user","content":"U3"}]}`)
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	assert.Len(t, e.chain(branch), 7)
	assert.Len(t, e.all(), 7, "no message stored twice")
}

// Messages the Handler knows by their bytes but the repository no longer
// holds (erased by a hard reset) are decoded and recorded again.
func TestProxy_KnownMessagesErasedAreRecordedAgain(t *testing.T) {
	e := newEnv(t)
	e.model.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("A2 again"))
	resp, _ := e.chat([]msg{{"system", "S"}, {"user", "U1"}})
	branch := resp.Header.Get(serve.HeaderBranch)
	conv := []msg{{"system", "S"}, {"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}}
	e.chat(conv)
	require.Len(t, e.chain(branch), 5)
	// Back to U1: A1, U2 and A2 are erased.
	_, err := e.repo.OnBranch(branch).Reset(context.Background(), branch+"~3", tract.Hard)
	require.NoError(t, err)
	resp, body := e.chat(conv)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, branch, resp.Header.Get(serve.HeaderBranch))
	assert.Equal(t, []string{"message system: S", "message user: U1", "message assistant: A1", "message user: U2",
		"message assistant: A2 again"}, e.chain(branch))
}

// The Handler's own upstream client keeps its connections for calls that
// run at once: a second round of concurrent calls dials none (Go's
// default client keeps 2 a host, and would dial for most of them).
func TestProxy_UpstreamConnectionsAreKept(t *testing.T) {
	var dialed atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	repo, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(t, err)
	defer repo.Close()
	proxy := httptest.NewServer(mustHandler(t, repo, serve.WithOpenAI(up.URL+"/v1", "k")))
	defer proxy.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	const n = 16
	round := func(r int) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				b, _ := json.Marshal(map[string]any{"model": "m", "messages": []msg{{"user", fmt.Sprintf("round %d, call %d", r, i)}}})
				resp, err := hc.Post(proxy.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
				if assert.NoError(t, err) {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					assert.Equal(t, http.StatusOK, resp.StatusCode)
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	for r := range 3 {
		round(r)
	}
	// At most n at once, each kept: about n dialed (a call may dial just
	// before another's connection comes back: a few more).
	assert.LessOrEqual(t, dialed.Load(), int64(n+n/4), "connections dialed for 3 rounds of %d calls at once", n)
}
