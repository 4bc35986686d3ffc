package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// newAnthropic returns an Anthropic client for srv that records its waits.
func newAnthropic(t *testing.T, srv *llmtest.Server, opts ...llm.Option) (*llm.Anthropic, *sleeps) {
	t.Helper()
	s := &sleeps{}
	all := append([]llm.Option{
		llm.WithBaseURL(srv.AnthropicURL()),
		llm.WithAPIKey(testKey),
		llm.WithModel("claude-test"),
		llm.WithSleep(s.sleep),
		llm.WithJitter(func(ceiling time.Duration) time.Duration { return ceiling }),
	}, opts...)
	c, err := llm.NewAnthropic(all...)
	require.NoError(t, err)
	return c, s
}

func TestAnthropic_Complete(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithAPIKey(testKey))
			srv.Reply(llmtest.Answer("Hello there, friend."))
			c, _ := newAnthropic(t, srv)
			var deltas []string
			req := llm.Request{Messages: userMsg("Say hello.")}
			if stream {
				req.OnDelta = func(d string) { deltas = append(deltas, d) }
			}

			resp, err := c.Complete(context.Background(), req)
			require.NoError(t, err)

			assert.Equal(t, "Hello there, friend.", resp.Content)
			assert.Equal(t, "claude-test", resp.Model)
			assert.Equal(t, "end_turn", resp.FinishReason)
			assert.Positive(t, resp.Usage.PromptTokens)
			assert.Positive(t, resp.Usage.CompletionTokens)
			assert.Equal(t, resp.Usage.PromptTokens+resp.Usage.CompletionTokens, resp.Usage.TotalTokens)
			if stream {
				assert.Equal(t, []string{"Hello ", "there, ", "friend."}, deltas)
			}
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			r := reqs[0]
			assert.Equal(t, "/v1/messages", r.Path)
			assert.Equal(t, llmtest.WireAnthropic, r.Wire)
			assert.Equal(t, llm.AnthropicVersion, r.Header.Get("anthropic-version"))
			assert.Equal(t, "[REDACTED]", r.Header.Get("x-api-key"), "the key went in x-api-key")
			assert.Empty(t, r.Header.Get("Authorization"))
			assert.Equal(t, llm.DefaultAnthropicMaxTokens, r.MaxTokens, "max_tokens is always sent")
			assert.Equal(t, stream, r.Stream)
			assert.Equal(t, "Be brief.", r.System, "the system message is the top-level system field")
			assert.Equal(t, []llm.Message{{Role: "user", Content: "Say hello."}}, r.Messages)
		})
	}
}

func TestAnthropic_MessagesMergedAndSystemLifted(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("ok"))
	c, _ := newAnthropic(t, srv, llm.WithMaxTokens(100))

	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "one"},
		{Role: "user", Content: "two"},
		{Role: "assistant", Content: "a"},
		{Role: "system", Content: "Answer in French."},
		{Role: "assistant", Content: "b"},
		{Role: "user", Content: "three"},
	}})
	require.NoError(t, err)

	r := srv.Requests()[0]
	assert.Equal(t, "Be brief.\n\nAnswer in French.", r.System)
	assert.Equal(t, []llm.Message{
		{Role: "user", Content: "one\n\ntwo"},
		{Role: "assistant", Content: "a\n\nb"},
		{Role: "user", Content: "three"},
	}, r.Messages)
	assert.Equal(t, 100, r.MaxTokens)
}

func TestAnthropic_UsageWithCache(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Reply{Content: "cached", Usage: &llm.Usage{
			PromptTokens: 110, CompletionTokens: 7, TotalTokens: 117, CacheCreationTokens: 40, CacheReadTokens: 60}})
		c, _ := newAnthropic(t, srv)
		req := llm.Request{Messages: userMsg("hi")}
		if stream {
			req.OnDelta = func(string) {}
		}
		resp, err := c.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, llm.Usage{PromptTokens: 110, CompletionTokens: 7, TotalTokens: 117, CacheCreationTokens: 40, CacheReadTokens: 60},
			resp.Usage, "stream %v: input, cache writes and cache reads make the prompt", stream)
	}
}

