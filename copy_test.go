package tract_test

import (
	"context"
	"encoding/json"
	"os"
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

// fillRepository gives tr something of every kind a copy must carry:
// branches, orphans of a reset (and ORIG_HEAD), a published pack from a
// multi-batch import, an open side chain, a STRANDED reflog entry, and an
// unpublished pack (an import that never finished).
func fillRepository(t *testing.T, tr *tract.Tract) {
	t.Helper()
	ctx := context.Background()
	commitChain(t, tr, 6, "main")
	_, err := tr.CreateBranch(ctx, "feature", "HEAD~1")
	require.NoError(t, err)
	commitChain(t, tr.OnBranch("feature"), 3, "feature")
	_, err = tr.Reset(ctx, "HEAD~2", tract.Soft)
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "bulk", "")
	require.NoError(t, err)
	_, err = tr.OnBranch("bulk").ImportSeq(ctx, func(yield func(tract.ImportMessage, error) bool) {
		for _, m := range chainMessages(40) {
			if !yield(m, nil) {
				return
			}
		}
	}, tract.ImportBatch(7, 64))
	require.NoError(t, err)
	head, err := tr.Resolve(ctx, "HEAD")
	require.NoError(t, err)
	side, err := tr.SideChain(ctx, head, "experiment")
	require.NoError(t, err)
	_, err = side.Commit(ctx, tract.KindNote, tract.RoleUser, "on the side")
	require.NoError(t, err)
	require.NoError(t, tr.Store().Update(ctx, func(tx store.Tx) error {
		if err := tx.AppendReflog(refs.Stranded, refs.Entry{Old: head, New: head, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Action: refs.ActionCommit, Message: "kept off refs/heads/main"}); err != nil {
			return err
		}
		p := tx.(store.PackTx)
		id, err := p.CreatePack(time.Now())
		if err != nil {
			return err
		}
		data := []byte("never published")
		return p.AppendPack(id, time.Now(), []store.PackEntry{{Kind: store.PackBlob, Hash: dag.Sum(data), Value: data}})
	}))
}

// snapshot is everything a store holds that a copy must carry.
type snapshot struct {
	Blobs    map[dag.Hash]string
	Commits  map[dag.Hash]string
	Counters map[dag.Hash]store.Counters
	Refs     []refs.Ref
	Reflogs  map[string][]refs.Entry
}

func snapshotOf(t *testing.T, st store.Store) snapshot {
	t.Helper()
	s := snapshot{Blobs: map[dag.Hash]string{}, Commits: map[dag.Hash]string{}, Counters: map[dag.Hash]store.Counters{}, Reflogs: map[string][]refs.Entry{}}
	require.NoError(t, st.View(context.Background(), func(tx store.Tx) error {
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, data []byte) error { s.Blobs[h] = string(data); return nil }))
		require.NoError(t, tx.ForEachCommit(func(h dag.Hash, raw []byte) error { s.Commits[h] = string(raw); return nil }))
		require.NoError(t, tx.ForEachCounters(func(h dag.Hash, c store.Counters) error { s.Counters[h] = c; return nil }))
		var err error
		s.Refs, err = tx.Refs()
		require.NoError(t, err)
		names, err := tx.ReflogNames()
		require.NoError(t, err)
		for _, n := range names {
			s.Reflogs[n], err = tx.Reflog(n)
			require.NoError(t, err)
		}
		return nil
	}))
	return s
}

// logAll returns LogAll of tr as JSON, for comparing two repositories.
func logAll(t *testing.T, tr *tract.Tract) string {
	t.Helper()
	h, err := tr.LogAll(context.Background())
	require.NoError(t, err)
	b, err := json.Marshal(h)
	require.NoError(t, err)
	return string(b)
}

func TestCopy_CarriesEverythingBetweenBackends(t *testing.T) {
	ctx := context.Background()
	boltSrc := func(t *testing.T) *tract.Tract { tr := newTract(t); fillRepository(t, tr); return tr }
	memSrc := func(t *testing.T) *tract.Tract {
		tr, err := tract.Init("mem", tract.WithStore(store.NewMemory()), tract.WithClock(stepClock()))
		require.NoError(t, err)
		fillRepository(t, tr)
		return tr
	}
	boltDst := func(t *testing.T) *tract.Tract { return newTract(t) }
	memDst := func(t *testing.T) *tract.Tract {
		tr, err := tract.Init("mem", tract.WithStore(store.NewMemory()))
		require.NoError(t, err)
		return tr
	}
	for _, tc := range []struct {
		name     string
		src, dst func(*testing.T) *tract.Tract
	}{
		{"bolt to bolt", boltSrc, boltDst},
		{"memory to bolt", memSrc, boltDst},
		{"bolt to memory", boltSrc, memDst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := tc.src(t), tc.dst(t)
			var reports []tract.Progress
			res, err := tract.CopyStore(ctx, src.Store(), dst.Store(), tract.CopyBatchBytes(512),
				tract.CopyProgress(func(p tract.Progress) { reports = append(reports, p) }))
			require.NoError(t, err)

			want, got := snapshotOf(t, src.Store()), snapshotOf(t, dst.Store())
			assert.Equal(t, want, got)
			assert.Contains(t, got.Reflogs, refs.Stranded)
			assert.Equal(t, int64(len(want.Blobs)), res.Blobs)
			assert.Equal(t, int64(len(want.Commits)), res.Commits)
			assert.Equal(t, int64(len(want.Counters)), res.Counters)
			assert.Equal(t, len(want.Refs), res.Refs)
			assert.Equal(t, 1, res.UnfinishedImports)
			assert.Greater(t, res.Batches, 1, "a small batch size splits the copy")
			require.NotEmpty(t, reports)
			assert.Equal(t, res.Blobs+res.Commits, reports[len(reports)-1].Done)

			assert.Equal(t, logAll(t, src), logAll(t, dst))
			r, err := dst.Fsck(ctx)
			require.NoError(t, err)
			assert.True(t, r.OK(), "fsck: %v", r.Problems)
			assert.Zero(t, r.UnfinishedImports, "the copy's pack is published, the source's unfinished one not copied")
		})
	}
}

