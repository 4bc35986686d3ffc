package store_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

var codecWords = strings.Fields(`the a of to and in is it that for you on with as this be are
was have not at or by from but can will your what which an if all we more
model answer question json field value return function error test file
data user system assistant message context token summary branch commit`)

// wordTexts returns n texts of about 200 bytes of words, seeded by seed;
// the i-th starts with prefix(i) when prefix is not nil.
func wordTexts(n int, seed uint64, prefix func(i int) string) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]byte, n)
	for i := range out {
		var b strings.Builder
		if prefix != nil {
			b.WriteString(prefix(i))
		}
		fmt.Fprintf(&b, "Message %d.", i)
		for b.Len() < 180+rng.IntN(40) {
			b.WriteByte(' ')
			b.WriteString(codecWords[rng.IntN(len(codecWords))])
		}
		out[i] = []byte(b.String())
	}
	return out
}

// writePack stores texts as one pack, as a batch of many messages is.
func writePack(t *testing.T, b *store.Bolt, texts [][]byte) {
	t.Helper()
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		return packTexts(tx, texts)
	}))
}

func packTexts(tx store.Tx, texts [][]byte) error {
	entries := make([]store.PackEntry, len(texts))
	for i, text := range texts {
		entries[i] = store.PackEntry{Kind: store.PackBlob, Hash: dag.Sum(text), Value: text}
	}
	return tx.(store.PackWriter).WritePack(time.Now(), store.SortPackEntries(entries))
}

// dictionaries returns the dictionaries of the file at b, read with bbolt.
func dictionaries(t *testing.T, b *store.Bolt) [][]byte {
	t.Helper()
	var out [][]byte
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		d := tx.Bucket([]byte("dicts"))
		if d == nil {
			return nil
		}
		return d.ForEach(func(_, v []byte) error { out = append(out, bytes.Clone(v)); return nil })
	}))
	return out
}

// A batch of texts enough to train on gets the file a dictionary, and
// its texts are kept compressed: they read back as they were written,
// whole and one at a time, and take well under their size.
func TestCodec_ABatchTrainsADictionaryAndTextsReadBack(t *testing.T) {
	b := createBolt(t)
	texts := wordTexts(2000, 1, nil)
	writePack(t, b, texts)
	require.Len(t, dictionaries(t, b), 1)
	var size int
	for _, text := range texts {
		size += len(text)
	}
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		for _, text := range texts {
			got, err := tx.Blob(dag.Sum(text))
			require.NoError(t, err)
			require.Equal(t, text, got)
		}
		n := 0
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, data []byte) error {
			n++
			assert.Equal(t, h, dag.Sum(data))
			return nil
		}))
		assert.Equal(t, len(texts), n)
		return nil
	}))
	var stored int
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("packs")).ForEachBucket(func(k []byte) error {
			return tx.Bucket([]byte("packs")).Bucket(k).Bucket([]byte("blobs")).ForEach(func(_, v []byte) error {
				stored += len(v)
				return nil
			})
		})
	}))
	assert.Less(t, stored, size*6/10, "stored %d bytes of %d", stored, size)

	// Texts written one at a time go to the journal as they are, and are
	// compressed with the dictionary when it checkpoints into a pack.
	store.SetJournalPolicy(b, 4, 1<<20, 64<<10)
	more := wordTexts(10, 2, nil)
	for _, text := range more {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { _, err := tx.PutBlob(text); return err }))
	}
	var raws, packed int
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("packs")).ForEachBucket(func(k []byte) error {
			return tx.Bucket([]byte("packs")).Bucket(k).Bucket([]byte("blobs")).ForEach(func(_, v []byte) error {
				if v[0] == 0 {
					raws++
				}
				packed++
				return nil
			})
		})
	}))
	assert.Equal(t, len(texts)+8, packed, "two checkpoints of four texts each")
	assert.Zero(t, raws, "a text in a pack is kept as it is")
	requireTexts(t, b, more)
	r, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%v", r.Problems)
}

