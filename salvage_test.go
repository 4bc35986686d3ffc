package tract_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// salvageSource writes a repository file that lost a commit and a text,
// as a damaged file does: main's chain m0…m9 without m5 (m6 still names
// it) and without m7's text; side named m5, and its reflog m2; and a
// chain x0–x1 that no ref reaches. It returns the path and the hashes.
func salvageSource(t *testing.T) (string, map[string]dag.Hash) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	hs := map[string]dag.Hash{}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		put := func(name string, parent dag.Hash, store bool, text bool) error {
			blob := dag.Sum([]byte(name))
			if text {
				if _, err := tx.PutBlob([]byte(name)); err != nil {
					return err
				}
			}
			c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: at}
			at = at.Add(time.Second)
			if !parent.IsZero() {
				c.Parents = []dag.Hash{parent}
			}
			h, err := c.Hash()
			if err != nil {
				return err
			}
			hs[name] = h
			if store {
				_, err = tx.PutCommit(c)
			}
			return err
		}
		var parent dag.Hash
		for i := range 10 {
			name := fmt.Sprintf("m%d", i)
			if err := put(name, parent, i != 5, i != 7); err != nil {
				return err
			}
			parent = hs[name]
		}
		if err := put("x0", dag.Hash{}, true, true); err != nil {
			return err
		}
		if err := put("x1", hs["x0"], true, true); err != nil {
			return err
		}
		for _, r := range []refs.Ref{{Name: "refs/heads/main", Hash: hs["m9"]}, {Name: "refs/heads/side", Hash: hs["m5"]}} {
			if err := tx.SetRef(r); err != nil {
				return err
			}
		}
		return tx.AppendReflog("refs/heads/side", refs.Entry{New: hs["m2"], Time: at, Action: refs.ActionBranch, Message: "branch: created"})
	}))
	return path, hs
}

// Salvage keeps every commit whose bytes verify: one whose parent was lost
// becomes the root of its chain, recorded as such; one whose text was lost
// keeps a marker for it; a ref whose commit was lost goes to the newest
// commit that survived on its chain; a chain no ref reaches gets a ref
// under refs/salvaged/. The rest of tract takes the boundaries: log stops
// there and says so, fsck counts them and finds the repository clean,
// status and compile count from the boundary, gc keeps everything, and a
// copy to a file carries the record.
func TestSalvage_LostParentAndTextAreRecordedBoundaries(t *testing.T) {
	ctx := context.Background()
	src, hs := salvageSource(t)
	out := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := tract.Salvage(ctx, src, out)
	require.NoError(t, err)
	assert.Equal(t, 11, rep.Commits, "every commit stored comes back")
	assert.Equal(t, []store.SalvageBoundary{{Commit: hs["m6"], LostParent: hs["m5"]}}, rep.Boundaries)
	assert.Equal(t, 1, rep.LostTexts)
	assert.Equal(t, []string{"refs/salvaged/" + hs["x1"].Short()}, rep.SalvagedRefs)
	lost := map[string]string{}
	for _, p := range rep.Lost {
		lost[p.Object] = p.Message
	}
	assert.Contains(t, lost["commit "+hs["m5"].Short()], "history is lost before "+hs["m6"].Short())
	assert.Contains(t, lost["ref refs/heads/side"], "set to "+hs["m4"].Short())
	assert.Contains(t, lost["blob "+dag.Sum([]byte("m7")).Short()], "the text of "+hs["m7"].Short()+" is lost")

	tr, err := tract.Open(out, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	check, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)
	assert.Equal(t, 1, check.SalvageBoundaries)
	assert.Equal(t, 1, check.LostTexts)

	// log: m9 … m6, where history was lost.
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	require.Len(t, log, 4)
	assert.Equal(t, hs["m6"], log[3].Hash)
	assert.Equal(t, hs["m5"], log[3].LostParent)
	assert.Equal(t, []dag.Hash{hs["m5"]}, log[3].Parents, "the commit keeps its bytes")
	assert.Equal(t, store.LostText(dag.Sum([]byte("m7"))), log[2].Text)
	for _, n := range []int{1, 2, 3, 4} {
		// Every page boundary of the walk ends the chain at m6 alike.
		log, err := tr.Log(ctx, tract.LogLimit(n))
		require.NoError(t, err)
		require.Len(t, log, n)
		assert.Equal(t, n == 4, !log[n-1].LostParent.IsZero())
	}
	side, err := tr.Log(ctx, tract.LogFrom("side"))
	require.NoError(t, err)
	assert.Equal(t, hs["m4"], side[0].Hash)
	assert.Len(t, side, 5)
	assert.True(t, side[4].LostParent.IsZero(), "m0 is a root")
	salvaged, err := tr.Log(ctx, tract.LogFrom("refs/salvaged/"+hs["x1"].Short()))
	require.NoError(t, err)
	assert.Len(t, salvaged, 2)

	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 4, "compile counts from the boundary")
	st, err := tr.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, st.Length)
	assert.Equal(t, 4, st.Messages)
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, all.Commits)

	removed, err := tr.GC(ctx, tract.GCExpiry(0))
	require.NoError(t, err)
	assert.Zero(t, removed.Commits, "gc keeps every salvaged chain")
	_, err = tr.User(ctx, "life goes on")
	require.NoError(t, err)
	check, err = tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)

	// A copy to a file carries the record; a store that cannot keep it
	// is refused before anything is written.
	dst := filepath.Join(t.TempDir(), "copy.db")
	_, err = tract.Copy(ctx, out, dst)
	require.NoError(t, err)
	check, err = tract.FsckFile(ctx, dst)
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)
	assert.Equal(t, 1, check.SalvageBoundaries)
	mem := store.NewMemory()
	_, err = store.Copy(ctx, tr.Store(), mem)
	assert.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
	require.NoError(t, mem.View(ctx, func(tx store.Tx) error {
		rs, err := tx.Refs()
		assert.Len(t, rs, 1, "only the new store's HEAD")
		return err
	}))
}

