package tract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

type shapeCommit struct {
	kind tract.Kind
	role tract.Role
}

func repeat(c shapeCommit, n int) []shapeCommit {
	out := make([]shapeCommit, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func repeatPairs(a, b shapeCommit, n int) []shapeCommit {
	var out []shapeCommit
	for range n {
		out = append(out, a, b)
	}
	return out
}

// LastTurn and PendingTurn read each shape of a branch's end.
func TestLastTurn_Shapes(t *testing.T) {
	type commit = shapeCommit
	var (
		system    = commit{tract.KindMessage, tract.RoleSystem}
		user      = commit{tract.KindMessage, tract.RoleUser}
		assistant = commit{tract.KindMessage, tract.RoleAssistant}
		errCommit = commit{tract.KindError, tract.RoleAssistant}
		note      = commit{tract.KindNote, tract.RoleSystem}
	)
	cases := []struct {
		name    string
		commits []commit
		state   tract.TurnState // 0: ErrNoTurn
		n       int             // Turn.Commits
		errors  int
		user    int // index of the user message in commits; -1 none
		first   int // index of the turn's first commit
	}{
		{name: "empty branch"},
		{name: "a lone system prompt", commits: []commit{system}},
		{name: "only notes", commits: []commit{note, note}},
		{name: "an assistant message after a system prompt", commits: []commit{system, assistant}},
		{name: "answered", commits: []commit{system, user, assistant}, state: tract.TurnAnswered, n: 2, user: 1, first: 1},
		{name: "answered with a provenance note", commits: []commit{user, assistant, note}, state: tract.TurnAnswered, n: 3, user: 0, first: 0},
		{name: "failed turn", commits: []commit{system, user, errCommit}, state: tract.TurnUnanswered, n: 2, errors: 1, user: 1, first: 1},
		{name: "skipped task", commits: []commit{user, assistant, user, errCommit, note}, state: tract.TurnUnanswered, n: 3, errors: 1, user: 2, first: 2},
		{name: "interrupted turn", commits: []commit{user, assistant, user}, state: tract.TurnUnanswered, n: 1, user: 2, first: 2},
		{name: "failure before the send", commits: []commit{user, assistant, errCommit}, state: tract.TurnNotSent, n: 1, errors: 1, user: -1, first: 2},
		{name: "two failures before the send", commits: []commit{user, assistant, note, errCommit, errCommit},
			state: tract.TurnNotSent, n: 2, errors: 2, user: -1, first: 3},
		{name: "a run of errors longer than the first look", commits: append([]commit{system, user, assistant, user}, repeat(errCommit, 30)...),
			state: tract.TurnUnanswered, n: 31, errors: 30, user: 3, first: 3},
		{name: "a long answered history", commits: repeatPairs(user, assistant, 20), state: tract.TurnAnswered, n: 2, user: 38, first: 38},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tr := newChatTract(t, nil)
			var hs []tract.Hash
			for _, c := range tc.commits {
				h, err := tr.Commit(ctx, c.kind, c.role, "text")
				require.NoError(t, err)
				hs = append(hs, h)
			}
			turn, err := tr.LastTurn(ctx)
			pending, perr := tr.PendingTurn(ctx)
			require.NoError(t, perr)
			if tc.state == 0 {
				assert.ErrorIs(t, err, tract.ErrNoTurn)
				assert.Nil(t, turn)
				assert.Nil(t, pending)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.state, turn.State)
			assert.Equal(t, tc.n, turn.Commits)
			assert.Equal(t, tc.errors, turn.Errors)
			assert.Equal(t, hs[len(hs)-1], turn.Tip)
			assert.Equal(t, hs[tc.first], turn.First)
			if tc.user >= 0 {
				assert.Equal(t, hs[tc.user], turn.User)
			} else {
				assert.True(t, turn.User.IsZero())
			}
			if tc.first > 0 {
				assert.Equal(t, hs[tc.first-1], turn.Base)
			} else {
				assert.True(t, turn.Base.IsZero())
			}
			if tc.state == tract.TurnUnanswered {
				assert.Equal(t, turn, pending)
			} else {
				assert.Nil(t, pending)
			}
		})
	}
}

