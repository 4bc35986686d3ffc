package tract_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
)

// reflogShape is "action | message" per entry, newest first.
func reflogShape(es []tract.ReflogEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Action + " | " + e.Message
	}
	return out
}

// Reflog lists every move of HEAD or a branch, newest first, with where
// the ref was before and after: what an inspector of failed attempts
// needs, without opening store transactions.
func TestReflog_ListsMovesNewestFirst(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	first, err := tr.System(ctx, "Answer in JSON.")
	require.NoError(t, err)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("failed validation", llmtest.Answer(chatValid))
	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "side", "HEAD~1")
	require.NoError(t, err)

	head, err := tr.Reflog(ctx, "")
	require.NoError(t, err)
	require.NotEmpty(t, head)
	require.Len(t, head, 7)
	assert.Equal(t, res.Commit, head[0].New, "the newest move is the clean answer's commit")
	assert.Equal(t, "purify | purify: hid 1 failed attempt", reflogShape(head)[1], "after the purify reset")
	assert.Equal(t, res.User, head[1].New, "the purify went back to the user message")
	assert.Equal(t, refs.ActionCommit, head[2].Action, "the accepted attempt, before the purify")
	assert.Equal(t, first, head[len(head)-1].New, "the oldest is the first commit")
	assert.True(t, head[len(head)-1].Old.IsZero())
	for i, e := range head {
		assert.Equal(t, i, e.Index)
		assert.Equal(t, refs.HEAD, e.Ref)
		if i > 0 {
			assert.False(t, e.Time.After(head[i-1].Time), "newest first")
		}
	}
	main, err := tr.Reflog(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, reflogShape(head), reflogShape(main), "HEAD is on main: the same moves")
	full, err := tr.Reflog(ctx, "refs/heads/main")
	require.NoError(t, err)
	assert.Equal(t, main, full)

	side, err := tr.Reflog(ctx, "side")
	require.NoError(t, err)
	require.Len(t, side, 1)
	assert.Equal(t, "branch | branch: created from HEAD~1", reflogShape(side)[0])
	assert.Equal(t, res.User, side[0].New)

	stranded, err := tr.Reflog(ctx, refs.Stranded)
	require.NoError(t, err)
	assert.Empty(t, stranded, "no conflict, nothing stranded")

	_, err = tr.Reflog(ctx, "nope")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)

	// ReflogLimit: the newest moves only, indexed as in the whole reflog.
	for _, n := range []int{1, 3, 7, 9} {
		got, err := tr.Reflog(ctx, "", tract.ReflogLimit(n))
		require.NoError(t, err)
		assert.Equal(t, head[:min(n, len(head))], got, "n=%d", n)
	}
	got, err := tr.Reflog(ctx, "", tract.ReflogLimit(0))
	require.NoError(t, err)
	assert.Equal(t, head, got, "0: no limit")
	_, err = tr.Reflog(ctx, "nope", tract.ReflogLimit(2))
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
}

// A commit's reflog message quotes the first line of its text, up to 60
// runes.
func TestReflog_CommitMessageQuotesTheFirstLine(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	x60 := strings.Repeat("é", 60)
	for _, tc := range []struct{ text, want string }{
		{"short", "short"},
		{"two\nlines", "two"},
		{"windows\r\nlines", "windows"},
		{x60, x60},
		{x60 + "\nmore", x60},
		{x60 + "é", strings.Repeat("é", 59) + "…"},
		{strings.Repeat("x", 1<<20), strings.Repeat("x", 59) + "…"},
	} {
		_, err := tr.User(ctx, tc.text)
		require.NoError(t, err)
		head, err := tr.Reflog(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, "commit (message user): "+tc.want, head[0].Message)
	}
}

func TestReflogEntry_RefName(t *testing.T) {
	for ref, want := range map[string]string{
		"refs/heads/main":     "main",
		"refs/heads/feat/x":   "feat/x",
		"refs/heads/STRANDED": "refs/heads/STRANDED", // a branch named so before the name was reserved
		"refs/heads/HEAD":     "refs/heads/HEAD",
		"HEAD":                "HEAD",
		"STRANDED":            "STRANDED",
	} {
		assert.Equal(t, want, tract.ReflogEntry{Ref: ref}.RefName(), ref)
	}
}
