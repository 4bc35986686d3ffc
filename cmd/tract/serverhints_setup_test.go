package main

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/llm"
)

// The hint of a chat that wrote nothing names what to fix, with the
// provider's variables.
func TestUnsentHint(t *testing.T) {
	api := func(p llm.SetupProblem) llm.APIError { return llm.APIError{Setup: p, BaseURL: "http://host:1/v1"} }
	cases := []struct {
		name     string
		err      error
		provider string
		want     string
	}{
		{"refused", &llm.TransportError{APIError: api(llm.SetupUnreachable)}, "openai",
			"Is the server running? No server answered at OPENAI_BASE_URL=http://host:1/v1; a base URL usually ends in /v1"},
		{"no such host", &llm.TransportError{APIError: api(llm.SetupUnreachable), Err: &net.DNSError{IsNotFound: true}}, "openai",
			"The host name in OPENAI_BASE_URL=http://host:1/v1 does not resolve"},
		{"401", &llm.AuthError{APIError: api(llm.SetupAuth)}, "anthropic",
			"The server at ANTHROPIC_BASE_URL=http://host:1/v1 refused the key in ANTHROPIC_API_KEY"},
		{"404", func() error { e := api(llm.SetupEndpoint); return &e }(), "openai", "has no chat endpoint there"},
		{"HTML", &llm.BadResponseError{APIError: api(llm.SetupNotAPI)}, "openai", "answered with a web page, not the API"},
		{"model", func() error { e := api(llm.SetupModel); return &e }(), "openai", `does not know the model "m"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := unsentHint(tc.err, tc.provider, "m")
			assert.Contains(t, h, tc.want)
			assert.Contains(t, h, "Nothing was written")
		})
	}
	assert.Empty(t, unsentHint(&llm.ServerError{}, "openai", "m"), "no setup problem, no hint")
}
