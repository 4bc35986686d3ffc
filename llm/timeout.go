package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Defaults of the bounds on a call (WithIdleTimeout, WithCallTimeout).
const (
	// DefaultIdleTimeout is how long a call waits for the server's next
	// byte: its answer's start, or the next piece of a stream.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultCallTimeout is how long a call may take in all, its retries
	// and their backoff included.
	DefaultCallTimeout = 10 * time.Minute
)

// TimeoutError reports a call that a bound of the client ended: no byte
// came from the server for Idle (WithIdleTimeout), or the call took its
// whole allowance (WithCallTimeout). It is a transport failure: the
// server was asked and gave no answer in time. It is not retried, since
// another attempt would wait as long again.
type TimeoutError struct {
	APIError
	// Model is the model the call asked ("" when it names none: a model
	// list).
	Model string
	// After is the bound that ended the call; Idle says it was the wait
	// for the next byte, else the time of the whole call.
	After time.Duration
	Idle  bool
}

// Error returns the TimeoutError message, such as "no answer from
// llama3.2 at http://localhost:11434/v1 for 2m0s".
func (e *TimeoutError) Error() string {
	who := "the model server"
	if e.Model != "" {
		who = e.Model
	}
	if e.Idle {
		return fmt.Sprintf("no answer from %s at %s for %s", who, e.BaseURL, e.After)
	}
	return fmt.Sprintf("no complete answer from %s at %s within %s", who, e.BaseURL, e.After)
}

// Unwrap returns the error the TimeoutError wraps.
func (e *TimeoutError) Unwrap() error { return &e.APIError }

// Timeout reports true: a *TimeoutError is a timeout, as a net.Error's
// Timeout says.
func (e *TimeoutError) Timeout() bool { return true }

// WithIdleTimeout bounds the wait for the server's next byte: a call that
// receives nothing for d (no answer yet, or a stream that stalls) ends
// with a *TimeoutError. 0 removes the bound; the default is
// DefaultIdleTimeout. The wait between retries does not count.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *settings) {
		if d >= 0 {
			c.idleTimeout = d
		}
	}
}

// WithCallTimeout bounds a whole call, its retries and their waits
// included: a call still under way after d ends with a *TimeoutError. 0
// removes the bound; the default is DefaultCallTimeout. A context's
// deadline bounds a call as well, and ends it with the context's error.
func WithCallTimeout(d time.Duration) Option {
	return func(c *settings) {
		if d >= 0 {
			c.callTimeout = d
		}
	}
}

// bound enforces a client's bounds on one call: its context ends when a
// bound is reached, with the bound as its cause.
type bound struct {
	ctx    context.Context
	parent context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	model  string
	base   string

	// mu guards timer, which is re-armed by reads on the call's goroutine
	// and fires on its own.
	mu    sync.Mutex
	timer *time.Timer // the idle bound's; nil without one
	total *time.Timer // the call bound's; nil without one
}

// boundKey is the context key under which a call's bound travels to the
// body reads of its attempts.
type boundKey struct{}

// timeoutCause is the cause a bound cancels a call's context with.
type timeoutCause struct {
	after time.Duration
	idle  bool
}

func (t *timeoutCause) Error() string { return "model call timed out" }

// newBound starts the bounds of a call on ctx that asks model.
func (c *settings) newBound(ctx context.Context, model string) *bound {
	b := &bound{parent: ctx, idle: c.idleTimeout, model: model, base: c.shownBaseURL()}
	b.ctx, b.cancel = context.WithCancelCause(ctx)
	b.ctx = context.WithValue(b.ctx, boundKey{}, b)
	if c.callTimeout > 0 {
		d := c.callTimeout
		b.total = time.AfterFunc(d, func() { b.cancel(&timeoutCause{after: d}) })
	}
	return b
}

// arm starts the idle bound, when there is one, for an attempt.
func (b *bound) arm() {
	if b.idle <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer == nil {
		d := b.idle
		b.timer = time.AfterFunc(d, func() { b.cancel(&timeoutCause{after: d, idle: true}) })
		return
	}
	b.timer.Reset(b.idle)
}

// disarm stops the idle bound between attempts.
func (b *bound) disarm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
	}
}

// stop ends the bounds when the call is over.
func (b *bound) stop() {
	b.disarm()
	if b.total != nil {
		b.total.Stop()
	}
	b.cancel(nil)
}

// timeout returns the *TimeoutError of a call a bound ended after n
// attempts, or nil when none did (the caller's context ended, or the call
// failed otherwise).
func (b *bound) timeout(n int) error {
	var cause *timeoutCause
	if b.parent.Err() != nil || !errors.As(context.Cause(b.ctx), &cause) {
		return nil
	}
	return &TimeoutError{APIError: APIError{Attempts: n, BaseURL: b.base}, Model: b.model, After: cause.after, Idle: cause.idle}
}

// watchBody returns body, whose reads re-arm the idle bound of the call
// whose context is ctx, when it has one.
func watchBody(ctx context.Context, body io.ReadCloser) io.ReadCloser {
	b, ok := ctx.Value(boundKey{}).(*bound)
	if !ok || b.idle <= 0 {
		return body
	}
	b.arm() // the headers came
	return &watchedBody{ReadCloser: body, b: b}
}

// watchedBody is a response body whose reads re-arm an idle bound.
type watchedBody struct {
	io.ReadCloser
	b *bound
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 {
		w.b.arm()
	}
	return n, err
}
