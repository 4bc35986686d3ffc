package scriptserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tractdag/tract/llm"
)

// This file serves the Anthropic Messages wire format (POST /v1/messages,
// streamed and not) from the same script, and the model lists of both
// wire formats (GET /v1/models).

// anthropicRequest is the part of a Messages body the server reads.
type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Temperature *float64 `json:"temperature"`
	Stream      bool     `json:"stream"`
	Tools       []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *anthropicChoice `json:"tool_choice"`
}

type anthropicChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// anthropicBlock is a content block of a request: text, a tool_use (an
// assistant's call) or a tool_result (its answer); other blocks (images,
// documents) count for their text, none.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// anthropicBlocks reads a content or system value: a string (one text
// block), or an array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// anthropicText reads a content or system value: a string, or an array
// of blocks whose text parts are joined.
func anthropicText(raw json.RawMessage) (string, error) {
	blocks, err := anthropicBlocks(raw)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String(), err
}

// anthropicMessages reads the messages of a request in the OpenAI shape
// the recorded Request holds: an assistant message's tool_use blocks
// become its ToolCalls; a user message's tool_result blocks, messages of
// role "tool" (before the user's text, if any). It returns what Anthropic
// would refuse: a role other than user and assistant, roles that do not
// alternate, a tool_use in a user message or a tool_result in an
// assistant's, a tool_result after other blocks, a tool_use not answered
// in the next message, a tool_result answering no tool_use of the one
// before.
func anthropicMessages(wire anthropicRequest) ([]llm.Message, string) {
	var (
		out  []llm.Message
		uses []string // the tool_use ids of the previous message
	)
	for i, m := range wire.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i > 0 && wire.Messages[i-1].Role == m.Role {
			return nil, fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", m.Role)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return nil, fmt.Sprintf("messages.%d.content: %v", i, err)
		}
		var (
			text    strings.Builder
			calls   []llm.ToolCall
			results []llm.Message
			other   bool // a block that is not a tool_result came first
		)
		for j, b := range blocks {
			switch b.Type {
			case "tool_use":
				if m.Role != "assistant" {
					return nil, fmt.Sprintf("messages.%d.content.%d: tool_use blocks can only be in assistant messages", i, j)
				}
				args := "{}"
				var compact bytes.Buffer
				if len(b.Input) > 0 && json.Compact(&compact, b.Input) == nil {
					args = compact.String()
				}
				calls = append(calls, llm.NewToolCall(b.ID, b.Name, args))
			case "tool_result":
				switch {
				case m.Role != "user":
					return nil, fmt.Sprintf("messages.%d.content.%d: tool_result blocks can only be in user messages", i, j)
				case other:
					return nil, fmt.Sprintf("messages.%d.content.%d: tool_result blocks must come first in the content, before any other block", i, j)
				case !slices.Contains(uses, b.ToolUseID):
					return nil, fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				content, err := anthropicText(b.Content)
				if err != nil {
					return nil, fmt.Sprintf("messages.%d.content.%d.content: %v", i, j, err)
				}
				results = append(results, llm.Message{Role: "tool", ToolCallID: b.ToolUseID, Content: content})
			default:
				other = true
				text.WriteString(b.Text)
			}
		}
		var missing []string
		for _, id := range uses {
			if !slices.ContainsFunc(results, func(r llm.Message) bool { return r.ToolCallID == id }) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		uses = uses[:0]
		for _, c := range calls {
			uses = append(uses, c.ID)
		}
		out = append(out, results...)
		if text.Len() > 0 || len(results) == 0 || len(calls) > 0 {
			out = append(out, llm.Message{Role: m.Role, Content: text.String(), ToolCalls: calls})
		}
	}
	return out, ""
}

// anthropicToolChoice reads a tool_choice: auto, none, any (a call
// required) or tool (that tool forced).
func anthropicToolChoice(tc *anthropicChoice) (llm.ToolChoice, string) {
	if tc == nil {
		return llm.ToolChoice{}, ""
	}
	switch tc.Type {
	case "auto":
		return llm.ToolChoice{}, ""
	case "none":
		return llm.ToolChoice{Mode: llm.ToolChoiceNone}, ""
	case "any":
		return llm.ToolChoice{Mode: llm.ToolChoiceRequired}, ""
	case "tool":
		if tc.Name == "" {
			return llm.ToolChoice{}, "tool_choice.tool.name: Field required"
		}
		return llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: tc.Name}, ""
	}
	return llm.ToolChoice{}, fmt.Sprintf("tool_choice: Input tag '%s' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'", tc.Type)
}