// After exhausted validation the branch ends in the question and an
// error commit; RetryLast takes the error off (it stays an orphan), sends
// the question once more without committing it again, and the answer
// follows it.
func TestRetryLast_AfterExhaustion(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no"), llmtest.Answer("still no"))
	_, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	before := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(before))

	srv.Reply(llmtest.Answer(`{"name": "Ada"}`))
	res, err := tr.RetryLast(ctx, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, `{"name": "Ada"}`, res.Text)
	assert.Equal(t, before[1].Hash, res.User, "the same user message")

	log := chatLog(t, tr)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	assert.Equal(t, before[1].Hash, log[1].Hash)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []llm.Message{{Role: "user", Content: chatQuestion}}, reqs[2].Messages, "one user message, no error")

	reflog, err := tr.Reflog(ctx, "main")
	require.NoError(t, err)
	var moves []string
	for _, e := range reflog {
		moves = append(moves, e.Action)
	}
	assert.Equal(t, []string{"commit", tract.ActionRetryLast, "commit", "purify", "commit", "commit", "commit", "commit"}, moves)
	assert.Equal(t, "retry-last: dropped 1 commit after message "+before[1].Hash.Short()+" to answer it again", reflog[1].Message)

	var orphaned []tract.Hash
	for _, o := range chatLogAll(t, tr).Orphans {
		for _, c := range o.Commits {
			orphaned = append(orphaned, c.Hash)
		}
	}
	assert.Contains(t, orphaned, before[0].Hash, "the error commit stays inspectable")
}

// An interrupted turn leaves the message alone at the tip: RetryLast
// answers it with no move before the turn.
func TestRetryLast_LoneMessage(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	user, err := tr.User(ctx, chatQuestion)
	require.NoError(t, err)
	srv.Reply(llmtest.Answer("Ada"))

	res, err := tr.RetryLast(ctx)
	require.NoError(t, err)
	assert.Equal(t, user, res.User)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
	reflog, err := tr.Reflog(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, "commit", reflog[0].Action)
	assert.Len(t, reflog, 2)
}

// A failed retry ends as a failed Chat does: the message and one error
// commit, ready for another RetryLast.
func TestRetryLast_FailsAgain(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t, llm.WithMaxRetries(0))
	srv.Reply(llmtest.Error(500, "down"))
	_, err := tr.Chat(ctx, chatQuestion)
	require.Error(t, err)
	srv.Reply(llmtest.Error(500, "still down"))
	_, err = tr.RetryLast(ctx)
	var se *llm.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
	pending, err := tr.PendingTurn(ctx)
	require.NoError(t, err)
	require.NotNil(t, pending)
	assert.Equal(t, 2, pending.Commits)
}

// RetryLast refuses, before any model call, a branch with nothing to
// retry and a system prompt.
func TestRetryLast_Refusals(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	_, err := tr.RetryLast(ctx)
	assert.ErrorIs(t, err, tract.ErrNoTurn, "empty branch")

	srv.Reply(llmtest.Answer("Ada"))
	_, err = tr.Chat(ctx, chatQuestion)
	require.NoError(t, err)
	_, err = tr.RetryLast(ctx)
	assert.ErrorIs(t, err, tract.ErrNoTurn)
	assert.Contains(t, err.Error(), "nothing to retry: the branch's last message, ")
	assert.Contains(t, err.Error(), ", has its answer (")

	_, err = tr.User(ctx, "again")
	require.NoError(t, err)
	_, err = tr.RetryLast(ctx, tract.SystemPrompt("Be terse."))
	assert.ErrorContains(t, err, "system prompt")
	assert.Len(t, srv.Requests(), 1, "no model call after the first turn")

	// On a detached HEAD nothing moves.
	failed, err := tr.Commit(ctx, tract.KindError, tract.RoleAssistant, "failed")
	require.NoError(t, err)
	_, err = tr.Checkout(ctx, "HEAD")
	require.NoError(t, err)
	_, err = tr.RetryLast(ctx)
	assert.ErrorIs(t, err, tract.ErrDetachedHead)
	head, err := tr.Show(ctx, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, failed, head.Hash)
	assert.Len(t, srv.Requests(), 1)
}
