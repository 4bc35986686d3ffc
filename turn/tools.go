package turn

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/tool"
)

// ToolStep is one tool step of a turn with Tools: a model answer that
// called tools, and the results its calls were sent.
type ToolStep struct {
	// Attempt is the attempt the step belongs to; Step its number in
	// the attempt, from 1.
	Attempt int `json:"attempt"`
	Step    int `json:"step"`
	// Commit is the assistant's message that made the calls; Results
	// are the results' commits (role tool), in the calls' order.
	Commit  dag.Hash   `json:"commit"`
	Results []dag.Hash `json:"results"`
	// Calls are the calls, each with the result it was sent.
	Calls []tool.Call `json:"calls"`

	pending []Pending // the commits as written, for purify to commit again
}

// ToolStepsError ends a turn whose model still called tools after
// MaxToolSteps tool steps of one attempt. The steps made are committed
// (with purify they leave the branch with the attempts, as after any
// failed model call); the answer that called again is not, and its calls
// are not run: they are Pending. An error commit records the failure.
type ToolStepsError struct {
	// Limit is MaxToolSteps; Attempt the attempt that reached it.
	Limit, Attempt int
	// Calls are the calls the attempt's tool steps ran, in order, with
	// their results.
	Calls []tool.Call
	// Pending are the calls of the answer that went over the limit,
	// which were not run.
	Pending []llm.ToolCall
}

// Error says that the limit was reached and what was not run.
func (e *ToolStepsError) Error() string {
	names := make([]string, len(e.Pending))
	for i, c := range e.Pending {
		names[i] = c.Function.Name
	}
	return fmt.Sprintf("attempt %d: the model called tools again after %s, the limit (MaxToolSteps); its calls of %s were not run",
		e.Attempt, english.Count(e.Limit, "tool step", "tool steps"), strings.Join(names, ", "))
}

// toolStepsError is the error of an answer that calls tools after the
// attempt's last allowed tool step.
func (g *generation) toolStepsError(a answer) *ToolStepsError {
	return &ToolStepsError{Limit: g.cfg.maxToolSteps, Attempt: g.attempt, Calls: traceOf(g.steps), Pending: a.calls}
}

// toolStep runs the calls of answer a, one after another in the order the
// model wrote them, with no transaction held, then commits a and the
// results in one transaction (Repo.CommitChain): a call message is never
// on the branch without its results. A context cancelled while the calls
// run stops the step before anything is written. It returns msgs with
// the step's messages after them, what the model is sent next.
func (g *generation) toolStep(ctx context.Context, msgs []llm.Message, a answer) ([]llm.Message, error) {
	n := len(g.steps) + 1
	calls := make([]tool.Call, len(a.calls))
	for i, c := range a.calls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		calls[i] = g.cfg.toolSet.Call(ctx, c)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	usage := a.usage
	chain := make([]Pending, 0, 1+len(calls))
	chain = append(chain, Pending{dag.KindMessage, dag.RoleAssistant, a.text, &record.Meta{
		ToolStep: &record.ToolStep{Attempt: g.attempt, Step: n, DurationMS: a.took.Milliseconds()},
		Model:    a.model, Usage: &usage, Task: g.cfg.task, Restore: g.freshRestore(), Shape: a.shape,
	}, fmt.Sprintf("tool call of attempt %d", g.attempt)})
	// msgs are the turn's own (Repo.Compile, Start.Messages): the step
	// appends to them in place when they have room.
	next := append(msgs, llm.Message{Role: string(dag.RoleAssistant), Content: a.content, ToolCalls: a.calls})
	limit := g.r.Limits().MessageSize
	for i := range calls {
		c := &calls[i]
		if n := int64(len(c.Result)); n > limit {
			c.Failure = tool.FailError
			c.Result = fmt.Sprintf("error: the result of %s is %s, over the repository's message size limit (%s); ask for less",
				c.Name, english.Bytes(n), english.Bytes(limit))
		}
		m := ingest.Message{Role: dag.RoleTool, Content: c.Result, ToolCallID: c.ID}
		text, shape, err := m.Stored()
		if err != nil {
			return nil, fmt.Errorf("the result of tool call %s cannot be kept: %w", c.ID, err)
		}
		chain = append(chain, Pending{dag.KindMessage, dag.RoleTool, text, &record.Meta{
			ToolStep: &record.ToolStep{Attempt: g.attempt, Step: n, Tool: c.Name, Failure: string(c.Failure), DurationMS: c.DurationMS},
			Task:     g.cfg.task, Shape: shape,
		}, fmt.Sprintf("result of tool call %s", c.ID)})
		next = append(next, llm.Message{Role: string(dag.RoleTool), Content: c.Result, ToolCallID: c.ID})
	}
	hs, err := g.r.CommitChain(ctx, g.tip, chain)
	if err != nil {
		return nil, err
	}
	g.tip = hs[len(hs)-1]
	g.steps = append(g.steps, ToolStep{Attempt: g.attempt, Step: n, Commit: hs[0], Results: hs[1:], Calls: calls, pending: chain})
	g.kept = g.steps
	return next, nil
}

// traceOf is every call of steps, in order: what a validator is given
// (tool.Trace).
func traceOf(steps []ToolStep) []tool.Call {
	var calls []tool.Call
	for _, s := range steps {
		calls = append(calls, s.Calls...)
	}
	return calls
}

// pendingOf is the commits of steps, in order, as they were written.
func pendingOf(steps []ToolStep) []Pending {
	var chain []Pending
	for _, s := range steps {
		chain = append(chain, s.pending...)
	}
	return chain
}

// recommitted is steps with the commits of their copies hs (the chain of
// pendingOf(steps), then one more commit).
func recommitted(steps []ToolStep, hs []dag.Hash) []ToolStep {
	out := slices.Clone(steps)
	for i := range out {
		s := &out[i]
		s.Commit, s.Results = hs[0], slices.Clone(hs[1:1+len(s.Calls)])
		hs = hs[1+len(s.Calls):]
	}
	return out
}