func TestCopy_PathsCreateTheDestination(t *testing.T) {
	ctx := context.Background()
	src := newTract(t)
	fillRepository(t, src)
	dst := filepath.Join(t.TempDir(), "sub", "copy.db")

	res, err := tract.Copy(ctx, src.Path(), dst, tract.CopyOpenOptions(tract.WithNoSync()))
	require.NoError(t, err)
	assert.Equal(t, src.Path(), res.Source)
	assert.Equal(t, dst, res.Destination)

	out, err := tract.Open(dst)
	require.NoError(t, err)
	defer out.Close()
	assert.Equal(t, snapshotOf(t, src.Store()), snapshotOf(t, out.Store()))
	assert.Equal(t, logAll(t, src), logAll(t, out))
}

func TestCopy_RefusesWhatItCannotCopyInto(t *testing.T) {
	ctx := context.Background()
	src := newTract(t)
	commitChain(t, src, 2, "m")
	full := newTract(t)
	commitChain(t, full, 1, "other")
	empty := newTract(t)
	before := snapshotOf(t, empty.Store())

	_, err := tract.Copy(ctx, src.Path(), full.Path())
	assert.ErrorIs(t, err, tract.ErrNotEmpty)
	_, err = tract.Copy(ctx, src.Path(), src.Path())
	assert.ErrorIs(t, err, tract.ErrSameRepository)
	_, err = tract.Copy(ctx, filepath.Join(t.TempDir(), "missing.db"), filepath.Join(t.TempDir(), "new.db"))
	assert.ErrorIs(t, err, tract.ErrNotRepository)

	// An empty repository, as init leaves it, takes a copy.
	_, err = tract.CopyStore(ctx, src.Store(), empty.Store())
	require.NoError(t, err)
	assert.NotEqual(t, before, snapshotOf(t, empty.Store()))
}

// corruptStore returns a memory store holding a chain and an object (a
// blob or a commit, by which) stored under a hash its bytes do not have.
func corruptStore(t *testing.T, which string) (st *store.Memory, bad dag.Hash) {
	t.Helper()
	st = store.NewMemory()
	tr, err := tract.Init("mem", tract.WithStore(st), tract.WithClock(stepClock()))
	require.NoError(t, err)
	hs := commitChain(t, tr, 4, "m")
	require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error {
		c, err := tx.Commit(hs[2])
		require.NoError(t, err)
		c.Meta = []byte(`{"tampered":true}`)
		raw, err := dag.Encode(c)
		require.NoError(t, err)
		bad = dag.Sum([]byte("the key of other bytes"))
		e := store.PackEntry{Kind: store.PackBlob, Hash: bad, Value: []byte("tampered text")}
		if which == "commit" {
			e = store.PackEntry{Kind: store.PackCommit, Hash: bad, Value: raw}
		}
		p := tx.(store.PackTx)
		id, err := p.CreatePack(time.Now())
		require.NoError(t, err)
		require.NoError(t, p.AppendPack(id, time.Now(), []store.PackEntry{e}))
		return p.PublishPack(id)
	}))
	return st, bad
}

func TestCopy_CorruptObjectStopsTheCopyAndLeavesDestinationAsItWas(t *testing.T) {
	ctx := context.Background()
	for _, which := range []string{"blob", "commit"} {
		t.Run(which, func(t *testing.T) {
			src, bad := corruptStore(t, which)
			dst := newTract(t)
			before := snapshotOf(t, dst.Store())

			_, err := tract.CopyStore(ctx, src, dst.Store(), tract.CopyBatchBytes(64))
			require.ErrorIs(t, err, tract.ErrCorrupt)
			assert.Contains(t, err.Error(), which+" "+bad.String())
			assert.Equal(t, before, snapshotOf(t, dst.Store()))
			r, err := dst.Fsck(ctx)
			require.NoError(t, err)
			assert.Zero(t, r.UnfinishedImports, "the copy's pack is dropped")
		})
	}
}

