package llm_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// The constructors that read the environment read the provider's own
// variables (the API key and the base URL, as the official SDKs do) and
// nothing else: the model, the backoff and the provider are the
// program's to give as arguments and options. tract's variables, set to
// values that would change the outcome, make no difference.
func TestFromEnv_ReadsOnlyTheProvidersVariables(t *testing.T) {
	type build func(getenv func(string) string, opts ...llm.Option) (llm.Remote, error)
	for _, tc := range []struct {
		name  string
		build build
		// own are the variables the constructor may read.
		own  []string
		want llm.Remote // the type of client it builds for the model "gpt-x"
	}{
		{"NewOpenAIFromEnv", func(getenv func(string) string, opts ...llm.Option) (llm.Remote, error) {
			return llm.NewOpenAIFromEnv(getenv, opts...)
		}, []string{llm.EnvAPIKey, llm.EnvBaseURL}, &llm.OpenAI{}},
		{"NewAnthropicFromEnv", func(getenv func(string) string, opts ...llm.Option) (llm.Remote, error) {
			return llm.NewAnthropicFromEnv(getenv, opts...)
		}, []string{llm.EnvAnthropicAPIKey, llm.EnvAnthropicBaseURL}, &llm.Anthropic{}},
		{"NewFromEnv", func(getenv func(string) string, opts ...llm.Option) (llm.Remote, error) {
			return llm.NewFromEnv(getenv, "", opts...)
		}, []string{llm.EnvAPIKey, llm.EnvBaseURL, llm.EnvAnthropicAPIKey, llm.EnvAnthropicBaseURL}, &llm.OpenAI{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			env := map[string]string{
				// tract's command line reads these; the library must not.
				"TRACT_MODEL":    "claude-from-the-environment",
				"TRACT_BACKOFF":  "1ms",
				"TRACT_PROVIDER": "anthropic",
				// The providers' own.
				llm.EnvAPIKey:           testKey,
				llm.EnvBaseURL:          srv.URL(),
				llm.EnvAnthropicAPIKey:  testKey,
				llm.EnvAnthropicBaseURL: srv.AnthropicURL(),
			}
			var (
				mu   sync.Mutex // guards read
				read []string
			)
			getenv := func(k string) string {
				mu.Lock()
				defer mu.Unlock()
				read = append(read, k)
				return env[k]
			}

			// TRACT_MODEL gives no model.
			_, err := tc.build(getenv)
			var ce *llm.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "model", ce.Setting)
			assert.Equal(t, "no model given", err.Error())

			// TRACT_PROVIDER chooses no provider, and TRACT_BACKOFF sets no
			// backoff: the first retry waits DefaultBackoff.
			s := &sleeps{}
			c, err := tc.build(getenv, llm.WithModel("gpt-x"), llm.WithSleep(s.sleep),
				llm.WithJitter(func(ceiling time.Duration) time.Duration { return ceiling }))
			require.NoError(t, err)
			assert.IsType(t, tc.want, c)
			srv.Reply(llmtest.Error(500, "try again"), llmtest.Answer("ok"))
			resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg("hi")})
			require.NoError(t, err)
			assert.Equal(t, "ok", resp.Content)
			assert.Equal(t, []time.Duration{llm.DefaultBackoff}, s.all())

			mu.Lock()
			defer mu.Unlock()
			for _, k := range read {
				assert.False(t, strings.HasPrefix(k, "TRACT_"), "%s read %s", tc.name, k)
				assert.True(t, slices.Contains(tc.own, k), "%s read %s, not one of its provider's variables %v", tc.name, k, tc.own)
			}
		})
	}
}
