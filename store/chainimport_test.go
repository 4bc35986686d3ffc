package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// importChains imports n chains of two commits each into st, a batch of
// batch commits (1: through a pack, staging the refs where the store
// does), on refs/heads/c-1 … c-n; it returns the chains' tips.
func importChains(t *testing.T, st store.Store, n, batch int) ([]dag.Hash, error) {
	t.Helper()
	ctx := context.Background()
	at := time.Unix(1_700_000_000, 0).UTC()
	ci := store.NewChainImport(st.Update, func() time.Time { return at }, t.TempDir(), batch, 1<<20)
	defer ci.Close(ctx)
	var tips []dag.Hash
	for i := range n {
		var commits []store.NewCommit
		var blobs []store.NewBlob
		parent := dag.Hash{}
		for j := range 2 {
			data := fmt.Appendf(nil, "chain %d message %d", i, j)
			c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum(data), Time: at.Add(time.Duration(2*i + j))}
			if j > 0 {
				c.Parents = []dag.Hash{parent}
			}
			raw, err := dag.Encode(c)
			require.NoError(t, err)
			parent = dag.Sum(raw)
			commits = append(commits, store.NewCommit{Hash: parent, Commit: c, Raw: raw})
			blobs = append(blobs, store.NewBlob{Hash: c.Blob, Data: data})
		}
		require.NoError(t, ci.Add(commits, blobs))
		tips = append(tips, parent)
	}
	errExists := errors.New("exists")
	err := ci.Publish(ctx, refs.ActionImport, store.ImportedRefs{
		Ref:     func(i int) string { return refs.BranchRef(fmt.Sprintf("c-%d", i+1)) },
		Message: func(i, n int) string { return fmt.Sprintf("import: %d of %d", i+1, n) },
		Exists:  func(i int) error { return fmt.Errorf("%w: c-%d", errExists, i+1) },
	})
	return tips, err
}

// requireImported checks that st holds the refs importChains made, each
// with its one reflog entry, as every read sees them.
func requireImported(t *testing.T, st store.Store, tips []dag.Hash) {
	t.Helper()
	require.NoError(t, st.View(context.Background(), func(tx store.Tx) error {
		all, err := tx.Refs()
		require.NoError(t, err)
		seen := map[string]dag.Hash{}
		for i, r := range all {
			if i > 0 {
				require.Less(t, all[i-1].Name, r.Name, "Refs lists each ref once, in name order")
			}
			seen[r.Name] = r.Hash
		}
		names, err := tx.ReflogNames()
		require.NoError(t, err)
		for i, tip := range tips {
			name := refs.BranchRef(fmt.Sprintf("c-%d", i+1))
			r, err := tx.Ref(name)
			require.NoError(t, err)
			assert.Equal(t, tip, r.Hash)
			assert.Equal(t, tip, seen[name])
			es, err := tx.Reflog(name)
			require.NoError(t, err)
			require.Len(t, es, 1, name)
			assert.Equal(t, tip, es[0].New)
			assert.Equal(t, fmt.Sprintf("import: %d of %d", i+1, len(tips)), es[0].Message)
			assert.Contains(t, names, name)
			ok, err := tx.HasCommit(tip)
			require.NoError(t, err)
			assert.True(t, ok)
		}
		return nil
	}))
	rep, err := store.Fsck(context.Background(), st)
	require.NoError(t, err)
	assert.Empty(t, rep.Problems)
}

// bucketKeys returns the keys of the top-level bucket name of b's file
// (nil when there is no such bucket).
func bucketKeys(t *testing.T, b *store.Bolt, name string) []string {
	t.Helper()
	var out []string
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(name)); bk != nil {
			out = []string{}
			return bk.ForEach(func(k, _ []byte) error { out = append(out, string(k)); return nil })
		}
		return nil
	}))
	return out
}

// schemaOf returns the schema recorded in b's file.
func schemaOf(t *testing.T, b *store.Bolt) uint64 {
	t.Helper()
	var v uint64
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		v, _ = binary.Uvarint(tx.Bucket([]byte("meta")).Get([]byte("schema")))
		return nil
	}))
	return v
}

func TestChainImport_EveryStoreSetsEveryRef(t *testing.T) {
	for _, batch := range []int{1_000, 1} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			for name, st := range map[string]store.Store{"bolt": createBolt(t), "memory": store.NewMemory()} {
				tips, err := importChains(t, st, 40, batch)
				require.NoError(t, err, name)
				requireImported(t, st, tips)
			}
		})
	}
}

// A file stages the refs of an import that goes through a pack and
// publishes them with it as a refset, which MergePacks then folds into
// the refs and reflogs buckets: every read sees the same refs throughout.
func TestChainImport_RefsetIsPublishedThenFolded(t *testing.T) {
	b := createBolt(t)
	tips, err := importChains(t, b, 5000, 1)
	require.NoError(t, err)
	assert.Len(t, bucketKeys(t, b, "refsets"), 1, "the refs were published as one refset")
	assert.Empty(t, bucketKeys(t, b, "refstaging"))
	assert.Equal(t, uint64(store.SchemaVersion), schemaOf(t, b), "schema 5 for the refset, and 9 for the stored forms of texts a new file has")
	requireImported(t, b, tips)

	require.NoError(t, b.MergePacks(context.Background()))
	assert.Nil(t, bucketKeys(t, b, "refsets"), "MergePacks folded every refset")
	assert.Len(t, bucketKeys(t, b, "refs"), 5001) // and HEAD
	requireImported(t, b, tips)
}

