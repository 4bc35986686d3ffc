package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// This file holds what every client of this package shares around its
// wire format: the retry loop with its backoff, and the fallback that asks
// once more without a schema the server refused.

// complete is the body of a client's Complete: it checks ctx and req
// (its tools with CheckTools),
// encodes req with encode and sends it with attempt, retrying transient
// failures. When the server refuses req.Schema (see schemaRefused), the
// request is sent once more without it and the Response says so.
func (c *settings) complete(ctx context.Context, req Request,
	encode func(Request) (body []byte, schemaSent bool, err error),
	attempt func(ctx context.Context, body []byte, req Request) (*Response, bool, error),
) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("chat completion: request has no messages")
	}
	if err := req.CheckTools(); err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	if req.OnReached != nil {
		req.OnReached = sync.OnceFunc(req.OnReached) // once, though a refused schema sends twice
	}
	send := func(req Request) (*Response, error) {
		body, sent, err := encode(req)
		if err != nil {
			return nil, err
		}
		resp, err := retryCall(ctx, c, "chat completion", cmp.Or(req.Model, c.model),
			func(ctx context.Context) (*Response, bool, error) { return attempt(ctx, body, req) })
		if err != nil {
			return nil, err
		}
		switch {
		case sent:
			resp.Structured = StructuredSent
		case req.Schema != nil:
			resp.Structured = StructuredUnsupported
		}
		return resp, nil
	}
	resp, err := send(req)
	if req.Schema == nil || !schemaRefused(err) {
		return resp, err
	}
	refusal := baseOf(err).Message
	req.Schema = nil
	if resp, err = send(req); err != nil {
		return nil, err
	}
	resp.Structured, resp.StructuredError = StructuredRejected, refusal
	return resp, nil
}

// schemaRefused reports whether err is a server's refusal of the
// structured-output part of a request: a 400 (or 422) that is no other
// typed error and whose message names the field (response_format,
// json_schema, a tool, a schema).
func schemaRefused(err error) bool {
	base, ok := err.(*APIError)
	if !ok || (base.StatusCode != http.StatusBadRequest && base.StatusCode != http.StatusUnprocessableEntity) {
		return false
	}
	text := strings.ToLower(base.Message + " " + base.Code)
	for _, w := range []string{"response_format", "json_schema", "schema", "tool", "output_format"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// retryCall makes a call with attempt, retrying transient failures up to
// c.maxRetries times with backoff; what names the call in a context error.
// attempt's second result says whether part of the answer was delivered,
// after which no retry is made.
//
// A call that finds no server (SetupUnreachable: a refused connection) is
// retried once, in case the server was starting, not c.maxRetries times:
// a server that is not running does not appear within the backoff. Once
// an attempt reached the server, a later refusal is no setup problem (the
// server went down) and is retried as any transient failure.
//
// The client's bounds (WithIdleTimeout, WithCallTimeout) apply to the
// call: attempt is given a context that a bound ends, and the call then
// fails with a *TimeoutError; model names the model it asks.
func retryCall[T any](ctx context.Context, c *settings, what, model string, attempt func(context.Context) (T, bool, error)) (T, error) {
	var zero T
	b := c.newBound(ctx, model)
	defer b.stop()
	ctx = b.ctx
	reached := false
	for n := 1; ; n++ {
		b.arm()
		resp, delivered, err := attempt(ctx)
		b.disarm()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			if te := b.timeout(n); te != nil {
				return zero, te
			}
			return zero, fmt.Errorf("%s: %w", what, ctx.Err())
		}
		base := baseOf(err)
		if base == nil { // not ours; should not happen
			return zero, err
		}
		base.Attempts, base.BaseURL = n, c.shownBaseURL()
		switch {
		case base.Setup != SetupUnreachable:
			reached = true
		case reached:
			base.Setup = ""
		case n > 1:
			return zero, err // refused twice: no server there
		}
		if !base.retryable || delivered || n > c.maxRetries {
			return zero, err
		}
		wait := c.wait(n, base)
		if c.onRetry != nil {
			c.onRetry(RetryEvent{Attempt: n, Err: err, Wait: wait})
		}
		if err := c.sleep(ctx, wait); err != nil {
			if te := b.timeout(n); te != nil {
				return zero, te
			}
			return zero, fmt.Errorf("%s: %w", what, err)
		}
	}
}

// shownBaseURL is the base URL as an error may show it: credentials
// redacted, a query shown as "?…".
func (c *settings) shownBaseURL() string { return c.redactor.redact(withoutQuery(c.baseURL)) }

// wait returns the pause before the retry that follows failed attempt n.
func (c *settings) wait(n int, base *APIError) time.Duration {
	if base.hasRetry {
		return min(base.retryAfter, MaxRetryAfter)
	}
	ceiling := c.maxBackoff
	if n-1 < 32 {
		ceiling = min(c.backoff<<(n-1), c.maxBackoff)
	}
	if ceiling <= 0 { // overflow
		ceiling = c.maxBackoff
	}
	return c.jitter(ceiling)
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fullJitter returns a uniformly random duration in [0, ceiling].
func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}
