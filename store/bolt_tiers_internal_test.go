package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

func TestPackPolicy_Group(t *testing.T) {
	p := packPolicy{fanIn: 4, inline: 100, max: 1000}
	stats := func(sizes ...int64) []packStat {
		var out []packStat
		for i, n := range sizes {
			out = append(out, packStat{id: uint64(i + 1), entries: n})
		}
		return out
	}
	ids := func(g []packStat) []uint64 {
		var out []uint64
		for _, s := range g {
			out = append(out, s.id)
		}
		return out
	}
	tests := []struct {
		name  string
		packs []packStat
		limit int64
		want  []uint64
	}{
		{"too few in any tier", stats(4, 5, 6, 20, 30, 40), 1000, nil},
		{"four of one tier, oldest first", stats(5, 20, 6, 7, 30, 8, 9), 1000, []uint64{1, 3, 4, 6}},
		{"lowest tier first", stats(20, 30, 40, 50, 4, 5, 6, 7), 1000, []uint64{5, 6, 7, 8}},
		{"a group past the limit waits", stats(20, 30, 40, 50), 100, nil},
		{"a higher tier within the limit", stats(20, 30, 40, 50, 4, 5, 6), 1000, []uint64{1, 2, 3, 4}},
		{"empty packs are tier 0", stats(0, 1, 2, 3), 1000, []uint64{1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ids(p.group(tt.packs, tt.limit)))
		})
	}
}

// tieredBolt returns a bbolt store whose packs merge by policy p.
func tieredBolt(t *testing.T, p packPolicy) *Bolt {
	t.Helper()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "tract.db"), BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	b.packs = p
	return b
}

// writeBlobPack writes n new blobs named by tag as one pack and returns
// their hashes.
func writeBlobPack(t *testing.T, b *Bolt, tag string, n int) []dag.Hash {
	t.Helper()
	var es []PackEntry
	var hs []dag.Hash
	for i := range n {
		data := []byte(fmt.Sprintf("%s %d", tag, i))
		h := dag.Sum(data)
		hs = append(hs, h)
		es = append(es, PackEntry{Kind: PackBlob, Hash: h, Value: data})
	}
	slices.SortFunc(es, PackEntry.Compare)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackWriter).WritePack(time.Now(), es) }))
	return hs
}

// requireBlobs checks that every blob of want reads back, that the store
// lists exactly them, and returns how many published and unpublished packs
// hold them.
func requireBlobs(t *testing.T, b *Bolt, want []dag.Hash) (published, unpublished int) {
	t.Helper()
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		for _, h := range want {
			_, err := tx.Blob(h)
			require.NoError(t, err)
		}
		n := 0
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, data []byte) error {
			n++
			assert.Equal(t, h, dag.Sum(data))
			return nil
		}))
		assert.Equal(t, len(want), n, "each blob listed once")
		var err error
		published, err = tx.(PackTx).PublishedPacks()
		require.NoError(t, err)
		infos, err := tx.(PackTx).UnpublishedPacks()
		require.NoError(t, err)
		unpublished = len(infos)
		return nil
	}))
	return published, unpublished
}

// Packs merge as they come, inline or over several transactions, and
// every object stays readable and listed once; the packs stay few.
func TestWritePack_MergesTiersAndKeepsEveryObject(t *testing.T) {
	b := tieredBolt(t, packPolicy{fanIn: 2, inline: 12, max: 1 << 20})
	ctx := context.Background()
	var all []dag.Hash
	for i := range 40 {
		all = append(all, writeBlobPack(t, b, fmt.Sprintf("pack %d", i), 5)...)
		require.NoError(t, b.MergePacks(ctx))
		published, unpublished := requireBlobs(t, b, all)
		assert.Zero(t, unpublished, "no merge left in progress")
		// One pack per tier at most: tiers from 5 to 200 entries.
		assert.LessOrEqual(t, published, 6, "after %d packs", i+1)
	}
	// A copy of an object (written again in a later pack) is merged away.
	again := writeBlobPack(t, b, "pack 0", 5)
	assert.Equal(t, all[:5], again)
	require.NoError(t, b.MergePacks(ctx))
	requireBlobs(t, b, all)
	report, err := Fsck(ctx, b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}

// twoPacksToMerge returns a store holding two packs of 8 blobs each that
// only MergePacks merges (their merge does not fit a transaction), and
// the blobs.
func twoPacksToMerge(t *testing.T) (*Bolt, []dag.Hash) {
	t.Helper()
	b := tieredBolt(t, packPolicy{fanIn: 2, inline: 3, max: 1 << 20})
	all := append(writeBlobPack(t, b, "first", 8), writeBlobPack(t, b, "second", 8)...)
	published, _ := requireBlobs(t, b, all)
	require.Equal(t, 2, published)
	return b, all
}

// A merge spans transactions; an object deleted from a pack it merges
// between two of them does not come back through its copy: the delete
// drops the copy, and the merge gives up.
func TestMergePacks_GivesUpWhenAnObjectIsDeleted(t *testing.T) {
	b, all := twoPacksToMerge(t)
	m, err := b.startMerge(context.Background())
	require.NoError(t, err)
	require.NotNil(t, m)
	done, err := b.stepMerge(context.Background(), m)
	require.NoError(t, err)
	require.False(t, done)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.DeleteBlob(all[15]) }))
	_, unpublished := requireBlobs(t, b, all[:15])
	assert.Zero(t, unpublished, "the delete dropped the merge's copy")

	done, err = b.stepMerge(context.Background(), m)
	require.NoError(t, err)
	assert.True(t, done)
	published, err := b.finishMerge(context.Background(), m)
	require.NoError(t, err)
	assert.False(t, published)
	packs, unpublished := requireBlobs(t, b, all[:15])
	assert.Equal(t, 2, packs, "nothing merged")
	assert.Zero(t, unpublished)

	// The next merge starts afresh and does not bring the blob back.
	require.NoError(t, b.MergePacks(context.Background()))
	packs, _ = requireBlobs(t, b, all[:15])
	assert.Equal(t, 1, packs)
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		_, err := tx.Blob(all[15])
		assert.ErrorIs(t, err, ErrNotFound)
		return nil
	}))
}

