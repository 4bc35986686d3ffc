package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// waits records the client's waits between retries instead of sleeping.
type waits struct {
	mu  sync.Mutex // guards all
	all []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, d)
	return ctx.Err()
}

func (w *waits) list() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.all...)
}

// TRACT_BACKOFF sets the backoff between the client's retries, as
// llm.WithBackoff does; without it the client's default applies; a bad
// value is a usage error that names the variable and says what to write.
func TestNewClient_Backoff(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		value string
		want  []time.Duration
		err   string
	}{
		{"", []time.Duration{llm.DefaultBackoff, 2 * llm.DefaultBackoff, 4 * llm.DefaultBackoff, 8 * llm.DefaultBackoff}, ""},
		{"10ms,30ms", []time.Duration{10 * ms, 20 * ms, 30 * ms, 30 * ms}, ""},
		{"1ms", []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms}, ""},
		{" 2ms , 3ms ", []time.Duration{2 * ms, 3 * ms, 3 * ms, 3 * ms}, ""},
		{"soon", nil, `TRACT_BACKOFF="soon" is not a backoff: give a duration, or two separated by a comma (base and maximum), e.g. 250ms,5s`},
		{"0s", nil, `TRACT_BACKOFF="0s" is not a backoff`},
		{"1s,10ms", nil, `TRACT_BACKOFF="1s,10ms" is not a backoff`},
		{"1ms,", nil, `TRACT_BACKOFF="1ms," is not a backoff`},
	} {
		name := tc.value
		if name == "" {
			name = "unset"
		}
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			env := map[string]string{"OPENAI_BASE_URL": srv.URL(), "TRACT_BACKOFF": tc.value}
			f, _, errOut := testFactory(t, env)
			w := &waits{}
			c, err := newClient(f, "m", ModelFlags{}, llm.WithSleep(w.sleep),
				llm.WithJitter(func(ceiling time.Duration) time.Duration { return ceiling }))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Equal(t, exitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			for range 5 {
				srv.Reply(llmtest.Error(503, "busy"))
			}
			_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
			require.Error(t, err)
			assert.Equal(t, tc.want, w.list())
			assert.Equal(t, 4, strings.Count(errOut.String(), "; retrying in "), "each retry is reported")
		})
	}
}

// Where the model and the provider come from: the flag, else TRACT_MODEL
// and TRACT_PROVIDER, else the settings file, else the model's name
// chooses the provider. The command line reads them and passes them to
// llm; a missing model or an unknown provider is worded for the command
// line, naming where the value came from.
func TestNewClient_ModelAndProvider(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		settings string // the settings file
		model    string // --model
		provider string // --provider
		want     llm.Remote
		wantErr  string
	}{
		{name: "model from the flag", model: "gpt-x", want: &llm.OpenAI{}},
		{name: "claude model from the environment", env: map[string]string{"TRACT_MODEL": "claude-x"}, want: &llm.Anthropic{}},
		{name: "claude model from the settings", settings: `{"model": "claude-x"}`, want: &llm.Anthropic{}},
		{name: "provider from the environment", env: map[string]string{"TRACT_PROVIDER": "anthropic"}, model: "gpt-x", want: &llm.Anthropic{}},
		{name: "provider from the settings", settings: `{"provider": "anthropic"}`, model: "gpt-x", want: &llm.Anthropic{}},
		{name: "the flag wins over the environment", env: map[string]string{"TRACT_PROVIDER": "anthropic"}, provider: "openai", model: "claude-x", want: &llm.OpenAI{}},
		{name: "the environment wins over the settings", env: map[string]string{"TRACT_PROVIDER": "openai"}, settings: `{"provider": "anthropic"}`, model: "claude-x", want: &llm.OpenAI{}},
		{name: "a bad provider in the environment is not read under the flag", env: map[string]string{"TRACT_PROVIDER": "bard"}, provider: "openai", model: "m", want: &llm.OpenAI{}},
		{name: "a bad provider in the settings is not read under the environment", env: map[string]string{"TRACT_PROVIDER": "openai"}, settings: `{"provider": "bard"}`, model: "m", want: &llm.OpenAI{}},
		{name: "no model", wantErr: "no model: set TRACT_MODEL"},
		{name: "no model and no key", env: map[string]string{"OPENAI_BASE_URL": ""},
			wantErr: "no model: set TRACT_MODEL\nno API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs none)"},
		{name: "unknown provider in the environment", env: map[string]string{"TRACT_PROVIDER": " Bard "}, model: "m",
			wantErr: `unknown provider "Bard" (from TRACT_PROVIDER): want openai or anthropic`},
		{name: "unknown provider in the settings", settings: `{"provider": "bard"}`, model: "m",
			wantErr: `the provider setting is "bard": want openai or anthropic ('tract config set provider NAME')`},
		{name: "unknown provider on the command line", provider: "bard", model: "m",
			wantErr: `--provider: unknown provider "bard": want openai or anthropic`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			dir := t.TempDir()
			env := map[string]string{"TRACT_CONFIG": filepath.Join(dir, "config.json"),
				"OPENAI_BASE_URL": srv.URL(), "ANTHROPIC_BASE_URL": srv.AnthropicURL()}
			for k, v := range tc.env {
				env[k] = v
			}
			if tc.settings != "" {
				require.NoError(t, os.WriteFile(env["TRACT_CONFIG"], []byte(tc.settings), 0o600))
			}
			f, _, _ := testFactory(t, env)
			c, err := newClient(f, tc.model, ModelFlags{Provider: tc.provider})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantErr, err.Error())
				assert.Equal(t, exitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			assert.IsType(t, tc.want, c)
		})
	}
}