func TestCopy_CorruptSourceFileLeavesNoDestination(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src.db")
	src, err := tract.Init(srcPath, tract.WithNoSync())
	require.NoError(t, err)
	commitChain(t, src, 3, "m")
	var bad dag.Hash
	require.NoError(t, src.Store().Update(ctx, func(tx store.Tx) error {
		bad = dag.Sum([]byte("the key of other bytes"))
		return tx.(store.HashedPutter).PutHashedBlob(bad, []byte("not what the key says"))
	}))
	require.NoError(t, src.Close())

	dst := filepath.Join(dir, "dst.db")
	_, err = tract.Copy(ctx, srcPath, dst)
	require.ErrorIs(t, err, tract.ErrCorrupt)
	assert.Contains(t, err.Error(), "blob "+bad.String())
	_, err = os.Stat(dst)
	assert.ErrorIs(t, err, os.ErrNotExist, "a destination the copy created is removed")

	// An empty file (a repository Init would make) is left empty.
	require.NoError(t, os.WriteFile(dst, nil, 0o600))
	_, err = tract.Copy(ctx, srcPath, dst)
	require.ErrorIs(t, err, tract.ErrCorrupt)
	st, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Zero(t, st.Size())
}

func TestCopy_WrongCountersEntryIsReported(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	tr, err := tract.Init("mem", tract.WithStore(st))
	require.NoError(t, err)
	hs := commitChain(t, tr, 3, "m")
	require.NoError(t, st.Update(ctx, func(tx store.Tx) error {
		return tx.PutCounters(hs[1], store.Counters{Depth: 7, Messages: 7, Tokens: 7})
	}))
	_, err = tract.CopyStore(ctx, st, store.NewMemory())
	require.ErrorIs(t, err, tract.ErrCorrupt)
	// Key order decides whether the entry itself or its child's is met
	// first: either way the error names it.
	assert.Contains(t, err.Error(), hs[1].Short())
}

func TestCopy_CancelledContextCopiesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := newTract(t)
	commitChain(t, src, 2, "m")
	dst := newTract(t)
	_, err := tract.CopyStore(ctx, src.Store(), dst.Store())
	assert.ErrorIs(t, err, context.Canceled)
	h, err := dst.LogAll(context.Background())
	require.NoError(t, err)
	assert.Empty(t, h.Commits)
}

// nopackStore hides the destination's packs, as a store without them.
type nopackStore struct{ store.Store }

type nopackTx struct{ store.Tx }

func (s nopackStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(nopackTx{tx}) })
}

func TestCopy_DestinationWithoutPacksTakesOneTransaction(t *testing.T) {
	ctx := context.Background()
	src := newTract(t)
	fillRepository(t, src)
	dst := store.NewMemory()
	res, err := tract.CopyStore(ctx, src.Store(), nopackStore{dst})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Batches)
	assert.Equal(t, snapshotOf(t, src.Store()), snapshotOf(t, dst))
}

// A commit whose blob or parent the source lacks stops the copy, naming
// both; a commit whose parent has no counters entry is checked against
// counters computed from the chain.
func TestCopy_ChecksBlobsParentsAndCountersOfEveryCommit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(tx store.Tx, hs []dag.Hash) error
		want   func(hs []dag.Hash, blob dag.Hash) string // "" when the copy succeeds
	}{
		{"missing blob", func(tx store.Tx, hs []dag.Hash) error {
			c, err := tx.Commit(hs[1])
			if err != nil {
				return err
			}
			return tx.DeleteBlob(c.Blob)
		}, func(hs []dag.Hash, blob dag.Hash) string {
			return "commit " + hs[1].String() + ": its blob " + blob.Short() + " is not stored"
		}},
		{"missing parent", func(tx store.Tx, hs []dag.Hash) error {
			if err := tx.DeleteCounters(hs[0]); err != nil {
				return err
			}
			return tx.DeleteCommit(hs[0])
		}, func(hs []dag.Hash, _ dag.Hash) string {
			return "commit " + hs[1].String() + ": its parent " + hs[0].Short() + " is not stored"
		}},
		{"parent without counters", func(tx store.Tx, hs []dag.Hash) error {
			return tx.DeleteCounters(hs[1])
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			tr, err := tract.Init("mem", tract.WithStore(st))
			require.NoError(t, err)
			hs := commitChain(t, tr, 3, "m")
			var blob dag.Hash
			require.NoError(t, st.Update(ctx, func(tx store.Tx) error {
				c, err := tx.Commit(hs[1])
				if err != nil {
					return err
				}
				blob = c.Blob
				return tc.damage(tx, hs)
			}))
			res, err := tract.CopyStore(ctx, st, store.NewMemory())
			if tc.want == nil {
				require.NoError(t, err)
				assert.EqualValues(t, 3, res.Commits)
				assert.EqualValues(t, 2, res.Counters, "the entry missing stays missing")
				return
			}
			require.ErrorIs(t, err, tract.ErrCorrupt)
			assert.Contains(t, err.Error(), tc.want(hs, blob))
		})
	}
}
