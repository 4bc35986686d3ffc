package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
)

func filterKeys(tag string, n int) []dag.Hash {
	hs := make([]dag.Hash, n)
	for i := range hs {
		hs[i] = dag.Sum([]byte(fmt.Sprintf("%s %d", tag, i)))
	}
	return hs
}

// A filter holds every key added, a commit's counters key with it, and
// lets in few of the keys it was not given.
func TestPackFilter_HoldsEveryKeyAndFewOthers(t *testing.T) {
	for _, n := range []int{1, 100, 20_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newPackFilter(int64(n))
			in := filterKeys("in", n)
			for _, h := range in {
				f.add(h[:])
			}
			for _, h := range in {
				require.True(t, f.mayHave(h[:]), "key %s left out", h.Short())
				require.True(t, f.mayHave(countersKey(h)), "counters of %s left out", h.Short())
			}
			if n < 100 {
				return
			}
			out, let := filterKeys("out", 10*n), 0
			for _, h := range out {
				if f.mayHave(h[:]) {
					let++
				}
			}
			// 8 bits per key: about 2.5% expected.
			assert.Less(t, float64(let)/float64(len(out)), 0.04, "%d of %d let in", let, len(out))
		})
	}
}

func TestPackFilter_ShortKeysAndNoFilter(t *testing.T) {
	f := newPackFilter(10)
	assert.True(t, f.mayHave([]byte("short")), "a key too short to filter is never left out")
	f.add([]byte("short")) // no effect, no panic
	var none packFilter
	h := dag.Sum([]byte("x"))
	assert.True(t, none.mayHave(h[:]), "no filter: every key may be there")
}

// Any stored filter either decodes or is an encoding error, and a decoded
// one answers for any key, holding every key added to it.
func FuzzPackFilter(f *testing.F) {
	h := dag.Sum([]byte("x"))
	f.Add([]byte(newPackFilter(10)), h[:])
	f.Add([]byte{filterVersion}, []byte("short"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, v, key []byte) {
		pf, err := decodePackFilter(v)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, dag.ErrBadEncoding) {
				t.Fatalf("error %v does not wrap dag.ErrBadEncoding", err)
			}
			return
		}
		pf = append(packFilter(nil), pf...)
		pf.mayHave(key)
		pf.add(key)
		if !pf.mayHave(key) {
			t.Fatalf("key %x left out after add", key)
		}
	})
}

func TestDecodePackFilter(t *testing.T) {
	good := newPackFilter(100)
	tests := []struct {
		name string
		v    []byte
		err  string
	}{
		{"good", good, ""},
		{"empty", []byte{}, "empty"},
		{"version only", []byte{filterVersion}, "not whole blocks"},
		{"unknown version", append([]byte{9}, good[1:]...), "version 9"},
		{"cut block", good[:len(good)-1], "not whole blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodePackFilter(tt.v)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, packFilter(tt.v), f)
				return
			}
			assert.ErrorIs(t, err, dag.ErrBadEncoding)
			assert.ErrorContains(t, err, tt.err)
		})
	}
}

// packFilters returns the filter of every published pack (nil for one
// without), by pack id.
func packFilters(t *testing.T, b *Bolt) map[uint64]packFilter {
	t.Helper()
	out := map[uint64]packFilter{}
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		return tx.(*boltTx).eachPublishedPack(func(id uint64, _ PackInfo, err error) error {
			require.NoError(t, err)
			v := tx.(*boltTx).tx.Bucket(bucketPacks).Bucket(packKey(id)).Get(keyPackFilter)
			out[id] = packFilter(clone(v))
			return nil
		})
	}))
	return out
}

// A pack written in one transaction gets a filter holding its keys:
// WritePack, an inline merge, a merge over several transactions. A pack
// filled over several (an import) has none; a merge gives it one.
func TestPackFilter_EveryPublishedPackHasOne(t *testing.T) {
	b := tieredBolt(t, packPolicy{fanIn: 2, inline: 12, max: 1 << 20})
	var all []dag.Hash
	for i := range 6 { // merges inline (5+5) and over transactions (10+10)
		all = append(all, writeBlobPack(t, b, fmt.Sprintf("pack %d", i), 5)...)
		require.NoError(t, b.MergePacks(context.Background()))
	}
	var imported []dag.Hash
	var es []PackEntry
	for i := range 7 {
		data := []byte(fmt.Sprintf("imported %d", i))
		imported = append(imported, dag.Sum(data))
		es = append(es, PackEntry{Kind: PackBlob, Hash: dag.Sum(data), Value: data})
	}
	slices.SortFunc(es, PackEntry.Compare)
	var id uint64
	require.NoError(t, b.Update(context.Background(), func(tx Tx) (err error) {
		id, err = tx.(PackTx).CreatePack(time.Now())
		return err
	}))
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackTx).AppendPack(id, time.Now(), es[:5]) }))
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackTx).AppendPack(id, time.Now(), es[5:]) }))
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackTx).PublishPack(id) }))

	all = append(all, imported...)
	requireBlobs(t, b, all)
	filters := packFilters(t, b)
	require.Len(t, filters, 3, "the merged packs, the import")
	assert.Nil(t, filters[id], "the import's pack")
	for pid, f := range filters {
		if pid == id {
			continue
		}
		require.NotNil(t, f, "pack %d has no filter", pid)
		_, err := decodePackFilter(f)
		require.NoError(t, err)
	}
	report, err := Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)

	// Merged with the rest, the import's objects are in a filter too.
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		stats, err := tx.(*boltTx).publishedPackStats()
		if err != nil {
			return err
		}
		return tx.(*boltTx).mergePacks(time.Now(), stats)
	}))
	requireBlobs(t, b, all)
	filters = packFilters(t, b)
	require.Len(t, filters, 1)
	for _, f := range filters {
		for _, h := range all {
			assert.True(t, f.mayHave(h[:]), "%s left out", h.Short())
		}
	}
	report, err = Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}

