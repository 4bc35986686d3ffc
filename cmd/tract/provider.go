package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
}

// The values of --structured.
const (
	structuredAuto = "auto"
	structuredOff  = "off"
)

// addModelFlags adds --provider, and unless only is set --max-tokens and
// --structured, to cmd.
func addModelFlags(cmd *cobra.Command, mf *ModelFlags, providerOnly bool) {
	fl := cmd.Flags()
	fl.StringVar(&mf.Provider, "provider", "", "model provider: openai (any OpenAI-compatible server) or anthropic (default $TRACT_PROVIDER, else anthropic for claude-* models, else openai)")
	if providerOnly {
		return
	}
	fl.IntVar(&mf.MaxTokens, "max-tokens", 0, "the most tokens an answer may have (default: the server's; anthropic: 4096)")
	fl.StringVar(&mf.Structured, "structured", structuredAuto, "send the schema of a schema: validator to the model for constrained output: auto or off")
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
	if _, err := llm.ChooseProvider(func(string) string { return "" }, mf.Provider, ""); err != nil {
		return usageErrorf("--provider: %w", err)
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

// newClient builds the client of the provider the flags, the environment
// and the model choose (see llm.NewFromEnv), reporting each transport
// retry on standard error. Every command that calls a model builds its
// client here. A configuration problem is a usage error.
func newClient(f *Factory, model string, mf ModelFlags, opts ...llm.Option) (llm.Remote, error) {
	model, err := f.setting("model", model)
	if err != nil {
		return nil, err
	}
	provider := mf.Provider
	if provider == "" && f.Getenv(llm.EnvProvider) == "" {
		// The settings file comes after --provider and TRACT_PROVIDER,
		// which llm.NewFromEnv reads itself (and names in its errors).
		if provider, err = f.setting("provider", ""); err != nil {
			return nil, err
		}
		if _, err := llm.ChooseProvider(func(string) string { return "" }, provider, ""); err != nil {
			return nil, usageErrorf("the provider setting is %q: want openai or anthropic ('tract config set provider NAME')", provider)
		}
	}
	opts = append([]llm.Option{llm.WithModel(model), llm.WithMaxTokens(mf.MaxTokens), llm.WithOnRetry(func(ev llm.RetryEvent) {
		fmt.Fprintf(f.IO.ErrOut, "model: %v; retrying in %s\n", ev.Err, ev.Wait.Round(time.Millisecond))
	})}, opts...)
	c, err := llm.NewFromEnv(f.Getenv, provider, opts...)
	var ce *llm.ConfigError
	if errors.As(err, &ce) {
		return nil, &usageError{err}
	}
	return c, err
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
