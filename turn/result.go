package turn

import (
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
)

// Attempt describes one model answer of a turn.
type Attempt struct {
	// Number is the 1-based attempt number.
	Number int `json:"number"`
	// Max is the total number of attempts allowed.
	Max int `json:"max"`
	// OK says whether every validator passed.
	OK bool `json:"ok"`
	// Text is the model's answer.
	Text string `json:"text"`
	// Diagnosis is the validators' reason for rejecting the answer.
	Diagnosis string `json:"diagnosis,omitempty"`
	// Commit is the assistant commit that recorded the answer on the
	// attempts chain. When purify re-commits an accepted answer after
	// retries, Result.Commit names the clean copy on the branch.
	Commit dag.Hash `json:"commit"`
	// Usage is this attempt's token usage: its answer's (the calls of
	// its tool steps are counted in Result.Usage).
	Usage llm.Usage `json:"usage"`
	// FixedBy names the validator that fixed the answer, which was then
	// accepted as Fixed (OK is true); "" when none did.
	FixedBy string `json:"fixed_by,omitempty"`
	// Fixed is the answer as FixedBy fixed it.
	Fixed string `json:"fixed,omitempty"`
	// ToolSteps is the number of tool steps the attempt made before its
	// answer.
	ToolSteps int `json:"tool_steps,omitempty"`
}

// Result is the outcome of a turn (Chat, Generate, RetryLast). On failure it is returned
// along with the error, so the usage spent and the diagnoses are not lost;
// on a *refs.ConflictError that kept the (accepted) answer off the branch, Text
// and Commit are that answer.
type Result struct {
	// Text is the accepted answer ("" on failure); with tool calls, its
	// readable text (see llm.Message.Text).
	Text string `json:"answer"`
	// ToolCalls are the accepted answer's function calls, kept in its
	// commit's shape (see record.KeyShape); nil when it makes none.
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	// Commit is the accepted assistant commit on the branch (after purify,
	// the clean re-commit); on failure, the error commit if one was made.
	Commit dag.Hash `json:"commit"`
	// User is the user message's commit (zero for Generate).
	User dag.Hash `json:"user,omitzero"`
	// Attempts is the number of model answers.
	Attempts int `json:"attempts"`
	// Diagnoses are the failed attempts' diagnoses, in order.
	Diagnoses []string `json:"diagnoses"`
	// Usage is summed over every attempt.
	Usage llm.Usage `json:"usage"`
	// Model is the model that answered last.
	Model string `json:"model,omitempty"`
	// Purified is true when failed attempts were moved off the branch.
	Purified bool `json:"purified"`
	// FixedBy names the validator that fixed the accepted answer ("json";
	// several joined by ", "): Text is the fixed answer, committed on the
	// branch with no other model call, and Original the answer as the
	// model gave it. "" when no validator fixed it.
	FixedBy string `json:"fixed_by,omitempty"`
	// Original is the commit of the answer as the model gave it before
	// FixedBy fixed it: an attempt off the branch ('log --all'). Zero
	// when no validator fixed the answer.
	Original dag.Hash `json:"original,omitzero"`
	// History is every attempt, in order, with its answer, verdict, usage
	// and commit: what an inspector of the turn needs without Show. On
	// exhaustion its last entry holds the last answer.
	History []Attempt `json:"history"`
	// Steering are the steering commits the turn wrote after its failed
	// attempts, in order (empty when the first attempt passed).
	Steering []dag.Hash `json:"steering"`
	// ToolSteps are the tool steps of the accepted answer, in order (see
	// Tools), their commits those on the branch (after purify, the clean
	// copies); on failure, those of the last attempt that made any, as
	// they were written. Nil when it made none.
	ToolSteps []ToolStep `json:"tool_steps,omitempty"`
}

// AttemptDelta is one piece of an attempt's answer as the model streams
// it (see OnAttemptDelta).
type AttemptDelta struct {
	// Attempt is the 1-based number of the attempt the piece belongs to,
	// counting on across the rounds of an escalation, as Attempt.Number.
	Attempt int
	// Max is the number of the last attempt the round may make, as
	// Attempt.Max.
	Max int
	// Text is the piece of the answer.
	Text string
}
