package serve

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tractdag/tract/llm"
)

// WriteError answers r with status and message in the error shape of
// r's wire: Anthropic's for /v1/messages or a request with an
// anthropic-version header, OpenAI's otherwise. It is for what stands in
// front of a Handler (the guard of a listener's routes), so that a
// client's SDK reads the refusal as its own wire's error.
func WriteError(rw http.ResponseWriter, r *http.Request, status int, message string) {
	writeError(rw, wireOf(r), status, message)
}

// wireOf returns the wire of a request.
func wireOf(r *http.Request) wire {
	if strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Header.Get("anthropic-version") != "" {
		return wireAnthropic
	}
	return wireOpenAI
}

// writeError answers with status and message in w's error shape.
func writeError(rw http.ResponseWriter, w wire, status int, message string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	var doc any
	if w == wireAnthropic {
		doc = map[string]any{"type": "error", "error": map[string]string{"type": llm.AnthropicErrorType(status), "message": message}}
	} else {
		doc = map[string]any{"error": map[string]any{"message": message, "type": openAIErrorType(status), "param": nil, "code": nil}}
	}
	b, _ := json.Marshal(doc)
	rw.Write(append(b, '\n'))
}

// openAIErrorType is the OpenAI error type of a status.
func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestEntityTooLarge, status < 500:
		return "invalid_request_error"
	}
	return "server_error"
}

// upstreamMessage returns the message of an upstream's error document in
// either wire's shape, or "" when body is not one.
func upstreamMessage(body []byte) string {
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil || len(doc.Error) == 0 {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(doc.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(doc.Error, &s) == nil {
		return s
	}
	return ""
}
