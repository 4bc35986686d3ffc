package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract/internal/config"
	"github.com/tractdag/tract/llm"
)

// ModelFlags are the flags of the commands that call a model (chat, the
// REPL, compress, models): which provider, how long an answer may be, and
// whether a schema validator's schema goes to the model.
type ModelFlags struct {
	// Provider is --provider: "openai", "anthropic", or "" (TRACT_PROVIDER,
	// else chosen by the model's name).
	Provider string
	// MaxTokens is --max-tokens; 0 leaves the provider's default.
	MaxTokens int
	// Structured is --structured: "auto" (send the schema of a lone
	// schema: validator) or "off".
	Structured string
	// Timeout is --timeout ("" when not given: TRACT_TIMEOUT, else the
	// timeout setting, else defaultTimeout).
	Timeout string
}

// defaultTimeout is how long a model call waits for the server's next
// byte, unless --timeout, TRACT_TIMEOUT or the timeout setting says
// otherwise; a call ends after callTimeouts times it in all.
const (
	defaultTimeout = 2 * time.Minute
	callTimeouts   = 5
)

// The values of --structured.
const (
	structuredAuto = "auto"
	structuredOff  = "off"
)

// addModelFlags adds --provider, and unless only is set --max-tokens and
// --structured, to cmd.
func addModelFlags(cmd *cobra.Command, mf *ModelFlags, providerOnly bool) {
	fl := cmd.Flags()
	// docs/providers.md says what they do at length: the defaults,
	// Anthropic's bound on tokens, what a timeout ends.
	fl.StringVar(&mf.Provider, "provider", "", "openai or anthropic (default $TRACT_PROVIDER)")
	setValueName(fl, "provider", "NAME")
	fl.StringVar(&mf.Timeout, "timeout", "", "wait at most `DURATION` for the model's next byte")
	if providerOnly {
		return
	}
	fl.IntVar(&mf.MaxTokens, "max-tokens", 0, "cap each answer at `N` tokens")
	fl.StringVar(&mf.Structured, "structured", structuredAuto, "constrain answers to the schema")
	setValueName(fl, "structured", "auto|off")
}

// check refuses flag values that make no sense, as usage errors.
func (mf *ModelFlags) check() error {
	if mf.MaxTokens < 0 {
		return usageErrorf("--max-tokens %d: give a number of tokens, 1 or more", mf.MaxTokens)
	}
	switch mf.Structured {
	case structuredAuto, structuredOff, "":
	default:
		return usageErrorf("--structured %q: want auto or off", mf.Structured)
	}
	if _, err := llm.ChooseProvider(mf.Provider, ""); err != nil {
		return usageErrorf("--provider: %w", err)
	}
	if mf.Timeout != "" {
		if _, err := config.ParseTimeout(mf.Timeout); err != nil {
			return usageErrorf("--timeout: %w", err)
		}
	}
	return nil
}

// schema returns the schema to send with each request: with --structured
// auto and exactly one schema:PATH validator among specs, that schema
// (read relative to the working directory); else nil. Two schema
// validators send none: a request can carry only one.
func (mf *ModelFlags) schema(f *Factory, specs []string) (*llm.Schema, error) {
	if mf.Structured == structuredOff {
		return nil, nil
	}
	var paths []string
	for _, s := range specs {
		if p, ok := strings.CutPrefix(s, "schema:"); ok {
			paths = append(paths, p)
		}
	}
	if len(paths) != 1 {
		return nil, nil
	}
	path := paths[0]
	if !filepath.IsAbs(path) {
		wd, err := f.Getwd()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(wd, path)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--validate schema:%s: %v", paths[0], err)
	}
	s, err := llm.NewSchema(filepath.Base(path), doc)
	if err != nil {
		return nil, usageErrorf("--validate schema:%s: %v", paths[0], err)
	}
	return s, nil
}

// envBackoff names the environment variable that sets the backoff
// between the model client's retries of transient failures: "BASE" or
// "BASE,MAX" as Go durations ("250ms,5s"), as llm.WithBackoff takes them.
// The end-to-end tests set it to a millisecond so a 500 storm does not
// sleep.
const envBackoff = "TRACT_BACKOFF"

// newClient builds the client of the provider the flags, the environment
// and the settings choose, reporting each transport retry on standard
// error. Every command that calls a model builds its client here. The
// command line reads its own settings (the model and the provider:
// --model, TRACT_MODEL, 'tract config'; the backoff: TRACT_BACKOFF) and
// passes them to llm, which reads only the provider's variables (its API
// key and base URL). A configuration problem is a usage error.
func newClient(f *Factory, model string, mf ModelFlags, opts ...llm.Option) (llm.Remote, error) {
	model, err := f.setting("model", model)
	if err != nil {
		return nil, err
	}
	provider, err := f.provider(mf.Provider)
	if err != nil {
		return nil, err
	}
	base, maxWait, err := f.backoff()
	if err != nil {
		return nil, err
	}
	timeout, err := f.timeout(mf.Timeout)
	if err != nil {
		return nil, err
	}
	opts = append([]llm.Option{llm.WithModel(model), llm.WithMaxTokens(mf.MaxTokens), llm.WithBackoff(base, maxWait),
		llm.WithIdleTimeout(timeout), llm.WithCallTimeout(callTimeouts * timeout),
		llm.WithOnRetry(func(ev llm.RetryEvent) {
			msg := clause(ev.Err.Error()) // it may quote the server: on a terminal, through the screen sanitiser
			if f.IO.ErrTTY {
				msg = screenText(msg)
			}
			line := fmt.Sprintf("model: %s; retrying in %s\n", msg, ev.Wait.Round(time.Millisecond))
			if f.wait != nil {
				f.wait.printf("%s", line)
			} else {
				io.WriteString(f.IO.ErrOut, line)
			}
		})}, opts...)
	c, err := llm.NewFromEnv(f.Getenv, provider, opts...)
	var ce *llm.ConfigError
	if errors.As(err, &ce) {
		return nil, &usageError{adviseConfig(err)}
	}
	if err != nil || f.wait == nil {
		return c, err
	}
	return waitingClient{Remote: c, line: f.wait}, nil
}