// A ref that exists fails the import: nothing is published, and the pack
// and the staged refs are dropped.
func TestChainImport_ExistingRefImportsNothing(t *testing.T) {
	for _, batch := range []int{1_000, 1} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			b := createBolt(t)
			ctx := context.Background()
			require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
				h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: mustBlob(t, tx, "x"), Time: time.Unix(1, 0)})
				if err != nil {
					return err
				}
				return tx.SetRef(refs.Ref{Name: "refs/heads/c-3", Hash: h})
			}))
			_, err := importChains(t, b, 10, batch)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "exists: c-3")
			assert.Equal(t, []string{"HEAD", "refs/heads/c-3"}, bucketKeys(t, b, "refs"))
			assert.Nil(t, bucketKeys(t, b, "refsets"))
			assert.Empty(t, bucketKeys(t, b, "staging"))
			if ks := bucketKeys(t, b, "refstaging"); ks != nil {
				assert.Empty(t, ks)
			}
			require.NoError(t, b.View(ctx, func(tx store.Tx) error {
				names, err := tx.ReflogNames()
				assert.Empty(t, names)
				return err
			}))
		})
	}
}

func mustBlob(t *testing.T, tx store.Tx, text string) dag.Hash {
	t.Helper()
	h, err := tx.PutBlob([]byte(text))
	require.NoError(t, err)
	return h
}

// A write to a ref a refset holds moves the ref and its reflog out of the
// refset first: what it writes comes after the import's entry.
func TestRefsets_WritesToARefFoldItFirst(t *testing.T) {
	b := createBolt(t)
	ctx := context.Background()
	// A reflog left by a deleted ref of the same name, in the journal:
	// older than the import, it stays first.
	old := refs.Entry{New: dag.Sum([]byte("old")), Time: time.Unix(1, 0).UTC(), Action: refs.ActionCommit, Message: "before"}
	require.NoError(t, b.Update(ctx, func(tx store.Tx) error { return tx.AppendReflog("refs/heads/c-1", old) }))
	tips, err := importChains(t, b, 6, 1)
	require.NoError(t, err)
	require.Len(t, bucketKeys(t, b, "refsets"), 1)

	later := refs.Entry{Old: tips[0], New: tips[0], Time: time.Unix(2_000_000_000, 0).UTC(), Action: refs.ActionCommit, Message: "after"}
	require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
		if err := tx.AppendReflog("refs/heads/c-1", later); err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: "refs/heads/c-2", Hash: tips[0]}); err != nil {
			return err
		}
		if err := tx.DeleteRef("refs/heads/c-3"); err != nil {
			return err
		}
		return tx.ReplaceReflog("refs/heads/c-3", nil)
	}))
	require.NoError(t, b.View(ctx, func(tx store.Tx) error {
		es, err := tx.Reflog("refs/heads/c-1")
		require.NoError(t, err)
		require.Len(t, es, 3)
		assert.Equal(t, []string{"before", "import: 1 of 6", "after"}, []string{es[0].Message, es[1].Message, es[2].Message})
		tail, err := tx.(store.ReflogTailer).ReflogTail("refs/heads/c-1", 2)
		require.NoError(t, err)
		require.Len(t, tail, 2)
		assert.Equal(t, "after", tail[1].Message)
		tail, err = tx.(store.ReflogTailer).ReflogTail("refs/heads/c-4", 5)
		require.NoError(t, err)
		require.Len(t, tail, 1)

		r, err := tx.Ref("refs/heads/c-2")
		require.NoError(t, err)
		assert.Equal(t, tips[0], r.Hash)
		_, err = tx.Ref("refs/heads/c-3")
		assert.ErrorIs(t, err, store.ErrNotFound)
		all, err := tx.Refs()
		require.NoError(t, err)
		var names []string
		for _, r := range all {
			names = append(names, r.Name)
		}
		assert.Equal(t, []string{"HEAD", "refs/heads/c-1", "refs/heads/c-2", "refs/heads/c-4", "refs/heads/c-5", "refs/heads/c-6"}, names)
		logs, err := tx.ReflogNames()
		require.NoError(t, err)
		assert.NotContains(t, logs, "refs/heads/c-3")
		return nil
	}))
	assert.Equal(t, []string{"refs/heads/c-1", "refs/heads/c-2"}, foldedNames(t, b), "the refs written to were folded (c-3 then deleted), the others not")

	require.NoError(t, b.MergePacks(ctx))
	require.NoError(t, b.View(ctx, func(tx store.Tx) error {
		es, err := tx.Reflog("refs/heads/c-1")
		require.NoError(t, err)
		assert.Len(t, es, 3)
		return err
	}))
}

// foldedNames returns the refs named c-… that the refs bucket holds.
func foldedNames(t *testing.T, b *store.Bolt) []string {
	var out []string
	for _, k := range bucketKeys(t, b, "refs") {
		if strings.HasPrefix(k, "refs/heads/c-") {
			out = append(out, k)
		}
	}
	return out
}

// Salvage keeps refs a refset holds, with their reflogs; Compact folds
// them into the refs and reflogs buckets.
func TestRefsets_CompactAndSalvageKeepThem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	tips, err := importChains(t, b, 300, 1)
	require.NoError(t, err)
	require.Len(t, bucketKeys(t, b, "refsets"), 1)

	dst := filepath.Join(dir, "salvaged.db")
	rep, err := store.Salvage(context.Background(), path, dst)
	require.NoError(t, err)
	assert.Empty(t, rep.Lost)
	s, err := store.OpenBolt(dst, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	requireImported(t, s, tips)
	require.NoError(t, s.Close())

	_, _, err = b.Compact(context.Background())
	require.NoError(t, err)
	assert.Nil(t, bucketKeys(t, b, "refsets"), "Compact folds them")
	requireImported(t, b, tips)
	require.NoError(t, b.Close())
}
