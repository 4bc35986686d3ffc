package tract_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
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

// A file written by the format before texts had stored forms (schema 8,
// testdata/schema8.db: texts in the blobs bucket, a pack and journal
// records, written by a tract of schema 7 and then of schema 8, whose
// journal records hold word-index documents) opens and reads as it is,
// and its writes keep texts as they are; `tract compact` rewrites it with
// its texts in their stored forms (schema 9), and everything reads as
// before.
func TestCompact_UpgradesASchema8File(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(filepath.Join("testdata", "schema8.db"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tract.db")
	require.NoError(t, os.WriteFile(path, src, 0o600))
	meta := func(key string) []byte {
		var v []byte
		rawFile(t, path, func(tx *bolt.Tx) error {
			v = bytes.Clone(tx.Bucket([]byte("meta")).Get([]byte(key)))
			return nil
		})
		return v
	}
	require.Equal(t, []byte{8}, meta("schema"))

	tr, err := tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	texts := textsOf(log)
	require.Len(t, texts, 134)
	assert.Equal(t, []string{"Lovelace's notes on the engine, schema eight, in a journal record.", "Babbage's Difference Engine, written by schema eight.", `{"name":"Ada Lovelace","born":1815}`, "Tell me about Ada Lovelace, schema seven."}, texts[:4])
	assert.Equal(t, "You answer in JSON.", texts[133])
	lovelace, err := search.ParseQuery("lovelace")
	require.NoError(t, err)
	searchFinds := func(want ...string) {
		t.Helper()
		got := []string{}
		for c, err := range tr.Search(ctx, lovelace) {
			require.NoError(t, err)
			got = append(got, c.Text)
		}
		assert.Equal(t, want, got)
	}
	searchFinds(texts[0], texts[2], texts[3])

	// A write keeps the file's format: its text is stored as it is.
	const note = "Lovelace wrote the first program, a note of schema eight's format."
	_, err = tr.User(ctx, note)
	require.NoError(t, err)
	searchFinds(note, texts[0], texts[2], texts[3])
	require.NoError(t, tr.Close())
	assert.Equal(t, []byte{8}, meta("schema"))
	assert.Nil(t, meta("blob-forms"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Contains(data, []byte(note)))

	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	res, err := tr.Compact(ctx)
	require.NoError(t, err)
	assert.Less(t, res.After, res.Before)
	assert.Equal(t, []byte{9}, meta("schema"))
	assert.Equal(t, []byte{1}, meta("blob-forms"))
	log, err = tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, append([]string{note}, texts...), textsOf(log))
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	assert.Len(t, all.Commits, 135)
	searchFinds(note, texts[0], texts[2], texts[3])
	requireStatusMatchesCompile(t, tr)
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}
