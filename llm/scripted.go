package llm

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Reply is one scripted answer of a Scripted client.
type Reply struct {
	// Content is the answer's text.
	Content string
	// ToolCalls are the answer's tool calls (see NewToolCall); a call
	// without an ID gets "call_scripted_R_I" (R the request's number
	// from 1, I the call's from 0), one without a Type "function".
	ToolCalls []ToolCall
	// Err, when non-nil, is returned instead of an answer (for example a
	// *ServerError to test how a caller handles a failed call).
	Err error
	// Usage is reported as is; when zero it is estimated (about 4
	// characters per token).
	Usage Usage
	// FinishReason defaults to "stop", or "tool_calls" for an answer
	// with ToolCalls.
	FinishReason string
	// Delay makes the call wait before answering; a context that ends first
	// makes it return the context's error.
	Delay time.Duration
}

// Scripted is an in-process Client for tests: it answers from a script
// instead of a model. A request is answered by
//
//  1. the first rule (added with When) whose text occurs in the text of
//     the request's last message, or of its tool results when it ends in
//     them (MatchText); rules stay and may answer many times;
//  2. else the next reply of the queue (NewScripted, Reply), consumed once;
//  3. else the fallback set with Otherwise;
//  4. else an error naming the unscripted request.
//
// Streamed requests (OnDelta set) get the content in up to three pieces.
// A request whose tools fail Request.CheckTools is refused as the real
// clients refuse it. Every request is recorded, including failed ones.
// Scripted is safe for concurrent use.
type Scripted struct {
	script Script[Reply] // has its own lock, taken after mu

	mu       sync.Mutex // guards the fields below
	requests []Request
	misses   []string // last messages of unscripted requests
}

var _ Client = (*Scripted)(nil)

// NewScripted returns a Scripted client that answers with replies, in order.
func NewScripted(replies ...Reply) *Scripted {
	s := &Scripted{}
	s.script.Reply(replies...)
	return s
}

// Reply appends replies to the queue and returns s.
func (s *Scripted) Reply(replies ...Reply) *Scripted {
	s.script.Reply(replies...)
	return s
}

// When adds a rule: answer reply whenever the last message contains the
// text contains. Rules are checked in the order added, before the queue.
func (s *Scripted) When(contains string, reply Reply) *Scripted {
	s.script.When(contains, reply)
	return s
}

// Otherwise sets the answer to requests that neither a rule nor the queue
// answers, and returns s.
func (s *Scripted) Otherwise(reply Reply) *Scripted {
	s.script.Otherwise(reply)
	return s
}

// Requests returns a copy of every request received, oldest first.
func (s *Scripted) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Messages = slices.Clone(r.Messages)
		out[i] = r
	}
	return out
}

// Remaining returns how many queued replies were not consumed yet.
func (s *Scripted) Remaining() int {
	return s.script.Remaining()
}

// TB is the part of testing.TB that Verify uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Verify fails t if a queued reply was never consumed, a rule never
// matched, or a request found no scripted answer.
func (s *Scripted) Verify(t TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	replies, rules := s.script.Unused()
	for _, r := range replies {
		t.Errorf("llm.Scripted: reply %q was never consumed", r.Content)
	}
	for _, contains := range rules {
		t.Errorf("llm.Scripted: rule When(%q) never matched", contains)
	}
	for _, m := range s.misses {
		t.Errorf("llm.Scripted: unscripted request, last message %q", m)
	}
}

// Complete answers req from the script.
func (s *Scripted) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	reply, n, err := s.next(req)
	if err != nil {
		return nil, err
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("chat completion: %w", ctx.Err())
		}
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	if req.OnDelta != nil {
		for _, piece := range splitPieces(reply.Content, 3) {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("chat completion: %w", err)
			}
			req.OnDelta(piece)
		}
	}
	resp := &Response{
		Content:      reply.Content,
		Model:        req.Model,
		Usage:        reply.Usage,
		FinishReason: reply.FinishReason,
	}
	for i, c := range reply.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_scripted_%d_%d", n, i)
		}
		if c.Type == "" {
			c.Type = "function"
		}
		resp.ToolCalls = append(resp.ToolCalls, c)
	}
	if resp.Model == "" {
		resp.Model = "scripted"
	}
	switch {
	case resp.FinishReason != "":
	case len(resp.ToolCalls) > 0:
		resp.FinishReason = "tool_calls"
	default:
		resp.FinishReason = "stop"
	}
	if resp.Usage == (Usage{}) {
		resp.Usage = estimateUsage(req.Messages, reply.Content)
	}
	return resp, nil
}

// next records req as request number n (from 1) and picks its reply.
func (s *Scripted) next(req Request) (reply Reply, n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := req
	rec.Messages = slices.Clone(req.Messages)
	rec.Tools = slices.Clone(req.Tools)
	s.requests = append(s.requests, rec)
	n = len(s.requests)
	if err := req.CheckTools(); err != nil {
		return Reply{}, n, fmt.Errorf("chat completion: %w", err)
	}
	last := MatchText(req.Messages)
	if reply, ok := s.script.Next(last); ok {
		return reply, n, nil
	}
	s.misses = append(s.misses, last)
	return Reply{}, n, fmt.Errorf("llm.Scripted: no scripted reply for request %d (last message %q)", n, last)
}

// splitPieces cuts s into at most n pieces of about equal length, on rune
// boundaries. An empty s gives no pieces.
func splitPieces(s string, n int) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	size := (len(runes) + n - 1) / n
	var out []string
	for i := 0; i < len(runes); i += size {
		out = append(out, string(runes[i:min(i+size, len(runes))]))
	}
	return out
}

// estimateUsage guesses token counts at about 4 characters per token.
func estimateUsage(msgs []Message, answer string) Usage {
	prompt := 0
	for _, m := range msgs {
		prompt += estimateTokens(m.Content) + 4 // per-message overhead, as OpenAI counts it
	}
	completion := estimateTokens(answer)
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func estimateTokens(s string) int { return (len(s) + 3) / 4 }
