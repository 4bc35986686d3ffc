package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tractdag/tract"
)

// BranchInput is the input of the branch tool.
type BranchInput struct {
	Name string `json:"name" jsonschema:"the new branch's name"`
	From string `json:"from,omitempty" jsonschema:"the revision it starts at: a hash, a branch, HEAD~2…; default HEAD"`
}

// ResetInput is the input of the reset tool.
type ResetInput struct {
	Rev    string `json:"rev" jsonschema:"where to move the branch: a hash (4 or more hex digits), HEAD~1, another branch…"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch to move; default the one HEAD is on (or a detached HEAD)"`
	Expect string `json:"expect,omitempty" jsonschema:"the hash the branch's tip had when you read it: the reset happens only if it still has it, and otherwise fails with a conflict instead of moving another writer's work off the branch"`
}

// NoteInput is the input of the note tool.
type NoteInput struct {
	Text   string `json:"text" jsonschema:"the note's text"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch to commit the note on; default the one HEAD is on"`
	Expect string `json:"expect,omitempty" jsonschema:"the hash the branch's tip had when you read it: the note is committed only if it still has it, and otherwise fails with a conflict"`
}

// AnswerInput is the input of the answer_escalation tool.
type AnswerInput struct {
	ID          string `json:"id" jsonschema:"the escalation's id, as escalations lists it"`
	Action      string `json:"action" jsonschema:"retry (a fresh round of attempts), skip (give the task up), abort (stop there) or fix (a fresh round with instruction as the model's first guidance)"`
	Instruction string `json:"instruction,omitempty" jsonschema:"the guidance of a fix (required with fix, refused otherwise)"`
	By          string `json:"by,omitempty" jsonschema:"who answers, recorded with the answer; default mcp:CLIENT, the client's name"`
}

func addWriteTools(s *mcp.Server, r *repo) {
	addTool(s, "branch", "Fork a branch at a revision",
		"Create a branch at a revision (default HEAD) without moving HEAD, to try another approach from there. "+
			"A name that exists is refused.",
		writes, r.branch)
	addTool(s, "reset", "Move a branch back (soft)",
		"Move a branch (default HEAD's) to a revision, a restore point say, and set ORIG_HEAD to where it was. Soft: the "+
			"commits it leaves behind stay in the repository as orphans, which log with all lists. Give expect, the tip you "+
			"read, so that a branch another writer moved meanwhile is not reset but reported as a conflict.",
		writes, r.reset)
	addTool(s, "note", "Commit a note",
		"Commit a note (kind note, role system) on a branch (default HEAD's): an annotation kept in the history that the "+
			"model is not sent. Give expect, the tip you read, to commit only if the branch has not moved.",
		writes, r.note)
	addTool(s, "answer_escalation", "Answer a waiting escalation",
		"Answer an escalation escalations lists: retry, skip, abort, or fix with an instruction. The turn that waits goes on "+
			"with the answer. One answer wins: a second is refused, naming the first.",
		writes, r.answer, func(in *jsonschema.Schema) {
			in.Properties["action"].Enum = []any{"retry", "skip", "abort", "fix"}
		})
}

func (r *repo) branch(ctx context.Context, _ *mcp.CallToolRequest, in BranchInput) (*tract.Branch, error) {
	if strings.TrimSpace(in.Name) == "" {
		return nil, &InputError{Field: "name", Problem: "is empty: give the new branch's name"}
	}
	at, err := r.t.CreateBranch(ctx, in.Name, in.From)
	if err != nil {
		return nil, err
	}
	return &tract.Branch{Name: in.Name, Hash: at}, nil
}

// expected resolves a call's expect to a commit (ok false when it gave
// none).
func (r *repo) expected(ctx context.Context, expect string) (h tract.Hash, ok bool, err error) {
	if expect == "" {
		return tract.Hash{}, false, nil
	}
	h, err = r.t.Resolve(ctx, expect)
	if err != nil {
		return tract.Hash{}, false, &InputError{Field: "expect", Problem: fmt.Sprintf("%q names no commit (%v): give the tip's hash as log or status shows it", expect, err)}
	}
	return h, true, nil
}

