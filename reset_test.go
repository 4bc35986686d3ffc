package tract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// A soft reset counts as orphaned only the commits no ref reaches after
// it, not those still on another branch, HEAD or behind the target.
func TestReset_OrphanedCountsOnlyWhatNoRefReaches(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// setup gets the five commits of main, m 0 to m 4, and returns
		// what to reset (the handle or a view).
		setup func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract
		rev   string // "" for ResetUnborn
		want  int
	}{
		{"nothing else reaches them", nil, "HEAD~2", 2},
		{"a branch at the old tip", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			branchAt(t, tr, "keep", m[4])
			return tr
		}, "HEAD~1", 0},
		{"a branch in the middle", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			branchAt(t, tr, "keep", m[3])
			return tr
		}, "HEAD~3", 1},
		{"a branch forked off the chain", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			forkAt(t, tr, "keep", m[2])
			return tr
		}, "HEAD~4", 2},
		{"to a commit off the chain", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			forkAt(t, tr, "keep", m[2])
			return tr
		}, "keep", 2},
		{"several branches reach the same commits", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			forkAt(t, tr, "a", m[1])
			branchAt(t, tr, "b", m[3])
			branchAt(t, tr, "c", m[2])
			return tr
		}, "", 1},
		{"unborn with a branch below", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			forkAt(t, tr, "keep", m[2])
			return tr
		}, "", 2},
		{"a detached HEAD reaches them", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			_, err := tr.Checkout(ctx, m[3].String())
			require.NoError(t, err)
			return tr.OnBranch("main")
		}, "HEAD~4", 1},
		{"a view leaves HEAD's branch reaching them", func(t *testing.T, tr *tract.Tract, m []tract.Hash) *tract.Tract {
			branchAt(t, tr, "side", m[4])
			return tr.OnBranch("side")
		}, "HEAD~2", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTract(t)
			m := commitChain(t, tr, 5, "m")
			on := tr
			if tc.setup != nil {
				on = tc.setup(t, tr, m)
			}

			var res *tract.ResetResult
			var err error
			if tc.rev == "" {
				res, err = on.ResetUnborn(ctx, tract.Soft)
			} else {
				res, err = on.Reset(ctx, tc.rev, tract.Soft)
			}

			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Orphaned)
			h, err := tr.LogAll(ctx)
			require.NoError(t, err)
			orphans := 0
			for _, ch := range h.Orphans {
				orphans += len(ch.Commits)
			}
			assert.Equal(t, tc.want, orphans, "LogAll lists as orphans what Reset counted")
		})
	}
}

// branchAt creates branch name at h.
func branchAt(t *testing.T, tr *tract.Tract, name string, h tract.Hash) {
	t.Helper()
	_, err := tr.CreateBranch(context.Background(), name, h.String())
	require.NoError(t, err)
}

// forkAt creates branch name at h with one commit of its own.
func forkAt(t *testing.T, tr *tract.Tract, name string, h tract.Hash) {
	t.Helper()
	branchAt(t, tr, name, h)
	_, err := tr.OnBranch(name).Commit(context.Background(), tract.KindMessage, tract.RoleUser, "on "+name)
	require.NoError(t, err)
}

// REF@{N} names where REF pointed N moves ago, as Reflog numbers them; in
// a view, HEAD@{N} reads the view's branch's reflog.
func TestReset_ToReflogPosition(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	m := commitChain(t, tr, 3, "m")
	branchAt(t, tr, "side", m[0])
	side := tr.OnBranch("side")
	s1, err := side.User(ctx, "s1")
	require.NoError(t, err)
	_, err = side.User(ctx, "s2")
	require.NoError(t, err)

	res, err := tr.Reset(ctx, "HEAD~2", tract.Soft)
	require.NoError(t, err)
	require.Equal(t, m[0], res.To)
	res, err = tr.Reset(ctx, "HEAD@{1}", tract.Soft)
	require.NoError(t, err)
	assert.Equal(t, m[2], res.To, "HEAD@{1} undoes the last move")

	res, err = side.Reset(ctx, "HEAD@{1}", tract.Soft)
	require.NoError(t, err)
	assert.Equal(t, s1, res.To, "in a view, HEAD@{1} is the branch's previous position")
	_, h, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, m[2], h, "HEAD did not move")

	info, err := tr.Show(ctx, "main@{3}~1") // main@{3} is m 1, before the resets
	require.NoError(t, err)
	assert.Equal(t, m[0], info.Hash)
	_, err = tr.Show(ctx, "main@{9}")
	assert.ErrorIs(t, err, tract.ErrUnknownRevision)
}

// A mode that is neither Soft nor Hard is an error, and moves nothing:
// it must never fall through to the erasing path.
func TestReset_RefusesAnUnknownMode(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "u1")
	require.NoError(t, err)
	tip, err := tr.Assistant(ctx, "a1")
	require.NoError(t, err)
	_, err = tr.Reset(ctx, "HEAD~1", tract.ResetMode(99))
	require.ErrorIs(t, err, tract.ErrInvalidResetMode)
	_, err = tr.ResetUnborn(ctx, tract.ResetMode(-1))
	require.ErrorIs(t, err, tract.ErrInvalidResetMode)
	_, head, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, tip, head)
}