// A dictionary holds only byte strings that many distinct texts share
// (1 in 64 of the sample, for a large one): a phrase of a few texts never
// enters it, one of many does. So erasing texts that were in the sample
// it was trained on leaves none of their own bytes in the file.
func TestCodec_ErasedTrainingTextLeavesNothingInTheDictionary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	const rare = "the launch code is ZEBRA-QUOKKA-7731-MARMOT"
	const common = "Please answer in the JSON schema given above. "
	const rareTexts = 20 // under 1,500/64
	texts := wordTexts(1500, 3, func(i int) string {
		switch {
		case i < rareTexts:
			return rare + ". "
		case i%3 == 0:
			return common
		}
		return ""
	})
	// One text of random bytes, which compression leaves as it is: the
	// search below finds it while it is stored.
	random := make([]byte, 200)
	_, _ = crand.Read(random)
	texts = append(texts, random)
	writePack(t, b, texts)

	dicts := dictionaries(t, b)
	require.Len(t, dicts, 1)
	assert.True(t, bytes.Contains(dicts[0], []byte(" JSON sc")) || bytes.Contains(dicts[0], []byte("Please a")),
		"a piece of a phrase a third of the texts share is not in the symbol table")
	for _, piece := range []string{"ZEBRA", "QUOKKA", "7731", "MARMOT", "-7731-", "launch c", "aunch"} {
		assert.False(t, bytes.Contains(dicts[0], []byte(piece)), "%q, of a phrase of %d texts, is in the dictionary", piece, rareTexts)
	}
	require.True(t, fileHas(t, path, random), "precondition: the random text is in the file")

	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for _, text := range append(texts[:rareTexts:rareTexts], random) {
			if err := tx.DeleteBlob(dag.Sum(text)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, b.Close())
	for _, piece := range []string{rare, "ZEBRA-QUOKKA", "7731-MARMOT", string(random)} {
		assert.False(t, fileHas(t, path, []byte(piece)), "%q is still in the file", piece)
	}
}

// A transaction that trained a dictionary and then failed leaves nothing
// behind: the next dictionary, which may take its id, is the one its
// texts are read with, on the same handle.
func TestCodec_ARolledBackDictionaryIsNotKept(t *testing.T) {
	b := createBolt(t)
	failed := errors.New("fail")
	first := wordTexts(1500, 4, func(int) string { return "first vocabulary: alpha beta gamma delta. " })
	err := b.Update(context.Background(), func(tx store.Tx) error {
		if err := packTexts(tx, first); err != nil {
			return err
		}
		got, err := tx.Blob(dag.Sum(first[0]))
		if err != nil {
			return err
		}
		assert.Equal(t, first[0], got)
		return failed
	})
	require.ErrorIs(t, err, failed)
	assert.Empty(t, dictionaries(t, b))
	second := wordTexts(1500, 5, func(int) string { return "second vocabulary: omega sigma kappa tau. " })
	writePack(t, b, second)
	requireTexts(t, b, second)
}

// Salvage reads texts kept compressed with the file's dictionary.
func TestCodec_SalvageReadsCompressedTexts(t *testing.T) {
	b := createBolt(t)
	texts := wordTexts(1200, 6, nil)
	writePack(t, b, texts)
	require.Len(t, dictionaries(t, b), 1)
	small := []byte("short")
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { _, err := tx.PutBlob(small); return err }))
	out := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := store.Salvage(context.Background(), b.Path(), out)
	require.NoError(t, err)
	assert.Empty(t, rep.Lost)
	s, err := store.OpenBolt(out, store.BoltOptions{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	requireTexts(t, s, append(texts, small))
}

// Compact trains the file's symbol table anew, under an id the file never
// had, when the texts that shared a symbol of it are gone: a handle that
// read texts with the old one, this or another, reads the compacted
// file's texts right, compaction after compaction; while every symbol is
// still shared, compact keeps the table and its id.
func TestCodec_CompactTrainsANewDictionaryUnderANewID(t *testing.T) {
	b := createBolt(t)
	other, err := store.OpenBolt(b.Path(), store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer other.Close()
	// The first batch trains the table, with pieces of its prefix.
	old := wordTexts(3000, 7, func(int) string { return "Quokka-zebra marmot preface. " })
	writePack(t, b, old)
	texts := wordTexts(3000, 8, nil)
	writePack(t, b, texts)
	requireTexts(t, other, texts)
	ids := func() []string {
		var ids []string
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("dicts")).ForEach(func(k, _ []byte) error { ids = append(ids, fmt.Sprintf("%x", k)); return nil })
		}))
		return ids
	}
	_, _, err = b.Compact(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"00000001"}, ids(), "every symbol is still shared: the table stays")

	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for _, text := range old {
			if err := tx.DeleteBlob(dag.Sum(text)); err != nil {
				return err
			}
		}
		return nil
	}))
	for range 2 {
		_, _, err := b.Compact(context.Background())
		require.NoError(t, err)
		requireTexts(t, b, texts)
		requireTexts(t, other, texts)
	}
	// The second compaction keeps the table the first trained.
	assert.Equal(t, []string{"00000002"}, ids(), "the compacted file keeps its one table, of a new id")
	require.NoError(t, b.Close())
	assert.False(t, fileHas(t, b.Path(), []byte("marmot p")), "no piece of the erased prefix is left")
}

