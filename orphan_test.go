package tract_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

func TestSwitchOrphan_StartsAConversationWithNoHistory(t *testing.T) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"))
	require.NoError(t, err)
	defer tr.Close()
	old, err := tr.User(ctx, "first conversation")
	require.NoError(t, err)

	st, err := tr.SwitchOrphan(ctx, "chat-2")
	require.NoError(t, err)
	assert.Equal(t, "chat-2", st.Branch)
	assert.True(t, st.Head.IsZero(), "unborn")

	h, err := tr.User(ctx, "second conversation")
	require.NoError(t, err)
	info, err := tr.Show(ctx, h.String())
	require.NoError(t, err)
	assert.Empty(t, info.Parents, "a root commit")
	main, err := tr.Resolve(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, old, main, "the old branch is untouched")

	_, err = tr.SwitchOrphan(ctx, "main")
	require.ErrorIs(t, err, tract.ErrBranchExists)
	_, err = tr.SwitchOrphan(ctx, "bad name")
	require.Error(t, err)
	branch, _, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "chat-2", branch, "a refused switch leaves HEAD")
}