// serveAnthropic answers POST /v1/messages as Server.serve does the
// OpenAI route, in the Anthropic wire format. A request without
// anthropic-version or max_tokens, or whose roles do not alternate, is
// rejected with a 400, as Anthropic would, and reported by Verify.
func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var wire anthropicRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		s.miss(fmt.Sprintf("malformed request body: %v", err))
		writeAnthropicError(w, Error(http.StatusBadRequest, "scriptserver: request body is not valid JSON: "+err.Error()), "")
		return
	}
	rec := Request{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: maskAuth(r.Header),
		Model: wire.Model, Temperature: wire.Temperature, Stream: wire.Stream,
		Wire: WireAnthropic, MaxTokens: wire.MaxTokens, Body: body,
	}
	if rec.System, err = anthropicText(wire.System); err != nil {
		s.invalid(w, rec, "system: "+err.Error())
		return
	}
	for _, t := range wire.Tools {
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	if tc := wire.ToolChoice; tc != nil && tc.Type == "tool" {
		for _, t := range wire.Tools {
			if t.Name == tc.Name {
				rec.SchemaName, rec.Schema = t.Name, t.InputSchema
			}
		}
	}
	key := r.Header.Get("X-Api-Key")
	problem := checkAnthropic(r, wire)
	if problem == "" {
		rec.Messages, problem = anthropicMessages(wire)
	}
	if problem == "" {
		rec.ToolChoice, problem = anthropicToolChoice(wire.ToolChoice)
	}
	if problem != "" {
		s.invalid(w, rec, problem)
		return
	}
	s.answer(w, r, rec, key, wire.Stream, anthropicDialect)
}

// checkAnthropic returns what Anthropic would reject in a request's
// headers and fields, or "" (anthropicMessages checks the messages).
func checkAnthropic(r *http.Request, wire anthropicRequest) string {
	switch {
	case r.Header.Get("Anthropic-Version") == "":
		return "anthropic-version: header is required"
	case wire.MaxTokens <= 0:
		return "max_tokens: Field required"
	case len(wire.Messages) == 0:
		return "messages: at least one message is required"
	}
	return ""
}

// invalid records rec as a malformed request and answers a 400.
func (s *Server) invalid(w http.ResponseWriter, rec Request, problem string) {
	s.record(rec)
	s.miss("invalid Anthropic request: " + problem)
	writeAnthropicError(w, Error(http.StatusBadRequest, problem), "")
}

// writeAnthropicError sends an Anthropic error document; key is the key
// the client presented.
func writeAnthropicError(w http.ResponseWriter, r Reply, key string) {
	sendError(w, r, func(status int) any {
		msg := r.Message
		if r.echoKey {
			msg = "invalid x-api-key: " + key
		}
		return map[string]any{"type": "error", "error": map[string]any{
			"type": llm.AnthropicErrorType(status), "message": msg,
		}}
	})
}

// anthropicUsage is the usage object of an answer.
func anthropicUsage(rec Request, r Reply) map[string]any {
	in := rec.Messages
	if rec.System != "" {
		in = append([]llm.Message{{Role: "system", Content: rec.System}}, in...)
	}
	u := usageFor(Request{Messages: in}, r)
	m := map[string]any{"input_tokens": u.PromptTokens - u.CacheCreationTokens - u.CacheReadTokens, "output_tokens": u.CompletionTokens}
	if u.CacheCreationTokens > 0 || u.CacheReadTokens > 0 {
		m["cache_creation_input_tokens"] = u.CacheCreationTokens
		m["cache_read_input_tokens"] = u.CacheReadTokens
	}
	return m
}

// useTool reports whether the answer goes as the forced tool's input: the
// request forced a tool, the reply makes no tool calls and its content is
// a JSON object.
func useTool(rec Request, r Reply) bool {
	var obj map[string]any
	return rec.SchemaName != "" && len(r.ToolCalls) == 0 && json.Unmarshal([]byte(r.Content), &obj) == nil
}

// anthropicBlocksOf returns the content blocks of the n-th answer, whole:
// the forced tool's input (useTool), else a text block (unless the
// answer is only tool calls) and a tool_use block per call.
func anthropicBlocksOf(n int, rec Request, r Reply) []map[string]any {
	if useTool(rec, r) {
		return []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_scriptserver_%d", n), "name": rec.SchemaName, "input": json.RawMessage(r.Content)}}
	}
	var blocks []map[string]any
	if r.Content != "" || len(r.ToolCalls) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Content})
	}
	for _, c := range toolCalls(n, r, "toolu") {
		var input any = json.RawMessage(c.Function.Arguments)
		switch {
		case strings.TrimSpace(c.Function.Arguments) == "":
			input = map[string]any{}
		case !json.Valid([]byte(c.Function.Arguments)):
			input = c.Function.Arguments
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": input})
	}
	return blocks
}

// messageID names the answer to request number n.
func messageID(n int) string { return fmt.Sprintf("msg_scriptserver_%d", n) }

