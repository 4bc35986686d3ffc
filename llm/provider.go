package llm

import (
	"fmt"
	"strings"
)

// The providers NewFromEnv can build a client for.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// EnvProvider chooses the provider when NewFromEnv is given none.
const EnvProvider = "TRACT_PROVIDER"

// Remote is a client of a model server as NewFromEnv builds it: it
// answers requests, says what it talks to and lists the server's models.
// *OpenAI and *Anthropic implement it.
type Remote interface {
	Client
	Describer
	ModelLister
}

var (
	_ Remote = (*OpenAI)(nil)
	_ Remote = (*Anthropic)(nil)
)

// ChooseProvider returns the provider a program should use: provider
// when it is set (the program's own choice, such as a command-line
// flag), else TRACT_PROVIDER read through getenv, else "anthropic" when
// the model (the program's, else TRACT_MODEL) is a Claude model
// ("claude-…"), else "openai". A provider that is neither is a
// *ConfigError; its message names TRACT_PROVIDER when the name came from
// there.
func ChooseProvider(getenv func(string) string, provider, model string) (string, error) {
	p, from := strings.TrimSpace(provider), ""
	if p == "" {
		p, from = strings.TrimSpace(getenv(EnvProvider)), " (from "+EnvProvider+")"
	}
	switch strings.ToLower(p) {
	case ProviderOpenAI:
		return ProviderOpenAI, nil
	case ProviderAnthropic:
		return ProviderAnthropic, nil
	case "":
	default:
		return "", &ConfigError{Setting: "provider", msg: fmt.Sprintf(
			"unknown provider %q%s: want %s or %s", p, from, ProviderOpenAI, ProviderAnthropic)}
	}
	if model == "" {
		model = getenv(EnvModel)
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(model)), "claude-") {
		return ProviderAnthropic, nil
	}
	return ProviderOpenAI, nil
}

// NewFromEnv builds the client of the provider ChooseProvider picks from
// provider, the environment and the model of opts: NewOpenAIFromEnv or
// NewAnthropicFromEnv, each reading its own variables, then opts.
func NewFromEnv(getenv func(string) string, provider string, opts ...Option) (Remote, error) {
	var s settings
	for _, opt := range opts {
		opt(&s)
	}
	p, err := ChooseProvider(getenv, provider, s.model)
	if err != nil {
		return nil, err
	}
	if p == ProviderAnthropic {
		return NewAnthropicFromEnv(getenv, opts...)
	}
	return NewOpenAIFromEnv(getenv, opts...)
}