// setFilter replaces (or, with nil, deletes) the filter of published pack
// id.
func setFilter(t *testing.T, b *Bolt, id uint64, v []byte) {
	t.Helper()
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		pb := tx.(*boltTx).tx.Bucket(bucketPacks).Bucket(packKey(id))
		if v == nil {
			return pb.Delete(keyPackFilter)
		}
		return pb.Put(keyPackFilter, v)
	}))
	// No transaction of tract's changes a published pack's filter: the
	// session's copy must be forgotten, as it is after Exclusive.
	b.ss.mu.Lock()
	if s := b.ss.cur; s != nil {
		s.packs.reset()
	}
	b.ss.mu.Unlock()
}

// A pack without a filter (published before filters) or with one that
// does not decode is searched for every key; fsck reports the second. A
// filter that leaves keys out hides their objects, and fsck names them:
// lookups do go by the filter.
func TestPackFilter_MissingDamagedOrWrong(t *testing.T) {
	tests := []struct {
		name     string
		filter   []byte
		readable bool
		problem  string
	}{
		{"none", nil, true, ""},
		{"does not decode", []byte{7, 1, 2}, true, "pack 1: filter: pack filter of version 7"},
		{"leaves keys out", newPackFilter(4), false, "pack 1: filter leaves out blobs key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tieredBolt(t, defaultPackPolicy())
			hs := writeBlobPack(t, b, "pack", 4)
			require.NotNil(t, packFilters(t, b)[1])
			setFilter(t, b, 1, tt.filter)
			require.NoError(t, b.View(context.Background(), func(tx Tx) error {
				for _, h := range hs {
					_, err := tx.Blob(h)
					if tt.readable {
						assert.NoError(t, err)
					} else {
						assert.ErrorIs(t, err, ErrNotFound)
					}
				}
				return nil
			}))
			report, err := Fsck(context.Background(), b)
			require.NoError(t, err)
			if tt.problem == "" {
				assert.True(t, report.OK(), "%v", report.Problems)
				return
			}
			require.Len(t, report.Problems, 1)
			assert.Contains(t, report.Problems[0].String(), tt.problem)
		})
	}
}

// Deleting an object from a pack leaves its filter as it was, and the
// next write's lookups are not misled by it.
func TestPackFilter_DeletedObjectStaysGone(t *testing.T) {
	b := tieredBolt(t, defaultPackPolicy())
	hs := writeBlobPack(t, b, "pack", 4)
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.DeleteBlob(hs[0]) }))
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		ok, err := tx.HasBlob(hs[0])
		require.NoError(t, err)
		assert.False(t, ok)
		return nil
	}))
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
		_, err := tx.PutBlob([]byte("pack 0"))
		return err
	}))
	requireBlobs(t, b, hs)
	report, err := Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}

// A delete reaches every pack, whatever its filter says: a filter damaged
// into leaving a key out must not keep an erased text in the file.
func TestPackFilter_DeleteIgnoresTheFilter(t *testing.T) {
	b := tieredBolt(t, defaultPackPolicy())
	hs := writeBlobPack(t, b, "pack", 4)
	setFilter(t, b, 1, newPackFilter(4)) // leaves every key out
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.DeleteBlob(hs[0]) }))
	setFilter(t, b, 1, nil) // the pack is searched again
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		_, err := tx.Blob(hs[0])
		assert.ErrorIs(t, err, ErrNotFound, "deleted from the pack")
		_, err = tx.Blob(hs[1])
		assert.NoError(t, err)
		return nil
	}))
}

// A session keeps what it read of each published pack (its size and
// filter) only once the transaction that read it committed: a pack a
// rolled-back transaction wrote, read there, comes back under the same
// id with other objects, and lookups find those.
func TestPackFilter_KeptOnlyFromCommittedPacks(t *testing.T) {
	b := tieredBolt(t, defaultPackPolicy())
	first := writeBlobPack(t, b, "first", 3)
	pack := func(tag string) ([]PackEntry, []dag.Hash) {
		var es []PackEntry
		var hs []dag.Hash
		for i := range 3 {
			data := []byte(fmt.Sprintf("%s %d", tag, i))
			hs = append(hs, dag.Sum(data))
			es = append(es, PackEntry{Kind: PackBlob, Hash: dag.Sum(data), Value: data})
		}
		slices.SortFunc(es, PackEntry.Compare)
		return es, hs
	}
	rolledBack, lost := pack("rolled back")
	errUndo := errors.New("undo")
	err := b.Update(context.Background(), func(tx Tx) error {
		if err := tx.(PackWriter).WritePack(time.Now(), rolledBack); err != nil {
			return err
		}
		ok, err := tx.HasBlob(lost[0]) // its filter and size read here
		require.NoError(t, err)
		require.True(t, ok)
		return errUndo
	})
	require.ErrorIs(t, err, errUndo)
	kept, hs := pack("kept")
	require.NoError(t, b.Update(context.Background(), func(tx Tx) error { return tx.(PackWriter).WritePack(time.Now(), kept) }))
	requireBlobs(t, b, append(first, hs...))
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		ok, err := tx.HasBlob(lost[0])
		require.NoError(t, err)
		assert.False(t, ok)
		return nil
	}))
}
