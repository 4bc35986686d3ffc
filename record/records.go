package record

import (
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// Failure is what a failed attempt of a validated turn records about its
// failure, under KeyFailure: a task's failure record. The JSON names are
// those of the record; fields that do not apply are left out.
type Failure struct {
	// Attempt is the failed attempt's number, from 1.
	Attempt int `json:"attempt"`
	// Timestamp is when the failure was found.
	Timestamp time.Time `json:"timestamp"`
	// Type classifies the failure: execution_error (the model call failed
	// after its transport retries, or its answer was empty or could not be
	// stored), verification_failed (a validator rejected the answer),
	// timeout (a "cmd:" validator ran past its time limit, or the model
	// call timed out), rejected (an "llm:" judge rejected it).
	Type retry.FailureType `json:"failure_type"`
	// Error is a one-line summary, at most 200 characters.
	Error string `json:"error"`
	// Details is the full diagnosis (or the model call's error).
	Details string `json:"details,omitempty"`
	// Command, ExitCode and OutputSummary describe a failing "cmd:"
	// validator's run: the command, its exit status (nil when it did not
	// exit: it timed out or was killed) and the last lines of its output.
	Command       string `json:"command,omitempty"`
	ExitCode      *int   `json:"exit_code,omitempty"`
	OutputSummary string `json:"output_summary,omitempty"`
	// SuggestedFix is what a validator suggested, when one did, else what
	// the turn's analyzer suggested.
	SuggestedFix string `json:"suggested_fix,omitempty"`
	// RootCauseGuess is the analyzer's guess at the failure's cause.
	RootCauseGuess string `json:"root_cause_guess,omitempty"`
	// AnalysisError is set when the analyzer failed: its error.
	AnalysisError string `json:"analysis_error,omitempty"`
	// Escalation is set when this failure stopped the turn at once, as
	// retrying could not fix it: why (see EscalationReason).
	Escalation EscalationReason `json:"escalation,omitempty"`
	// Round is the round of attempts the failure ended in, from the
	// second on (see Escalation); 0 (left out) in the first.
	Round int `json:"round,omitempty"`
}

// Provenance is how an accepted answer was reached, recorded on it (and,
// when every attempt failed, on the error commit that ends the turn).
type Provenance struct {
	// Attempts is how many answers the model gave, the accepted one
	// included: 1 for a first-try success.
	Attempts int `json:"attempts"`
	// Diagnoses are the rejected attempts' diagnoses, in order.
	Diagnoses []string `json:"diagnoses"`
	// Restore is the restore point: the commit the turn built on (its
	// user message), where purify reset the branch to.
	Restore dag.Hash `json:"restore,omitzero"`
	// Usage is summed over every attempt of the turn.
	Usage llm.Usage `json:"usage,omitzero"`
	// Model is the model that gave the last answer.
	Model string `json:"model,omitempty"`
}

// Fix records a validator's fix of an answer (see retry.Verdict.Fixed),
// under KeyFixed, on two commits: the answer as the model gave it, an
// attempt kept off the branch, whose Fix has By; and the fixed answer
// committed in its place on the branch, whose Fix has By and Original.
type Fix struct {
	// By names the validator that fixed the answer (its spec, "json";
	// several joined by ", ").
	By string `json:"by"`
	// Original is the commit of the answer as the model gave it; zero
	// (left out) on that commit itself.
	Original dag.Hash `json:"original,omitzero"`
}

// Attempt is what an answer of a validated turn records about itself.
type Attempt struct {
	// Attempt is the attempt number, from 1.
	Attempt int `json:"attempt"`
	// Valid is whether the validators accepted the answer; nil when none
	// ran.
	Valid *bool `json:"valid,omitempty"`
	// Diagnosis is why they rejected it.
	Diagnosis string `json:"diagnosis,omitempty"`
	// ValidatorError is set when a validator could not run.
	ValidatorError string `json:"validator_error,omitempty"`
	// Model answered; Usage is what this answer cost.
	Model string    `json:"model,omitempty"`
	Usage llm.Usage `json:"usage,omitzero"`
	// DurationMS is how long the attempt took, model call and
	// validation, in milliseconds.
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// Summary is the metadata of a summary commit that a compress made (its
// keys are the JSON names below).
type Summary struct {
	// Sources are the commits the summary replaces, in order.
	Sources []dag.Hash `json:"sources"`
	// TokensBefore and TokensAfter are the sizes of the sources and of
	// the summary; TokensEstimated says they were estimated (no tokenizer
	// was given).
	TokensBefore    int  `json:"tokens_before"`
	TokensAfter     int  `json:"tokens_after"`
	TokensEstimated bool `json:"tokens_estimated"`
	// Attempts and Diagnoses are those of the summary's validation.
	Attempts  int      `json:"attempts"`
	Diagnoses []string `json:"diagnoses"`
	// Model wrote the summary ("" when it was given); Usage is what that
	// cost over every attempt.
	Model string    `json:"model"`
	Usage llm.Usage `json:"usage"`
}

// Structured is what an answer records about the schema its request
// carried, under KeyStructured.
type Structured struct {
	// Schema is the schema's name.
	Schema string `json:"schema"`
	// Outcome is what became of it: "sent" (the request that answered
	// carried it), "rejected" (the server refused it, and the answer came
	// from a second request without it) or "unsupported" (the provider
	// cannot take this schema: none was sent).
	Outcome llm.StructuredOutcome `json:"outcome"`
	// Rejection is the server's refusal, with "rejected".
	Rejection string `json:"rejection,omitempty"`
}

// EscalationReason says why a round of attempts of a validated turn ended
// without an accepted answer, or why the turn stopped at once instead of
// spending its remaining attempts.
type EscalationReason string

// The reasons of an escalation.
const (
	// EscalateMaxRetries: the round spent every attempt without an
	// accepted answer.
	EscalateMaxRetries EscalationReason = "max_retries_exceeded"
	// EscalateAuth: the model server refused the API key (HTTP 401).
	EscalateAuth EscalationReason = "auth"
	// EscalatePermission: the key may not do this (HTTP 403).
	EscalatePermission EscalationReason = "permission"
	// EscalateMalformedRequest: the server rejected the request as
	// malformed (HTTP 400), or the client could not express it for its
	// provider (an error wrapping llm.ErrUnsupported: an audio part sent
	// to Anthropic, say).
	EscalateMalformedRequest EscalationReason = "malformed_request"
	// EscalateContextLength: the context exceeds the model's window.
	EscalateContextLength EscalationReason = "context_length"
	// EscalateBlocked: a validator reported the answer blocked (see
	// retry.Verdict.Blocked; a "cmd:" command exiting with status 77), or
	// the model declared the task blocked.
	EscalateBlocked EscalationReason = "blocked"
	// EscalateTransport: the model server stayed unavailable through the
	// client's transport retries (a 5xx answer, a persisting 429, a
	// connection that failed). It escalates only to an escalation hook;
	// without one the turn ends as after any failed model call.
	EscalateTransport EscalationReason = "transport"
)

// ResolutionAction is the answer to an escalation.
type ResolutionAction string

// The answers to an escalation.
const (
	// ResolveRetry runs a fresh round of attempts.
	ResolveRetry ResolutionAction = "retry"
	// ResolveSkip gives the task up, with a note recording the skip.
	ResolveSkip ResolutionAction = "skip"
	// ResolveAbort stops: the turn ends as without an escalation hook.
	ResolveAbort ResolutionAction = "abort"
	// ResolveFix runs a fresh round with an instruction given to the
	// model as high-priority guidance.
	ResolveFix ResolutionAction = "fix"
)

// Escalation is what a validated turn records, under KeyEscalation, about
// an escalation its hook answered: in a note before the round a retry or
// fix starts (on the attempts chain), in a note after a skip (on the
// branch: the skip record), and for an abort in the error commit that
// ends the turn (in a note when the turn wrote none: without purify).
type Escalation struct {
	// Round is the round that ended, from 1; Attempts the attempts it made.
	Round    int `json:"round"`
	Attempts int `json:"attempts"`
	// Reason says why the round ended.
	Reason EscalationReason `json:"reason"`
	// Resolution is the hook's answer, and Instruction a fix's guidance.
	Resolution  ResolutionAction `json:"resolution"`
	Instruction string           `json:"instruction,omitempty"`
	// Timestamp is when the hook answered (for an escalation that waited
	// in the repository, when its answer was committed).
	Timestamp time.Time `json:"timestamp"`
	// ID is the id of the escalation when it waited in the repository for
	// its answer (refs/escalations/ID; see WaitingEscalation); "" when the
	// hook answered in the turn's own process.
	ID string `json:"id,omitempty"`
	// By says who answered, when known: the answer's own word (user@host,
	// or a name given), "" when no one said.
	By string `json:"by,omitempty"`
}

// WaitingEscalation is what a validated turn records, under
// KeyWaitingEscalation, on the note that holds an escalation waiting in
// the repository for its answer: the question, and what the turn needs to
// go on once answered (in the process that waits, or in another one that
// resumes it). The note's parent is the turn's tip when it escalated (its
// last attempt), which stays the branch's tip while the escalation waits;
// the ref refs/escalations/ID points at the note until it is answered.
type WaitingEscalation struct {
	// ID is the escalation's id: short, typeable (see package escalation).
	ID string `json:"id"`
	// Branch is the full name of the ref the turn commits to
	// ("refs/heads/main", or "HEAD" when detached).
	Branch string `json:"branch"`
	// Task is the turn's task id ("" when none was given).
	Task string `json:"task,omitempty"`
	// Reason, Round and Attempts are those of the escalation (see
	// Escalation); MaxAttempts is the turn's attempts per round and
	// TotalAttempts the attempts of every round so far.
	Reason        EscalationReason `json:"reason"`
	Round         int              `json:"round"`
	Attempts      int              `json:"attempts"`
	MaxAttempts   int              `json:"max_attempts"`
	TotalAttempts int              `json:"total_attempts"`
	// Answers is how many answers the model gave (a failed model call is
	// an attempt with no answer).
	Answers int `json:"answers"`
	// Failures are the turn's failure records, every round, in order.
	Failures []Failure `json:"failures"`
	// Diagnoses are the rejected answers' diagnoses, in order.
	Diagnoses []string `json:"diagnoses"`
	// LastAnswer is the model's last answer ("" when it gave none).
	LastAnswer string `json:"last_answer,omitempty"`
	// ModelFailed says the round ended with a failed model call, whose
	// error commit the turn writes once the escalation is answered.
	ModelFailed bool `json:"model_failed,omitempty"`
	// Restore is the turn's restore point (its user message).
	Restore dag.Hash `json:"restore"`
	// Usage is the tokens the turn spent so far; Model the model that
	// answered last.
	Usage llm.Usage `json:"usage"`
	Model string    `json:"model,omitempty"`
	// Validators are the specs of the turn's validators ("json", …).
	Validators []string `json:"validators,omitempty"`
}

// EscalationAnswer is what the answer to an escalation that waited in the
// repository records, under KeyEscalationAnswer, on the note committed on
// the escalation's note (refs/escalations/ID moves to it).
type EscalationAnswer struct {
	// ID is the escalation's id.
	ID string `json:"id"`
	// Resolution is the answer, and Instruction a fix's guidance.
	Resolution  ResolutionAction `json:"resolution"`
	Instruction string           `json:"instruction,omitempty"`
	// By says who answered ("" when no one said).
	By string `json:"by,omitempty"`
}

// ToolStep is what each commit of a tool step of a validated turn
// records under KeyToolStep: the assistant's message that called tools,
// and each call's result (role tool).
type ToolStep struct {
	// Attempt is the attempt the step belongs to, from 1; Step is its
	// number in the attempt, from 1.
	Attempt int `json:"attempt"`
	Step    int `json:"step"`
	// Tool, on a result, is the tool called.
	Tool string `json:"tool,omitempty"`
	// Failure, on a result, says why the call got no result of the
	// tool's: "unknown_tool", "invalid_arguments" or "tool_error" (the
	// result's text says what was wrong).
	Failure string `json:"failure,omitempty"`
	// DurationMS, on a result, is how long the tool ran; on the call
	// message, how long the model took to answer.
	DurationMS int64 `json:"duration_ms,omitempty"`
}