// Two merges of the same packs (two processes): the first to finish
// publishes; the other finds its packs gone and drops its copy.
func TestMergePacks_TheSecondOfTwoMergesGivesUp(t *testing.T) {
	b, all := twoPacksToMerge(t)
	first, err := b.startMerge(context.Background())
	require.NoError(t, err)
	second, err := b.startMerge(context.Background())
	require.NoError(t, err)
	require.NotNil(t, first)
	require.NotNil(t, second)
	assert.Equal(t, first.group, second.group)
	_, err = b.stepMerge(context.Background(), second)
	require.NoError(t, err)
	for done := false; !done; {
		done, err = b.stepMerge(context.Background(), first)
		require.NoError(t, err)
	}
	published, err := b.finishMerge(context.Background(), first)
	require.NoError(t, err)
	require.True(t, published)

	done, err := b.stepMerge(context.Background(), second)
	require.NoError(t, err)
	assert.True(t, done)
	published, err = b.finishMerge(context.Background(), second)
	require.NoError(t, err)
	assert.False(t, published)
	packs, unpublished := requireBlobs(t, b, all)
	assert.Equal(t, 1, packs)
	assert.Zero(t, unpublished)
}

// A cancelled MergePacks drops its merge in progress and leaves every
// object where it was.
func TestMergePacks_StopsWhenCancelled(t *testing.T) {
	b, all := twoPacksToMerge(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, b.MergePacks(ctx), context.Canceled)
	packs, unpublished := requireBlobs(t, b, all)
	assert.Equal(t, 2, packs)
	assert.Zero(t, unpublished)
}

// bbolt moves a bucket as its last commit left it, so a pack written in
// the transaction that would publish it is refused, not published empty.
func TestPublishPack_RefusesAPackWrittenInTheSameTransaction(t *testing.T) {
	b := tieredBolt(t, defaultPackPolicy())
	data := []byte("hello")
	entries := []PackEntry{{Kind: PackBlob, Hash: dag.Sum(data), Value: data}}
	var id uint64
	err := b.Update(context.Background(), func(tx Tx) error {
		p := tx.(PackTx)
		var err error
		if id, err = p.CreatePack(time.Now()); err != nil {
			return err
		}
		return p.PublishPack(id)
	})
	assert.ErrorIs(t, err, ErrPackWrittenInTx)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		var err error
		id, err = tx.(PackTx).CreatePack(time.Now())
		return err
	}))
	err = b.Update(context.Background(), func(tx Tx) error {
		p := tx.(PackTx)
		if err := p.AppendPack(id, time.Now(), entries); err != nil {
			return err
		}
		return p.PublishPack(id)
	})
	assert.ErrorIs(t, err, ErrPackWrittenInTx)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackTx).AppendPack(id, time.Now(), entries) }))
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackTx).PublishPack(id) }))
	requireBlobs(t, b, []dag.Hash{entries[0].Hash})
}

// A published pack whose info is damaged is read as it is and never
// merged: writes go on, and fsck reports it.
func TestWritePack_APackWithDamagedInfoIsLeftAloneAndReported(t *testing.T) {
	b := tieredBolt(t, packPolicy{fanIn: 2, inline: 1 << 10, max: 1 << 20})
	all := writeBlobPack(t, b, "damaged", 4)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		packs := tx.(*boltTx).tx.Bucket(bucketPacks)
		return packs.Bucket(packKey(1)).Put(keyPackInfo, []byte("junk"))
	}))
	for i := range 3 {
		all = append(all, writeBlobPack(t, b, fmt.Sprintf("after %d", i), 4)...)
		require.NoError(t, b.MergePacks(context.Background()))
	}
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		for _, h := range all {
			_, err := tx.Blob(h)
			require.NoError(t, err)
		}
		return nil
	}))
	report, err := Fsck(context.Background(), b)
	require.NoError(t, err)
	require.Len(t, report.Problems, 1)
	assert.Contains(t, report.Problems[0].String(), "pack 1: info of 4 bytes")
}
