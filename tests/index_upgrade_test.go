package tests

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// olderFile puts a repository file of an older tract in the sandbox,
// where 'tract init' would: ../testdata/schema7.db (303 commits, written
// by the tract of schema 7, whose word index this one reads no more),
// or, withoutIndex, that file as a tract before the word index left it
// (schema 6: no words bucket).
func olderFile(t *testing.T, s *sandbox, withoutIndex bool) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "schema7.db"))
	require.NoError(t, err)
	path := s.dbPath()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, src, 0o600))
	if withoutIndex {
		db, err := bolt.Open(path, 0o600, nil)
		require.NoError(t, err)
		require.NoError(t, db.Update(func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("words")); err != nil {
				return err
			}
			return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.AppendUvarint(nil, 6))
		}))
		require.NoError(t, db.Close())
	}
	require.Equal(t, uint64(map[bool]uint64{true: 6, false: 7}[withoutIndex]), schemaOfFile(t, path))
	return path
}

// schemaOfFile reads the schema a repository file records.
func schemaOfFile(t *testing.T, path string) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	var v uint64
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		v, _ = binary.Uvarint(tx.Bucket([]byte("meta")).Get([]byte("schema")))
		return nil
	}))
	return v
}

// A file of an older tract is read as it is (a search reads every
// text); its first write builds the word index and says so on standard
// error, one line, before the command's own output; later writes say
// nothing, the search reads the index, and fsck finds it whole (before
// the write, it found none it reads: absent). --quiet
// hides the note.
func TestIndexUpgrade_FirstWriteSaysItBuildsTheIndex(t *testing.T) {
	t.Parallel()
	fileOnly(t, "the word index of a repository file")
	for _, tc := range []struct {
		name         string
		withoutIndex bool
	}{
		{"schema 6, no index", true},
		{"schema 7, an index of the older format", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t).forTest(t)
			path := olderFile(t, s, tc.withoutIndex)

			assert.Contains(t, s.ok("search", "babbage").Stdout, "And Babbage?", "read without the index")
			r := s.ok("search", "babbage")
			assert.NotContains(t, r.Stderr, "search index", "a read builds nothing")
			assert.Contains(t, s.ok("fsck", "--json").Stdout, `"word_index": "absent"`, "fsck builds nothing either")

			r = s.ok("commit", "--role", "user", "-m", "Babbage again")
			assert.Equal(t, "building the search index of 303 commits… done\n", r.Stderr)
			assert.Equal(t, uint64(8), schemaOfFile(t, path))

			r = s.ok("commit", "--role", "user", "-m", "a third")
			assert.Empty(t, r.Stderr, "the index is built once")
			out := s.ok("search", "babbage").Stdout
			assert.Contains(t, out, "Babbage again")
			assert.Contains(t, out, "And Babbage?")
			assert.Contains(t, s.ok("fsck", "--json").Stdout, `"word_index": "ok"`)

			quiet := newSandbox(t).forTest(t)
			olderFile(t, quiet, tc.withoutIndex)
			r = quiet.ok("-q", "commit", "--role", "user", "-m", "quietly")
			assert.NotContains(t, r.Stderr, "search index")
			assert.Contains(t, quiet.ok("search", "quietly").Stdout, "quietly")
		})
	}
}