// The source file itself, checked before the salvage, reports the lost
// commit and text once each, not once per commit above them.
func TestFsckFile_LostParentIsOneProblem(t *testing.T) {
	src, hs := salvageSource(t)
	r, err := tract.FsckFile(context.Background(), src)
	require.NoError(t, err)
	var about []string
	for _, p := range r.Problems {
		about = append(about, p.String())
	}
	assert.Len(t, r.Problems, 3, "%v", about)
	assert.Contains(t, about, "commit "+hs["m6"].Short()+": parent "+hs["m5"].Short()+" is missing")
	assert.Contains(t, about, "commit "+hs["m7"].Short()+": blob "+dag.Sum([]byte("m7")).Short()+" is missing")
	assert.Contains(t, about, "ref refs/heads/side: points at missing commit "+hs["m5"].Short())
}

// A ref salvage made is deleted as a branch is, by its full name, once its
// chain is kept on a branch; a branch of that name would be deleted first,
// and any other ref outside refs/heads/ is no branch.
func TestDeleteBranch_DeletesASalvagedRef(t *testing.T) {
	ctx := context.Background()
	src, hs := salvageSource(t)
	out := filepath.Join(t.TempDir(), "salvaged.db")
	_, err := tract.Salvage(ctx, src, out)
	require.NoError(t, err)
	tr, err := tract.Open(out, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	ref := "refs/salvaged/" + hs["x1"].Short()

	_, err = tr.CreateBranch(ctx, "kept", ref)
	require.NoError(t, err)
	was, err := tr.DeleteBranch(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, hs["x1"], was)
	_, err = tr.Log(ctx, tract.LogFrom(ref))
	assert.ErrorIs(t, err, tract.ErrUnknownRevision)
	kept, err := tr.Log(ctx, tract.LogFrom("kept"))
	require.NoError(t, err)
	assert.Equal(t, hs["x1"], kept[0].Hash)
	_, err = tr.Reflog(ctx, ref)
	assert.ErrorIs(t, err, tract.ErrBranchNotFound, "its reflog goes with it")

	_, err = tr.DeleteBranch(ctx, ref)
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
	_, err = tr.DeleteBranch(ctx, "refs/side/x")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
	_, err = tr.DeleteBranch(ctx, "ORIG_HEAD")
	assert.ErrorIs(t, err, tract.ErrBranchNotFound)
	check, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)
}
