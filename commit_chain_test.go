package tract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

func TestCommitChainOn_CreatesExtendsForksAndRefusesAMovedBranch(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	msgs := func(texts ...string) []tract.ImportMessage {
		var out []tract.ImportMessage
		for _, s := range texts {
			out = append(out, tract.ImportMessage{Role: tract.RoleUser, Content: s})
		}
		return out
	}
	// A new branch from a new root; HEAD stays where it was.
	hs, err := tr.CommitChainOn(ctx, "conv", tract.Hash{}, msgs("a", "b"), tract.WithReflogMessage("serve", "serve: 2 commits"))
	require.NoError(t, err)
	require.Len(t, hs, 2)
	tip, err := tr.Resolve(ctx, "conv")
	require.NoError(t, err)
	assert.Equal(t, hs[1], tip)
	_, head, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.True(t, head.IsZero())

	// Extending at the tip.
	more, err := tr.CommitChainOn(ctx, "conv", hs[1], msgs("c"))
	require.NoError(t, err)
	// A stale tip: nothing written, a conflict.
	_, err = tr.CommitChainOn(ctx, "conv", hs[1], msgs("d"))
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, more[0], conflict.Actual)
	assert.True(t, errors.Is(err, tract.ErrConflict))
	// A fork at an earlier commit, on a new branch.
	fork, err := tr.CommitChainOn(ctx, "conv-2", hs[0], msgs("x"))
	require.NoError(t, err)
	c, err := tr.Show(ctx, fork[0].String())
	require.NoError(t, err)
	assert.Equal(t, []tract.Hash{hs[0]}, c.Parents)
	// On a commit that does not exist: an error, nothing written.
	_, err = tr.CommitChainOn(ctx, "conv-3", tract.Hash{1}, msgs("y"))
	require.ErrorIs(t, err, tract.ErrUnknownRevision)
	_, err = tr.Resolve(ctx, "conv-3")
	assert.Error(t, err)
	// A bad name, and a message over its limit, write nothing.
	_, err = tr.CommitChainOn(ctx, "bad..name", tract.Hash{}, msgs("z"))
	assert.ErrorIs(t, err, tract.ErrInvalidBranchName)
	_, err = tr.CommitChainOn(ctx, "conv", more[0], []tract.ImportMessage{{Role: "wizard", Content: "z"}})
	require.Error(t, err)
	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, h.Commits, 4)
	entries, err := tr.Reflog(ctx, "conv")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	assert.Equal(t, "serve: 2 commits", entries[len(entries)-1].Message)
}

// Concurrent calls share transactions (group commit), and a group runs
// its calls' functions again without one that failed: a call that
// succeeds beside conflicting ones has its chain, as it returned it, on
// its branch.
func TestCommitChainOn_ConcurrentCallsBesideConflicts(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	base, err := tr.CommitChainOn(ctx, "base", tract.Hash{}, []tract.ImportMessage{{Role: tract.RoleSystem, Content: "root"}})
	require.NoError(t, err)
	const n = 32
	hs, errs := make([][]tract.Hash, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, at := fmt.Sprintf("c%d", i), base[0]
			if i%2 == 1 {
				name, at = "base", tract.Hash{} // base stands elsewhere: a conflict
			}
			hs[i], errs[i] = tr.CommitChainOn(ctx, name, at, []tract.ImportMessage{
				{Role: tract.RoleUser, Content: fmt.Sprintf("question %d", i)},
				{Role: tract.RoleAssistant, Content: fmt.Sprintf("answer %d", i)},
			})
		}()
	}
	wg.Wait()
	for i := range n {
		if i%2 == 1 {
			var conflict *tract.ConflictError
			assert.ErrorAs(t, errs[i], &conflict, "call %d", i)
			continue
		}
		require.NoError(t, errs[i], "call %d", i)
		log, err := tr.Log(ctx, tract.LogFrom(fmt.Sprintf("c%d", i)))
		require.NoError(t, err)
		require.Len(t, log, 3, "call %d", i)
		for j, want := range []string{fmt.Sprintf("answer %d", i), fmt.Sprintf("question %d", i)} {
			assert.Equal(t, hs[i][1-j], log[j].Hash, "call %d", i)
			m, err := log[j].Message()
			require.NoError(t, err)
			assert.Equal(t, want, m.Content, "call %d", i)
		}
		assert.Equal(t, base[0], log[2].Hash)
	}
	tip, err := tr.Resolve(ctx, "base")
	require.NoError(t, err)
	assert.Equal(t, base[0], tip)
}

// A chain's words, tokenised before its transaction, are the index's:
// a search finds each message by the words of its text and of its
// diagnosis, and fsck finds the index as the texts make it.
func TestCommitChainOn_SearchFindsEachMessage(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs, err := tr.CommitChainOn(ctx, "conv", tract.Hash{}, []tract.ImportMessage{
		{Role: tract.RoleUser, Content: "alpha question"},
		{Role: tract.RoleAssistant, Content: "beta answer", Meta: json.RawMessage(`{"diagnosis":"gamma broken"}`)},
		{Role: tract.RoleUser, Content: "delta question"},
	})
	require.NoError(t, err)
	for query, want := range map[string][]tract.Hash{
		"alpha": {hs[0]}, "beta": {hs[1]}, "gamma": {hs[1]}, "question": {hs[2], hs[0]},
	} {
		q, err := search.ParseQuery(query)
		require.NoError(t, err)
		var got []tract.Hash
		for c, err := range tr.Search(ctx, q) {
			require.NoError(t, err)
			got = append(got, c.Hash)
		}
		assert.Equal(t, want, got, query)
	}
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
	assert.Equal(t, tract.WordIndexOK, rep.WordIndex, rep.WordIndexProblem)
}