func TestAnthropic_OverloadedThenSuccess(t *testing.T) {
	srv := llmtest.NewServer(t)
	overloaded := llmtest.Overloaded()
	overloaded.Header = http.Header{"Retry-After": {"3"}}
	srv.Reply(overloaded, llmtest.Overloaded(), llmtest.Answer("finally"))
	var retries []llm.RetryEvent
	c, sl := newAnthropic(t, srv, llm.WithOnRetry(func(ev llm.RetryEvent) { retries = append(retries, ev) }))

	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
	require.NoError(t, err)
	assert.Equal(t, "finally", resp.Content)
	assert.Equal(t, []time.Duration{3 * time.Second, 1 * time.Second}, sl.all(), "retry-after honoured, then backoff")
	require.Len(t, retries, 2)
	var se *llm.ServerError
	require.ErrorAs(t, retries[0].Err, &se)
	assert.Equal(t, 529, se.StatusCode)
	assert.Equal(t, "overloaded_error", se.Type)
}

func TestAnthropic_ErrorEventMidStream(t *testing.T) {
	t.Run("after text: not retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.StreamError("one two three four", "overloaded_error", "Overloaded"))
		c, sl := newAnthropic(t, srv)
		var got strings.Builder
		_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), OnDelta: func(d string) { got.WriteString(d) }})
		var se *llm.ServerError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "overloaded_error", se.Type)
		assert.Contains(t, err.Error(), "Overloaded")
		assert.Equal(t, "one two ", got.String())
		assert.Empty(t, sl.all(), "text was delivered: no retry")
	})
	t.Run("before text: retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.StreamError("x", "overloaded_error", "Overloaded"), llmtest.Answer("fine"))
		c, _ := newAnthropic(t, srv)
		resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), OnDelta: func(string) {}})
		require.NoError(t, err)
		assert.Equal(t, "fine", resp.Content)
	})
	t.Run("invalid request: typed, not retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.StreamError("x", "invalid_request_error", "bad"))
		c, sl := newAnthropic(t, srv)
		_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), OnDelta: func(string) {}})
		var apiErr *llm.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		assert.Empty(t, sl.all())
	})
}

func TestAnthropic_Errors(t *testing.T) {
	cases := []struct {
		name     string
		reply    llmtest.Reply
		check    func(t *testing.T, err error)
		attempts int
	}{
		{"401 echoing the key", llmtest.Unauthorized(), func(t *testing.T, err error) {
			var ae *llm.AuthError
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, err.Error(), "check ANTHROPIC_API_KEY")
			assert.Contains(t, err.Error(), "[REDACTED]")
		}, 1},
		{"400", llmtest.Error(http.StatusBadRequest, "messages: text content blocks must be non-empty"), func(t *testing.T, err error) {
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, "invalid_request_error", apiErr.Type)
			assert.Contains(t, err.Error(), "text content blocks must be non-empty")
		}, 1},
		{"413", llmtest.Error(http.StatusRequestEntityTooLarge, "Request exceeds the maximum allowed number of bytes."), func(t *testing.T, err error) {
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, "request_too_large", apiErr.Type)
		}, 1},
		{"context length", llmtest.Error(http.StatusBadRequest, "prompt is too long: 210000 tokens > 200000 maximum"), func(t *testing.T, err error) {
			var cl *llm.ContextLengthError
			require.ErrorAs(t, err, &cl)
		}, 1},
		{"429 after every retry", llmtest.RateLimited(time.Second), func(t *testing.T, err error) {
			var rl *llm.RateLimitError
			require.ErrorAs(t, err, &rl)
			assert.Equal(t, "rate_limit_error", rl.Type)
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithoutVerify())
			srv.Otherwise(tc.reply)
			c, _ := newAnthropic(t, srv, llm.WithMaxRetries(2))
			_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), testKey)
			tc.check(t, err)
			assert.Len(t, srv.Requests(), tc.attempts)
		})
	}
}

