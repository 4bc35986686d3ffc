package tract_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// The names tract reserves cannot be given to a new branch, however it
// is made.
func TestBranchNames_ReservedNamesAreRefused(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 1, "m")
	for _, name := range []string{"HEAD", "ORIG_HEAD", "STRANDED", "@", "x.lock", "a..b", "-x", "a@{1}", "bell\a"} {
		t.Run(name, func(t *testing.T) {
			_, err := tr.CreateBranch(ctx, name, "")
			assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "branch")
			_, err = tr.Switch(ctx, name, true)
			assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "switch -c")
			_, err = tr.SwitchOrphan(ctx, name)
			assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "switch --orphan")
			_, err = tr.OnBranch(name).Status(ctx)
			assert.ErrorIs(t, err, tract.ErrInvalidBranchName, "a view")
		})
	}
	bs, err := tr.Branches(ctx)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, "main", bs[0].Name)
}

// A branch created before its name was reserved ("STRANDED", "@") stays
// usable: listed, switched to, checked out, committed to with a view,
// copied under a new name, its reflog read as refs/heads/NAME, and deleted.
func TestBranchNames_ExistingBranchWithReservedNameStaysUsable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	m, err := tr.User(ctx, "m")
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	// What a tract with looser rules wrote.
	db, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	require.NoError(t, db.Update(ctx, func(tx store.Tx) error {
		for _, name := range []string{"STRANDED", "@"} {
			full := refs.BranchRef(name)
			if err := tx.SetRef(refs.Ref{Name: full, Hash: m}); err != nil {
				return err
			}
			e := refs.Entry{New: m, Time: time.Now(), Action: refs.ActionBranch, Message: "branch: created from HEAD"}
			if err := tx.AppendReflog(full, e); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()

	for _, name := range []string{"STRANDED", "@"} {
		t.Run(name, func(t *testing.T) {
			bs, err := tr.Branches(ctx)
			require.NoError(t, err)
			var names []string
			for _, b := range bs {
				names = append(names, b.Name)
			}
			assert.Contains(t, names, name)

			st, err := tr.Checkout(ctx, name)
			require.NoError(t, err)
			assert.Equal(t, name, st.Branch, "checkout attaches HEAD to the branch")
			_, err = tr.Switch(ctx, "main", false)
			require.NoError(t, err)
			st, err = tr.Switch(ctx, name, false)
			require.NoError(t, err)
			assert.Equal(t, name, st.Branch)
			_, err = tr.Switch(ctx, "main", false)
			require.NoError(t, err)

			h, err := tr.OnBranch(name).User(ctx, "on "+name)
			require.NoError(t, err)
			es, err := tr.Reflog(ctx, refs.BranchRef(name))
			require.NoError(t, err)
			require.Len(t, es, 2)
			assert.Equal(t, h, es[0].New)

			renamed := "was-" + map[string]string{"STRANDED": "stranded", "@": "at"}[name]
			at, err := tr.CreateBranch(ctx, renamed, name)
			require.NoError(t, err)
			assert.Equal(t, h, at)
			was, err := tr.DeleteBranch(ctx, name)
			require.NoError(t, err)
			assert.Equal(t, h, was)
		})
	}
	es, err := tr.Reflog(ctx, "STRANDED")
	require.NoError(t, err)
	assert.Empty(t, es, "STRANDED names the reflog of results kept off their branches")
}

// A branch whose name starts with "refs/" has its reflog read under that
// name, as a revision names it, when no full ref has the name.
func TestBranchNames_ReflogOfBranchNamedLikeARef(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	m := commitChain(t, tr, 1, "m")
	_, err := tr.CreateBranch(ctx, "refs/x", "")
	require.NoError(t, err)

	es, err := tr.Reflog(ctx, "refs/x")

	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, "refs/heads/refs/x", es[0].Ref)
	assert.Equal(t, m[0], es[0].New)
	_, err = tr.Reflog(ctx, "refs/nosuch")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
}