// provider returns the provider the command line chose: --provider, else
// TRACT_PROVIDER, else the provider setting, else "" (llm.ChooseProvider
// then goes by the model's name). A name that is no provider is a usage
// error that says where it came from.
func (f *Factory) provider(flag string) (string, error) {
	p, origin, err := f.settingFrom("provider", flag)
	if err != nil {
		return "", err
	}
	_, err = llm.ChooseProvider(p, "")
	if err == nil {
		return p, nil
	}
	switch key, _ := config.Lookup("provider"); origin {
	case "--provider":
		return "", usageErrorf("--provider: %w", err)
	case key.Env:
		return "", &envError{err: &configError{err: err, msg: fmt.Sprintf("unknown provider %q (from %s): want %s or %s",
			strings.TrimSpace(p), key.Env, llm.ProviderOpenAI, llm.ProviderAnthropic)}, Name: key.Env, Example: llm.ProviderOpenAI, Flag: "--provider"}
	default:
		return "", usageErrorf("the provider setting is %q: want %s or %s ('tract config set provider NAME')",
			p, llm.ProviderOpenAI, llm.ProviderAnthropic)
	}
}

// timeout returns how long a model call waits for the server's next
// byte: --timeout (flag), else TRACT_TIMEOUT, else the timeout setting,
// else defaultTimeout. A value that is not a timeout is a usage error
// that says where it came from.
func (f *Factory) timeout(flag string) (time.Duration, error) {
	v, origin, err := f.settingFrom("timeout", flag)
	if err != nil || v == "" {
		return defaultTimeout, err
	}
	d, err := config.ParseTimeout(v)
	if err != nil {
		if k, _ := config.Lookup("timeout"); origin == k.Env {
			return 0, envErrorf(origin, "5m", "--timeout", "%s: %w", origin, err)
		}
		return 0, usageErrorf("%s: %w", origin, err)
	}
	return d, nil
}

// backoff returns the backoff TRACT_BACKOFF sets, or zeros (the client's
// default) when it is not set. A value that is not a backoff is a usage
// error: ignoring it would wait for times the user did not ask for.
func (f *Factory) backoff() (base, maxWait time.Duration, err error) {
	s := f.Getenv(envBackoff)
	if s == "" {
		return 0, 0, nil
	}
	base, maxWait, err = parseBackoff(s)
	if err != nil {
		return 0, 0, envErrorf(envBackoff, "250ms,5s", "",
			"%s=%q is not a backoff: give a duration, or two separated by a comma (base and maximum), e.g. 250ms,5s", envBackoff, s)
	}
	return base, maxWait, nil
}

// parseBackoff reads "BASE" or "BASE,MAX"; without MAX the maximum is
// llm.DefaultMaxBackoff, or BASE when that is larger.
func parseBackoff(s string) (base, maxWait time.Duration, err error) {
	b, m, two := strings.Cut(s, ",")
	if base, err = time.ParseDuration(strings.TrimSpace(b)); err != nil || base <= 0 {
		return 0, 0, fmt.Errorf("bad base %q", b)
	}
	maxWait = max(llm.DefaultMaxBackoff, base)
	if two {
		if maxWait, err = time.ParseDuration(strings.TrimSpace(m)); err != nil || maxWait < base {
			return 0, 0, fmt.Errorf("bad maximum %q", m)
		}
	}
	return base, maxWait, nil
}

// configError is a client's *llm.ConfigError as the command line words
// it; it unwraps to the library's error.
type configError struct {
	err error
	msg string
}

func (e *configError) Error() string { return e.msg }
func (e *configError) Unwrap() error { return e.err }

// adviseConfig returns a client's configuration error err (one
// *llm.ConfigError, or several joined) as the command line words it: a
// missing model, which the command line reads from --model, TRACT_MODEL
// or the settings, names the variable (errorHint adds the other ways).
// The provider's own settings, the API key and the base URL, keep llm's
// words, which name the provider's variables.
func adviseConfig(err error) error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs := joined.Unwrap()
		out := make([]error, len(errs))
		for i, e := range errs {
			out[i] = adviseConfig(e)
		}
		return errors.Join(out...)
	}
	if ce, ok := err.(*llm.ConfigError); ok && ce.Setting == "model" {
		key, _ := config.Lookup("model")
		return &configError{err: err, msg: "no model: set " + key.Env}
	}
	return err
}

// redactKeys returns s with the API key of either provider redacted.
func redactKeys(f *Factory, s string) string {
	for _, env := range []string{llm.EnvAPIKey, llm.EnvAnthropicAPIKey} {
		if k := strings.TrimSpace(f.Getenv(env)); k != "" {
			s = llm.RedactKey(s, k)
		}
	}
	return s
}

// clause returns text (a server's message, say) ready to be followed by
// "; more": without the full stop, colon or semicolon it may end in, so
// that "… your request." and "; retrying" do not meet as ".;".
func clause(text string) string {
	return strings.TrimRight(strings.TrimSpace(text), ".;:,")
}
