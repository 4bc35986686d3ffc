package tract_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/store"
)

// Compact shrinks the file after a hard reset erased most of it, and
// changes nothing in the repository.
func TestCompact_ShrinksAfterHardReset(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.Import(ctx, chain(2000, 400, "big"))
	require.NoError(t, err)
	_, err = tr.Reset(ctx, "HEAD~1900", tract.Hard)
	require.NoError(t, err)
	before, err := tr.LogAll(ctx)
	require.NoError(t, err)

	res, err := tr.Compact(ctx)
	require.NoError(t, err)
	assert.Equal(t, tr.Path(), res.Path)
	assert.Less(t, res.After, res.Before/3, "%d -> %d bytes", res.Before, res.After)
	after, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	_, err = tr.User(ctx, "and it goes on")
	require.NoError(t, err)

	mem, err := tract.Open("memory", tract.WithStore(store.NewMemory()))
	require.NoError(t, err)
	_, err = mem.Compact(ctx)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// Compact never makes a file larger: a freshly imported file, its pages
// already full, comes out no bigger (bbolt grows a file ahead of its
// pages; the compacted file ends where its pages do), at sizes on both
// sides of bbolt's 16 MiB allocation step, and compacting again changes
// nothing.
func TestCompact_FreshImportDoesNotGrow(t *testing.T) {
	for _, n := range []int{3_000, 40_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := context.Background()
			tr := newTract(t)
			_, err := tr.Import(ctx, chain(n, 300, "m"))
			require.NoError(t, err)
			before, err := tr.LogAll(ctx)
			require.NoError(t, err)

			res, err := tr.Compact(ctx)
			require.NoError(t, err)
			assert.LessOrEqual(t, res.After, res.Before, "%d -> %d bytes", res.Before, res.After)
			st, err := os.Stat(tr.Path())
			require.NoError(t, err)
			assert.Equal(t, res.After, st.Size())
			again, err := tr.Compact(ctx)
			require.NoError(t, err)
			assert.Equal(t, res.After, again.Before)
			assert.LessOrEqual(t, again.After, again.Before)

			after, err := tr.LogAll(ctx)
			require.NoError(t, err)
			assert.Equal(t, before, after)
			_, err = tr.User(ctx, "and it goes on")
			require.NoError(t, err)
		})
	}
}
