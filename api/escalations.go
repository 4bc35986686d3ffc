package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tractdag/tract"
)

// escalations answers GET /api/escalations: 'tract escalations --json'.
func (s *Server) escalations(w http.ResponseWriter, r *http.Request) error {
	es, err := s.t.Escalations(r.Context())
	if err != nil {
		return err
	}
	if es == nil {
		es = []tract.PendingEscalation{}
	}
	return writeJSON(w, es)
}

// escalation answers GET /api/escalations/ID: 'tract escalation show ID
// --json'.
func (s *Server) escalation(w http.ResponseWriter, r *http.Request) error {
	e, err := s.t.EscalationByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, e)
}

// AnswerRequest is the body of POST /api/escalations/ID/answer.
type AnswerRequest struct {
	// Action is retry, skip, abort or fix.
	Action string `json:"action"`
	// Text is a fix's instruction (required with fix, refused otherwise).
	Text string `json:"text,omitempty"`
	// By says who answers (optional).
	By string `json:"by,omitempty"`
}

// answer answers POST /api/escalations/ID/answer: 'tract escalation
// answer ID ACTION [TEXT] --json'. A second answer is a 409 naming the
// first.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge,
			Message: fmt.Sprintf("the body is over %d bytes: an answer is {\"action\":…,\"text\":…,\"by\":…}", tooLarge.Limit)}
	}
	if err != nil {
		return badRequest(CodeBadRequest, "read the body: %v", err)
	}
	var req AnswerRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badRequest(CodeBadRequest, "the body is not an answer (%v): send {\"action\":\"retry|skip|abort|fix\",\"text\":\"…\",\"by\":\"…\"}", err)
	}
	if dec.More() {
		return badRequest(CodeBadRequest, "the body holds more than one JSON value: send one answer object")
	}
	res, err := tract.ResolutionOf(req.Action, req.Text)
	var pe *tract.ResolutionPartError
	if errors.As(err, &pe) {
		switch {
		case pe.Part == "action":
			return badRequest(CodeBadRequest, "action %q: give retry, skip, abort or fix (with \"text\")", req.Action)
		case pe.Missing:
			return badRequest(CodeBadRequest, "action \"fix\" needs the instruction in \"text\"")
		}
		return badRequest(CodeBadRequest, "\"text\" goes with action \"fix\" only, not %q", req.Action)
	}
	if err != nil {
		return err
	}
	res.By = strings.TrimSpace(req.By)
	e, err := s.t.AnswerEscalation(r.Context(), r.PathValue("id"), res)
	if err != nil {
		return err
	}
	s.hub.kick()
	return writeJSON(w, e)
}
