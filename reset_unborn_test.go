package tract_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

func TestResetUnborn_SoftKeepsTheCommitsAsOrphans(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 2, "m")

	res, err := tr.ResetUnborn(ctx, tract.Soft, tract.ResetIf(hs[1]), tract.ResetReflog("cancel", "cancel: took the first message back"))
	require.NoError(t, err)
	assert.Equal(t, hs[1], res.From)
	assert.True(t, res.To.IsZero())
	assert.Equal(t, 2, res.Orphaned)

	st, err := tr.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", st.Branch)
	assert.True(t, st.Head.IsZero(), "the branch is unborn")
	assert.Equal(t, hs[1], st.OrigHead)
	cs, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Empty(t, cs)

	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Empty(t, h.Commits)
	require.Len(t, h.Orphans, 1)
	assert.Equal(t, "cancel", h.Orphans[0].Action)
	assert.Equal(t, []string{"m 1", "m 0"}, texts(h.Orphans[0].Commits))

	for _, ref := range []string{"main", "HEAD"} {
		rl, err := tr.Reflog(ctx, ref)
		require.NoError(t, err, ref)
		require.NotEmpty(t, rl, ref)
		assert.Equal(t, hs[1], rl[0].Old, ref)
		assert.True(t, rl[0].New.IsZero(), ref)
		assert.Equal(t, "cancel: took the first message back", rl[0].Message, ref)
	}
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)

	// The next commit starts the branch again, with no parent; the old
	// chain comes back with a reset to ORIG_HEAD.
	fresh, err := tr.User(ctx, "again")
	require.NoError(t, err)
	info, err := tr.Show(ctx, fresh.String())
	require.NoError(t, err)
	assert.Empty(t, info.Parents)
	_, err = tr.Reset(ctx, hs[1].String(), tract.Soft)
	require.NoError(t, err)
	cs, err = tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"m 1", "m 0"}, texts(cs))
}

func TestResetUnborn_HardErases(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "my key is sk-unborn-secret")
	require.NoError(t, err)
	res, err := tr.ResetUnborn(ctx, tract.Hard)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Deleted.Commits)
	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Empty(t, h.Commits)
	assert.Empty(t, h.Orphans)
	require.NoError(t, tr.Close())
	data, err := os.ReadFile(tr.Path())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "sk-unborn-secret")
}

func TestResetUnborn_Refusals(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	hs := commitChain(t, tr, 2, "m")

	t.Run("moved since read", func(t *testing.T) {
		_, err := tr.ResetUnborn(ctx, tract.Soft, tract.ResetIf(hs[0]))
		var conflict *tract.ConflictError
		require.ErrorAs(t, err, &conflict)
		assert.Equal(t, hs[1], conflict.Actual)
	})
	t.Run("detached HEAD", func(t *testing.T) {
		_, err := tr.Checkout(ctx, hs[0].String())
		require.NoError(t, err)
		t.Cleanup(func() {
			_, err := tr.Checkout(ctx, "main")
			require.NoError(t, err)
		})
		_, err = tr.ResetUnborn(ctx, tract.Soft)
		assert.ErrorIs(t, err, tract.ErrDetachedHead)
	})
	t.Run("a view's branch HEAD is not on", func(t *testing.T) {
		_, err := tr.CreateBranch(ctx, "other", "")
		require.NoError(t, err)
		_, err = tr.OnBranch("other").ResetUnborn(ctx, tract.Soft)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cease to exist")
	})
	t.Run("nothing changed", func(t *testing.T) {
		cs, err := tr.Log(ctx)
		require.NoError(t, err)
		assert.Len(t, cs, 2)
		b, err := tr.Branches(ctx)
		require.NoError(t, err)
		assert.Len(t, b, 2)
	})
	t.Run("already unborn", func(t *testing.T) {
		fresh := newTract(t)
		res, err := fresh.ResetUnborn(ctx, tract.Soft)
		require.NoError(t, err)
		assert.True(t, res.From.IsZero())
		assert.Zero(t, res.Orphaned)
	})
}
