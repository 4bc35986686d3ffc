package tract

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/retry"
)

// EscalationReason says why a validated turn stopped at once instead of
// spending its remaining attempts, or why a round of attempts ended.
type EscalationReason = record.EscalationReason

// The reasons of an EscalationError (and of an Escalation).
const (
	// EscalateMaxRetries is the reason of an Escalation whose round spent
	// every attempt (MaxAttempts) without an accepted answer. An
	// *EscalationError never has it: exhaustion is a *retry.ExhaustedError.
	EscalateMaxRetries = record.EscalateMaxRetries
	// EscalateAuth: the model server refused the API key (HTTP 401).
	EscalateAuth = record.EscalateAuth
	// EscalatePermission: the key may not do this (HTTP 403).
	EscalatePermission = record.EscalatePermission
	// EscalateMalformedRequest: the server rejected the request as
	// malformed (HTTP 400), or the client could not express it for its
	// provider (an error wrapping llm.ErrUnsupported).
	EscalateMalformedRequest = record.EscalateMalformedRequest
	// EscalateContextLength: the context exceeds the model's window.
	EscalateContextLength = record.EscalateContextLength
	// EscalateBlocked: a validator reported the answer blocked (see
	// retry.Verdict.Blocked; a "cmd:" command exiting with status 77).
	EscalateBlocked = record.EscalateBlocked
)

// EscalationError reports a validated turn (Chat, Generate) stopped by a
// failure that retrying cannot fix: the model server refused the request
// for a reason the next request would share, or a validator reported the
// answer blocked. The failed attempt and an error commit are recorded as
// for any failed turn (see Chat). errors.As reaches the model client's
// error through it (an *llm.AuthError, …).
type EscalationError struct {
	// Reason says why the turn could not go on.
	Reason EscalationReason
	// Task is the turn's task id ("" when none was given).
	Task string
	// Attempts is the number of model answers the turn got.
	Attempts int
	// Failures are the turn's failure records, in order, the one that
	// escalated last.
	Failures []FailureRecord
	// Err is the model client's error; nil when a validator reported the
	// answer blocked.
	Err error
}

// Error returns the EscalationError message: the model client's error, or
// what the validator reported.
func (e *EscalationError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	last := ""
	if n := len(e.Failures); n > 0 {
		last = ": " + e.Failures[n-1].Error
	}
	return fmt.Sprintf("attempt %d is blocked, which retrying cannot fix%s", e.Attempts, last)
}

// Unwrap returns the model client's error.
func (e *EscalationError) Unwrap() error { return e.Err }

// escalationOf says whether a model call's error escalates, and why.
func escalationOf(err error) (EscalationReason, bool) {
	var auth *llm.AuthError
	var ctxLen *llm.ContextLengthError
	var api *llm.APIError
	switch {
	case errors.As(err, &auth) && auth.StatusCode == http.StatusForbidden:
		return EscalatePermission, true
	case errors.As(err, &auth):
		return EscalateAuth, true
	case errors.As(err, &ctxLen):
		return EscalateContextLength, true
	case errors.As(err, &api) && api.StatusCode == http.StatusBadRequest && !isTyped(err),
		errors.Is(err, llm.ErrUnsupported): // a message the provider has no place for: never sent
		return EscalateMalformedRequest, true
	}
	return "", false
}

// isTyped reports an error of one of llm's typed kinds other than a bare
// *llm.APIError (a bad response, a transport failure, …).
func isTyped(err error) bool {
	var (
		bad       *llm.BadResponseError
		transport *llm.TransportError
		rate      *llm.RateLimitError
		server    *llm.ServerError
	)
	return errors.As(err, &bad) || errors.As(err, &transport) || errors.As(err, &rate) || errors.As(err, &server)
}

// modelFailureType classifies a failed model call: a timeout (the server's
// 408, a network timeout, a deadline that was not the caller's) or an
// execution error.
func modelFailureType(err error) retry.FailureType {
	var api *llm.APIError
	var netErr net.Error
	switch {
	case errors.As(err, &api) && api.StatusCode == http.StatusRequestTimeout,
		errors.As(err, &netErr) && netErr.Timeout(),
		errors.Is(err, context.DeadlineExceeded):
		return retry.FailureTimeout
	}
	return retry.FailureExecution
}