func (r *repo) reset(ctx context.Context, _ *mcp.CallToolRequest, in ResetInput) (*tract.ResetResult, error) {
	if strings.TrimSpace(in.Rev) == "" {
		return nil, &InputError{Field: "rev", Problem: "is empty: give the revision to move the branch to"}
	}
	var opts []tract.ResetOption
	expect, ok, err := r.expected(ctx, in.Expect)
	if err != nil {
		return nil, err
	}
	if ok {
		opts = append(opts, tract.ResetIf(expect))
	}
	return r.on(in.Branch).Reset(ctx, in.Rev, tract.Soft, opts...)
}

func (r *repo) note(ctx context.Context, _ *mcp.CallToolRequest, in NoteInput) (*tract.CommitInfo, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, &InputError{Field: "text", Problem: "is empty: give the note's text"}
	}
	expect, ok, err := r.expected(ctx, in.Expect)
	if err != nil {
		return nil, err
	}
	t := r.on(in.Branch)
	var h tract.Hash
	if !ok {
		if h, err = t.Note(ctx, in.Text); err != nil {
			return nil, err
		}
		return t.Show(ctx, h.String())
	}
	// A compare-and-swap on the branch's tip: CommitChainOn moves the
	// branch only if it still stands at expect.
	name, tip, err := t.Head(ctx)
	switch {
	case err != nil:
		return nil, err
	case name == "":
		return nil, fmt.Errorf("note: %w", tract.ErrDetachedHead)
	case tip.IsZero():
		// No commits (or no branch): not where the caller read it.
		return nil, &tract.ConflictError{Ref: "refs/heads/" + name, Expected: expect}
	}
	hs, err := t.CommitChainOn(ctx, name, expect, []tract.ImportMessage{{Kind: tract.KindNote, Role: tract.RoleSystem, Content: in.Text}})
	if err != nil {
		return nil, err
	}
	return t.Show(ctx, hs[0].String())
}

func (r *repo) answer(ctx context.Context, req *mcp.CallToolRequest, in AnswerInput) (*tract.PendingEscalation, error) {
	res, err := tract.ResolutionOf(in.Action, in.Instruction)
	var pe *tract.ResolutionPartError
	if errors.As(err, &pe) {
		switch {
		case pe.Part == "action":
			return nil, &InputError{Field: "action", Problem: fmt.Sprintf("%q: give retry, skip, abort or fix", in.Action)}
		case pe.Missing:
			return nil, &InputError{Field: "instruction", Problem: "is empty: fix needs the guidance to give the model"}
		}
		return nil, &InputError{Field: "instruction", Problem: fmt.Sprintf("goes with fix only, not with %q", in.Action)}
	}
	if err != nil {
		return nil, err
	}
	res.By = strings.TrimSpace(in.By)
	if res.By == "" {
		res.By = clientName(req)
	}
	e, err := r.t.AnswerEscalation(ctx, in.ID, res)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// clientName is who answers when the call does not say: "mcp:" and the
// name the client gave in the handshake ("" when it gave none, which
// records the user and host of this process).
func clientName(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	p := req.Session.InitializeParams()
	if p == nil || p.ClientInfo == nil || strings.TrimSpace(p.ClientInfo.Name) == "" {
		return ""
	}
	return "mcp:" + strings.TrimSpace(p.ClientInfo.Name)
}

// InputError reports a tool's argument that is wrong, and how.
type InputError struct {
	// Field is the argument's name.
	Field string
	// Problem says what is wrong with it and what to give instead.
	Problem string
}

// Error returns the InputError message.
func (e *InputError) Error() string { return e.Field + " " + e.Problem }

var _ error = (*InputError)(nil)