func anthropicStop(rec Request, r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case useTool(rec, r), len(r.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

// writeAnthropicJSON sends a non-streamed Message.
func writeAnthropicJSON(w http.ResponseWriter, n int, rec Request, r Reply) {
	body, _ := json.Marshal(map[string]any{
		"id": messageID(n), "type": "message", "role": "assistant", "model": modelFor(rec, r),
		"content": anthropicBlocksOf(n, rec, r), "stop_reason": anthropicStop(rec, r), "stop_sequence": nil,
		"usage": anthropicUsage(rec, r),
	})
	writeRaw(w, Reply{Body: string(body), Truncate: r.Truncate, Header: r.Header}, http.StatusOK)
}

// writeAnthropicStream sends a Message as server-sent events:
// message_start, a ping, the content blocks (a text block of text_delta
// per word, or input_json_delta pieces of the forced tool's input; then a
// tool_use block per tool call, its input in two input_json_delta
// halves), message_delta with the stop reason and output usage,
// message_stop.
func (s *Server) writeAnthropicStream(ctx context.Context, w http.ResponseWriter, n int, rec Request, r Reply) {
	copyHeader(w.Header(), r.Header)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(event string, v map[string]any) bool {
		v["type"] = event
		var buf bytes.Buffer
		b, _ := json.Marshal(v)
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", event, b)
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	usage := anthropicUsage(rec, r)
	start := map[string]any{"id": messageID(n), "type": "message", "role": "assistant", "model": modelFor(rec, r),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1}}
	if _, ok := usage["cache_read_input_tokens"]; ok {
		start["usage"].(map[string]any)["cache_read_input_tokens"] = usage["cache_read_input_tokens"]
		start["usage"].(map[string]any)["cache_creation_input_tokens"] = usage["cache_creation_input_tokens"]
	}
	if !send("message_start", map[string]any{"message": start}) || !send("ping", map[string]any{}) {
		return
	}
	tool := useTool(rec, r)
	block, delta := map[string]any{"type": "text", "text": ""}, func(p string) map[string]any {
		return map[string]any{"type": "text_delta", "text": p}
	}
	if tool {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scriptserver_%d", n), "name": rec.SchemaName, "input": map[string]any{}}
		delta = func(p string) map[string]any { return map[string]any{"type": "input_json_delta", "partial_json": p} }
	}
	index := 0
	if r.Content != "" || len(r.ToolCalls) == 0 {
		if !send("content_block_start", map[string]any{"index": 0, "content_block": block}) {
			return
		}
		index++
	}
	pieces := words(r.Content)
	if r.Truncate || r.ErrorEvent != "" {
		pieces = pieces[:len(pieces)/2]
	}
	for i, p := range pieces {
		if i > 0 && !s.pause(ctx, r.ChunkDelay) {
			return
		}
		if !send("content_block_delta", map[string]any{"index": 0, "delta": delta(p)}) {
			return
		}
	}
	switch {
	case r.Truncate:
		if r.Hangup {
			hangup(w)
		}
		return
	case r.ErrorEvent != "":
		send("error", map[string]any{"error": map[string]any{"type": r.ErrorEvent, "message": r.Message}})
		return
	}
	if index > 0 && !send("content_block_stop", map[string]any{"index": 0}) {
		return
	}
	for _, c := range toolCalls(n, r, "toolu") {
		first, second := halves(c.Function.Arguments)
		if !send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": map[string]any{},
		}}) {
			return
		}
		for _, p := range []string{first, second} {
			if p != "" && !send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": index}) {
			return
		}
		index++
	}
	if !send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": anthropicStop(rec, r), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]},
	}) {
		return
	}
	send("message_stop", map[string]any{})
}

// serveModels answers GET /v1/models with the list Models set: in the
// Anthropic format (paged by limit and after_id) when the request has an
// anthropic-version header, else in the OpenAI one. A wrong key (with
// WithAPIKey) gets a 401.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids := s.models
	s.mu.Unlock()
	anthropic := r.Header.Get("Anthropic-Version") != ""
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if anthropic {
		key = r.Header.Get("X-Api-Key")
	}
	if s.apiKey != "" && key != s.apiKey {
		if anthropic {
			writeAnthropicError(w, Unauthorized(), key)
		} else {
			writeError(w, Unauthorized(), key)
		}
		return
	}
	var body []byte
	if !anthropic {
		data := make([]any, 0, len(ids))
		for _, id := range ids {
			data = append(data, map[string]any{"id": id, "object": "model", "created": created, "owned_by": "scriptserver"})
		}
		body, _ = json.Marshal(map[string]any{"object": "list", "data": data})
	} else {
		q := r.URL.Query()
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil || limit <= 0 {
			limit = 20
		}
		from := 0
		if after := q.Get("after_id"); after != "" {
			for i, id := range ids {
				if id == after {
					from = i + 1
				}
			}
		}
		page := ids[from:min(len(ids), from+limit)]
		data := make([]any, 0, len(page))
		for _, id := range page {
			data = append(data, map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
		}
		doc := map[string]any{"data": data, "has_more": from+len(page) < len(ids), "first_id": nil, "last_id": nil}
		if len(page) > 0 {
			doc["first_id"], doc["last_id"] = page[0], page[len(page)-1]
		}
		body, _ = json.Marshal(doc)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
