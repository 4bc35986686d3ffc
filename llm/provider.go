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
// flag), else "anthropic" when model is a Claude model ("claude-…"),
// else "openai". Case and surrounding white space do not matter. A
// provider that is neither is a *ConfigError about the setting
// "provider".
func ChooseProvider(provider, model string) (string, error) {
	switch p := strings.TrimSpace(provider); strings.ToLower(p) {
	case ProviderOpenAI:
		return ProviderOpenAI, nil
	case ProviderAnthropic:
		return ProviderAnthropic, nil
	case "":
	default:
		return "", &ConfigError{Setting: "provider", msg: fmt.Sprintf(
			"unknown provider %q: want %s or %s", p, ProviderOpenAI, ProviderAnthropic)}
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(model)), "claude-") {
		return ProviderAnthropic, nil
	}
	return ProviderOpenAI, nil
}

// NewFromEnv builds the client of the provider ChooseProvider picks from
// provider and the model of opts: NewOpenAIFromEnv or NewAnthropicFromEnv,
// each reading its own provider's variables (the API key and the base
// URL) through getenv, then opts.
func NewFromEnv(getenv func(string) string, provider string, opts ...Option) (Remote, error) {
	var s settings
	for _, opt := range opts {
		opt(&s)
	}
	p, err := ChooseProvider(provider, s.model)
	if err != nil {
		return nil, err
	}
	if p == ProviderAnthropic {
		return NewAnthropicFromEnv(getenv, opts...)
	}
	return NewOpenAIFromEnv(getenv, opts...)
}