// A compiled-context record holds the texts of its run: it is kept
// compressed as they are, reads back whole, and compact keeps it so.
func TestCodec_ContextRecordsAreCompressed(t *testing.T) {
	b := createBolt(t)
	var rec []byte
	for _, text := range wordTexts(500, 9, nil) {
		rec = append(rec, text...)
	}
	h := dag.Sum([]byte("tip"))
	put := func() {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			return tx.(store.ContextTx).PutContext(h, rec, nil)
		}))
	}
	stored := func() int {
		var n int
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error { n = len(tx.Bucket([]byte("contexts")).Get(h[:])); return nil }))
		return n
	}
	read := func() {
		require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
			got, err := tx.(store.ContextTx).Context(h)
			require.NoError(t, err)
			assert.Equal(t, rec, got)
			return nil
		}))
	}
	put()
	read()
	assert.Equal(t, len(rec)+1, stored(), "kept as it is while the file has no symbol table")
	writePack(t, b, wordTexts(3000, 10, nil))
	put()
	read()
	assert.Less(t, stored(), len(rec)/2)
	_, _, err := b.Compact(context.Background())
	require.NoError(t, err)
	read()
	assert.Less(t, stored(), len(rec)/2)
}

// A handle that read texts with a file's dictionary reads right a file of
// another lineage put over its path, whose dictionary has the same id.
func TestCodec_AnotherFileOverThePathIsReadWithItsOwnDictionary(t *testing.T) {
	b := createBolt(t)
	first := wordTexts(1500, 11, func(int) string { return "first file: alpha beta gamma delta. " })
	writePack(t, b, first)
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Blob(dag.Sum(first[0]))
		return err
	}))
	otherPath := filepath.Join(t.TempDir(), "other.db")
	other, err := store.OpenBolt(otherPath, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	second := wordTexts(1500, 12, func(int) string { return "second file: omega sigma kappa tau. " })
	writePack(t, other, second)
	require.NoError(t, other.Close())
	require.NoError(t, os.Rename(otherPath, b.Path()))
	requireTexts(t, b, second[:100])
}

// A compaction drops the file's table when the texts it keeps no longer
// share its symbols, and keeps texts too few to train another as they
// are.
func TestCodec_CompactDropsATableItsTextsNoLongerShare(t *testing.T) {
	b := createBolt(t)
	texts := wordTexts(1200, 11, nil)
	writePack(t, b, texts)
	erase := func(texts [][]byte) {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			for _, text := range texts {
				if err := tx.DeleteBlob(dag.Sum(text)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	tableIDs := func() []string {
		var ids []string
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
			if d := tx.Bucket([]byte("dicts")); d != nil {
				return d.ForEach(func(k, _ []byte) error { ids = append(ids, fmt.Sprintf("%x", k)); return nil })
			}
			return nil
		}))
		return ids
	}
	require.Equal(t, []string{"00000001"}, tableIDs())
	erase(texts[3:])
	_, _, err := b.Compact(context.Background())
	require.NoError(t, err)
	assert.Empty(t, tableIDs(), "3 texts share no symbol of 8 texts: the table goes")
	requireTexts(t, b, texts[:3])
	require.NoError(t, b.Close())
	for _, text := range texts[:3] {
		assert.True(t, fileHas(t, b.Path(), text), "a text is kept as it is")
	}
}

// requireTexts requires s to read each of texts back by its hash.
func requireTexts(t *testing.T, s store.Store, texts [][]byte) {
	t.Helper()
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
		for _, text := range texts {
			got, err := tx.Blob(dag.Sum(text))
			require.NoError(t, err)
			require.Equal(t, text, got)
		}
		return nil
	}))
}