func TestAnthropic_Config(t *testing.T) {
	_, err := llm.NewAnthropicFromEnv(func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no API key: set ANTHROPIC_API_KEY")
	assert.Contains(t, err.Error(), "no model given")

	env := map[string]string{llm.EnvAnthropicAPIKey: "k", llm.EnvAnthropicBaseURL: "http://proxy.local/v1/"}
	c, err := llm.NewAnthropicFromEnv(func(k string) string { return env[k] }, llm.WithModel("claude-x"))
	require.NoError(t, err)
	assert.Equal(t, "http://proxy.local/v1", c.BaseURL(), "a base URL ending in /v1 is not given a second one")
	assert.Equal(t, "anthropic", c.Provider())
	assert.Equal(t, "claude-x", c.DefaultModel())
}

func TestChooseProvider(t *testing.T) {
	cases := []struct {
		provider, model, want string
	}{
		{"", "", "openai"},
		{"", "gpt-4o", "openai"},
		{"", "claude-sonnet-4-5", "anthropic"},
		{"", " Claude-3-haiku ", "anthropic"},
		{"anthropic", "gpt-4o", "anthropic"},
		{"openai", "claude-x", "openai"},
		{" Anthropic ", "", "anthropic"},
		{"OPENAI", "", "openai"},
	}
	for _, tc := range cases {
		got, err := llm.ChooseProvider(tc.provider, tc.model)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
	_, err := llm.ChooseProvider(" gemini ", "claude-x")
	var ce *llm.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "provider", ce.Setting)
	assert.Equal(t, `unknown provider "gemini": want openai or anthropic`, err.Error())
}

func TestNewFromEnv_PicksTheClientOfTheProvider(t *testing.T) {
	env := map[string]string{llm.EnvAnthropicAPIKey: "a", llm.EnvAPIKey: "o"}
	getenv := func(k string) string { return env[k] }
	c, err := llm.NewFromEnv(getenv, "", llm.WithModel("claude-opus-4"))
	require.NoError(t, err)
	assert.IsType(t, &llm.Anthropic{}, c)
	c, err = llm.NewFromEnv(getenv, "", llm.WithModel("gpt-4o"))
	require.NoError(t, err)
	assert.IsType(t, &llm.OpenAI{}, c)
	c, err = llm.NewFromEnv(getenv, "openai", llm.WithModel("claude-opus-4"))
	require.NoError(t, err)
	assert.IsType(t, &llm.OpenAI{}, c, "the provider named wins over the model's name")
	_, err = llm.NewFromEnv(getenv, "bard", llm.WithModel("gpt-4o"))
	var ce *llm.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "provider", ce.Setting)
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`

func TestStructured_SchemaSent(t *testing.T) {
	schema, err := llm.NewSchema("testdata/person.schema.json", []byte(personSchema))
	require.NoError(t, err)
	assert.Equal(t, "person_schema", schema.Name)
	assert.True(t, schema.Strict)

	t.Run("openai", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Answer(`{"name":"Ada"}`))
		c, _ := newClient(t, srv.URL())
		resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), Schema: schema})
		require.NoError(t, err)
		assert.Equal(t, llm.StructuredSent, resp.Structured)
		r := srv.Requests()[0]
		assert.Equal(t, "person_schema", r.SchemaName)
		assert.JSONEq(t, personSchema, string(r.Schema))
		assert.True(t, r.Strict)
		var body struct {
			ResponseFormat struct{ Type string } `json:"response_format"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		assert.Equal(t, "json_schema", body.ResponseFormat.Type)
	})
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "anthropic json", true: "anthropic stream"}[stream], func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer(`{"name": "Ada"}`))
			c, _ := newAnthropic(t, srv)
			req := llm.Request{Messages: userMsg("hi"), Schema: schema}
			var streamed strings.Builder
			if stream {
				req.OnDelta = func(d string) { streamed.WriteString(d) }
			}
			resp, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.JSONEq(t, `{"name":"Ada"}`, resp.Content, "the forced tool's input is the answer")
			assert.Equal(t, "tool_use", resp.FinishReason)
			assert.Equal(t, llm.StructuredSent, resp.Structured)
			if stream {
				assert.Equal(t, resp.Content, streamed.String())
			}
			r := srv.Requests()[0]
			assert.Equal(t, "person_schema", r.SchemaName, "tool_choice forces the schema's tool")
			assert.JSONEq(t, personSchema, string(r.Schema))
		})
	}
}