// A missing model keeps its facts under the command line's words: the
// error is still an *llm.ConfigError about the model, which gives it its
// exit code and its hint, also when it is joined with another.
func TestAdviseConfig_KeepsTheLibrarysError(t *testing.T) {
	f, _, _ := testFactory(t, map[string]string{"TRACT_CONFIG": filepath.Join(t.TempDir(), "config.json")})
	_, err := newClient(f, "", ModelFlags{})
	require.Error(t, err)
	var ce *llm.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.True(t, missesSetting(err, "model"))
	assert.Equal(t, "Pass --model NAME (-m NAME), set TRACT_MODEL, or set a default with 'tract config set model NAME'.", errorHint(err))
	assert.Equal(t, exitUsage, exitCode(err))

	key := &llm.ConfigError{Setting: "API key"}
	assert.Same(t, key, adviseConfig(key), "the provider's settings keep llm's words")
	other := errors.New("not a configuration error")
	assert.Equal(t, other, adviseConfig(other))
}

func FuzzParseBackoff(f *testing.F) {
	for _, s := range []string{"1ms", "250ms,5s", " 1s , 2s ", "30s", "5s,1s", "0", "-1s", "1ms,", ",", "1h,1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base, maxWait, err := parseBackoff(s)
		if err != nil {
			fuzzcheck.UserError(t, err)
		} else if base <= 0 || maxWait < base {
			t.Fatalf("%q: base %v, maximum %v", s, base, maxWait)
		}
		// TRACT_BACKOFF takes the same value, and reports it as a usage
		// error naming the variable.
		fac := &Factory{Getenv: func(k string) string { return map[string]string{envBackoff: s}[k] }}
		b, m, ferr := fac.backoff()
		if s == "" {
			if ferr != nil || b != 0 || m != 0 {
				t.Fatalf("unset: %v,%v, %v", b, m, ferr)
			}
			return
		}
		if (err == nil) != (ferr == nil) {
			t.Fatalf("%q: parseBackoff says %v, TRACT_BACKOFF %v", s, err, ferr)
		}
		if ferr != nil {
			checkUsageError(t, ferr, s)
			if !strings.Contains(ferr.Error(), envBackoff) {
				t.Fatalf("%q: error %v does not name %s", s, ferr, envBackoff)
			}
			return
		}
		if b != base || m != maxWait {
			t.Fatalf("%q: backoff %v,%v, want %v,%v", s, b, m, base, maxWait)
		}
	})
}

// The retry line joins the server's message and "retrying in" without
// doubling the punctuation (no "request.; retrying").
func TestNewClient_RetryLineJoinsTheServersMessage(t *testing.T) {
	srv := llmtest.NewServer(t)
	f, _, errOut := testFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "TRACT_BACKOFF": "1ms"})
	c, err := newClient(f, "m", ModelFlags{})
	require.NoError(t, err)
	srv.Reply(llmtest.Error(500, "The server had an error while processing your request."))
	srv.Reply(llmtest.Answer("ok"))
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	require.NoError(t, err)
	assert.Regexp(t, `^model: .*processing your request; retrying in \d+m?s\n$`, errOut.String())
	assert.NotContains(t, errOut.String(), ".;")
}

func TestClause(t *testing.T) {
	for in, want := range map[string]string{
		"busy":                     "busy",
		"Try again later.":         "Try again later",
		"overloaded; ":             "overloaded",
		"error: ":                  "error",
		"3.5 is too big.\n":        "3.5 is too big",
		"see https://x.example/a.": "see https://x.example/a",
	} {
		assert.Equal(t, want, clause(in), "%q", in)
	}
}
