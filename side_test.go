package tract_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
)

// A side chain's turn moves no branch; once closed, its commits are orphans
// whose reason is the chain's, and a compare-and-swap reset adopts them.
func TestSideChain_TurnOffTheBranchThenAdopted(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("one"), llmtest.Answer("two"))
	_, err := tr.Chat(ctx, "first")
	require.NoError(t, err)
	_, tip, err := tr.Head(ctx)
	require.NoError(t, err)
	base := chatLog(t, tr)[1].Parents // the user message's parent: the root has none
	require.Empty(t, base)

	side, err := tr.SideChain(ctx, tract.Hash{}, "retry: attempt replacing the last interaction")
	require.NoError(t, err)
	user, err := side.User(ctx, "again")
	require.NoError(t, err)
	res, err := side.Generate(ctx)
	require.NoError(t, err)
	assert.Equal(t, "two", res.Text)
	branch, sideTip, err := side.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "", branch)
	assert.Equal(t, res.Commit, sideTip)
	require.NoError(t, side.Close())
	require.NoError(t, side.Close(), "closing twice is harmless")
	_, _, err = side.Head(ctx)
	assert.ErrorIs(t, err, tract.ErrClosed)

	_, now, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, tip, now, "the branch did not move")
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "retry: attempt replacing the last interaction", all.Orphans[0].Reason)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(all.Orphans[0].Commits))
	assert.Equal(t, user, all.Orphans[0].Commits[1].Hash)

	// A stale expectation moves nothing; the right one adopts the chain.
	_, err = tr.Reset(ctx, res.Commit.String(), tract.Soft, tract.ResetIf(user))
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	_, now, _ = tr.Head(ctx)
	assert.Equal(t, tip, now)
	_, err = tr.Reset(ctx, res.Commit.String(), tract.Soft, tract.ResetIf(tip), tract.ResetReflog("apply", "apply: attempt replaced it"))
	require.NoError(t, err)
	log, err := tr.Reflog(ctx, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, "apply", log[0].Action)
	assert.Equal(t, "apply: attempt replaced it", log[0].Message)
}

// A side chain on a commit starts there.
func TestSideChain_OnBase(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 2, "x")
	side, err := tr.SideChain(ctx, hs[0], "try")
	require.NoError(t, err)
	h, err := side.Assistant(ctx, "other")
	require.NoError(t, err)
	info, err := tr.Show(ctx, h.String())
	require.NoError(t, err)
	assert.Equal(t, []tract.Hash{hs[0]}, info.Parents)
	require.NoError(t, side.Close())
	_, now, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, hs[1], now)
}

// A side chain its program never closed (it crashed) is closed by GC once
// its ref has not moved for an hour: its commits become orphans, nothing
// is deleted, and a view of it still open fails instead of forking it.
func TestGC_ClosesAbandonedSideChains(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	tr := newTract(t, tract.WithClock(clock))
	hs := commitChain(t, tr, 2, "x")

	stale, err := tr.SideChain(ctx, hs[0], "try")
	require.NoError(t, err)
	attempt, err := stale.Assistant(ctx, "left behind")
	require.NoError(t, err)
	advance(2 * time.Hour)
	fresh, err := tr.SideChain(ctx, hs[1], "try")
	require.NoError(t, err)
	_, err = fresh.Assistant(ctx, "in progress")
	require.NoError(t, err)

	rm, err := tr.GC(ctx, tract.GCDryRun())
	require.NoError(t, err)
	assert.Equal(t, 1, rm.SideChains)
	refsBefore := sideRefs(t, tr)
	require.Len(t, refsBefore, 2, "a dry run closes nothing")

	rm, err = tr.GC(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, rm.SideChains)
	assert.Zero(t, rm.Commits, "closing deletes nothing")
	assert.Len(t, sideRefs(t, tr), 1, "the chain in progress stays open")

	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, attempt, all.Orphans[0].Commits[0].Hash)
	assert.Contains(t, all.Orphans[0].Reason, "side: closed by gc, unmoved since 2026-03-04T05:06:07Z")

	_, err = stale.Assistant(ctx, "too late")
	assert.ErrorIs(t, err, tract.ErrClosed)
	assert.Contains(t, err.Error(), "closed by gc")
	_, err = fresh.Assistant(ctx, "still going")
	assert.NoError(t, err)
	require.NoError(t, stale.Close(), "closing a chain GC closed is harmless")
	require.NoError(t, fresh.Close())
}

// sideRefs returns the names of the side chains' refs.
func sideRefs(t *testing.T, tr *tract.Tract) []string {
	t.Helper()
	all, err := tr.LogAll(context.Background())
	require.NoError(t, err)
	var out []string
	for _, c := range all.Commits {
		for _, name := range c.Refs {
			if strings.Contains(name, "side/") {
				out = append(out, name)
			}
		}
	}
	return out
}