func TestStructured_AnthropicTakesOnlyObjects(t *testing.T) {
	schema, err := llm.NewSchema("list.json", []byte(`{"type":"array","items":{"type":"string"}}`))
	require.NoError(t, err)
	assert.False(t, schema.Strict, "strict mode wants an object at the root")
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer(`["a"]`))
	c, _ := newAnthropic(t, srv)
	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), Schema: schema})
	require.NoError(t, err)
	assert.Equal(t, llm.StructuredUnsupported, resp.Structured)
	assert.Empty(t, srv.Requests()[0].SchemaName)
}

func TestStructured_RefusedSchemaRetriedWithout(t *testing.T) {
	schema, err := llm.NewSchema("p.json", []byte(personSchema))
	require.NoError(t, err)
	cases := []struct {
		name    string
		refusal llmtest.Reply
		anth    bool
	}{
		{"openai", llmtest.Error(http.StatusBadRequest, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."), false},
		{"anthropic", llmtest.Error(http.StatusBadRequest, "tools.0.input_schema: JSON schema is invalid"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Reply(tc.refusal, llmtest.Answer(`{"name":"Ada"}`))
			var c llm.Client
			if tc.anth {
				c, _ = newAnthropic(t, srv)
			} else {
				c, _ = newClient(t, srv.URL())
			}
			resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), Schema: schema})
			require.NoError(t, err)
			assert.Equal(t, llm.StructuredRejected, resp.Structured)
			assert.NotEmpty(t, resp.StructuredError)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.NotEmpty(t, reqs[0].SchemaName)
			assert.Empty(t, reqs[1].SchemaName, "the second request goes without the schema")
		})
	}
	t.Run("other 400s are not retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Reply(llmtest.Error(http.StatusBadRequest, "temperature: out of range"))
		c, _ := newClient(t, srv.URL())
		_, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi"), Schema: schema})
		require.Error(t, err)
		assert.Len(t, srv.Requests(), 1)
	})
}

func TestListModels(t *testing.T) {
	ids := make([]string, 2500) // three pages for Anthropic
	for i := range ids {
		ids[i] = "model-" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "-" + time.Duration(i).String()
	}
	srv := llmtest.NewServer(t, llmtest.WithAPIKey(testKey)).Models(ids...)
	oc, _ := newClient(t, srv.URL(), llm.WithAPIKey(testKey))
	ac, _ := newAnthropic(t, srv)
	for name, c := range map[string]llm.ModelLister{"openai": oc, "anthropic": ac} {
		got, err := c.ListModels(context.Background())
		require.NoError(t, err, name)
		require.Len(t, got, len(ids), name)
		assert.Equal(t, ids[0], got[0].ID)
		assert.Equal(t, ids[len(ids)-1], got[len(got)-1].ID)
		assert.Contains(t, string(got[0].Record), `"id"`)
	}

	bad, _ := newAnthropic(t, srv, llm.WithAPIKey("sk-wrong-key-123456"))
	_, err := bad.ListModels(context.Background())
	var ae *llm.AuthError
	require.ErrorAs(t, err, &ae)
	assert.NotContains(t, err.Error(), "sk-wrong-key-123456")

	_, err = llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.ModelOptional())
	assert.NoError(t, err, "a client that only lists models needs no model")
}

func TestModelInfo_MarshalJSONIsTheServersRecord(t *testing.T) {
	b, err := json.Marshal([]llm.ModelInfo{{ID: "a", Record: json.RawMessage(`{"id":"a","owned_by":"x"}`)}, {ID: "b"}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"id":"a","owned_by":"x"},{"id":"b"}]`, string(b))
}
