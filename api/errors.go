package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
)

// Codes of the errors the routes answer with, in the error object's
// "code".
const (
	CodeBadRequest       = "bad_request"
	CodeBadRevision      = "bad_revision"
	CodeBadLimit         = "bad_limit"
	CodeBadCursor        = "bad_cursor"
	CodeNotFound         = "not_found"
	CodeUnknownRevision  = "unknown_revision"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeAnswered         = "answered"
	CodeTooLarge         = "too_large"
	CodeInternal         = "internal"
)

// Error is an error a route answers with: its status, code and message.
type Error struct {
	Status  int
	Code    string
	Message string
	// Answer, on a 409 of an answered escalation, is the answer that won.
	Answer *tract.EscalationAnswer
}

func (e *Error) Error() string { return e.Message }

func badRequest(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

// writeError answers with err: an *Error as it is; any other error
// classified by what it wraps.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away: no one to answer
	}
	e := classify(err)
	doc := map[string]any{"message": e.Message, "code": e.Code}
	if e.Answer != nil {
		doc["answer"] = e.Answer
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": doc})
}

// classify turns a library error into the status and code it answers
// with.
func classify(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var answered *tract.AnsweredError
	var ambiguous *refs.AmbiguousError
	switch {
	case errors.As(err, &answered):
		a := answered.Answer
		return &Error{Status: http.StatusConflict, Code: CodeAnswered, Message: err.Error(), Answer: &a}
	case errors.As(err, &ambiguous):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRevision, Message: err.Error() + ": give more of the hash"}
	case errors.Is(err, tract.ErrBadRevision), errors.Is(err, tract.ErrInvalidBranchName):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRevision,
			Message: err.Error() + ": give a hash (4 to 64 hex digits), a branch, HEAD, ORIG_HEAD, REV~N or REV^"}
	case errors.Is(err, tract.ErrUnknownRevision):
		return &Error{Status: http.StatusNotFound, Code: CodeUnknownRevision, Message: err.Error()}
	case errors.Is(err, tract.ErrBadEscalationID):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error()}
	case errors.Is(err, tract.ErrEscalationNotFound), errors.Is(err, tract.ErrBranchNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeInternal, Message: err.Error()}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error()}
}
