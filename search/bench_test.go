package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/testinput"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
)

// noIndex hides a transaction's word index: Scan reads every text.
type noIndex struct{ store.Tx }

// BenchmarkIndex imports 100,000 (and 1,000,000) messages, logs the
// import's time and the file's size and the word index's share of it,
// and measures queries through the index and, for comparison, by
// reading every text: a rare word (one message in 1,000), two words, the
// ten newest of the most common word, and the ten newest of a prefix.
func BenchmarkIndex(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "tract.db")
			tr, err := tract.Init(path, tract.WithNoSync())
			require.NoError(b, err)
			msgs := testinput.WordMessages(n)
			start := time.Now()
			_, err = tr.Import(ctx, msgs)
			require.NoError(b, err)
			took := time.Since(start)
			require.NoError(b, tr.Close())
			st, err := os.Stat(path)
			require.NoError(b, err)
			used, index := fileBytes(b, path)
			b.Logf("import of %d messages: %s; file %d bytes, %d of them up to its last page in use, the word index's pages %d (%.1f%% of those)",
				n, took.Round(time.Millisecond), st.Size(), used, index, 100*float64(index)/float64(used))

			if indexBuilt(b, path) {
				// The upgrade of a file without the index: its first
				// write builds it. (The import above built its own.)
				db, err := bolt.Open(path, 0o600, nil)
				require.NoError(b, err)
				require.NoError(b, db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("words")) }))
				require.NoError(b, db.Close())
				w, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
				require.NoError(b, err)
				start := time.Now()
				require.NoError(b, w.Update(ctx, func(store.Tx) error { return nil }))
				b.Logf("the first write's build of the index of %d commits: %s", n, time.Since(start).Round(time.Millisecond))
				require.NoError(b, w.Close())
			}

			s, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true, IdleGrace: time.Minute})
			require.NoError(b, err)
			b.Cleanup(func() { s.Close() })
			benchQueries(b, s)
		})
	}
}

// benchQueries times the four queries of the index benchmarks on s,
// through the word index and by reading every text.
func benchQueries(b *testing.B, s interface {
	View(context.Context, func(store.Tx) error) error
}) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, query string
		limit       int
	}{
		{"rare", "needle", 0},
		{"two-words", "needle w2", 0},
		{"common-10", "w1", 10},
		{"prefix-10", "w12*", 10},
	} {
		q, err := search.ParseQuery(tc.query)
		require.NoError(b, err)
		for _, how := range []string{"index", "scan"} {
			b.Run(tc.name+"/"+how, func(b *testing.B) {
				for b.Loop() {
					err := s.View(ctx, func(tx store.Tx) error {
						if how == "scan" {
							tx = noIndex{tx}
						}
						hits, err := search.Scan(ctx, tx, q, tc.limit)
						if err == nil && len(hits) == 0 {
							err = fmt.Errorf("no match")
						}
						return err
					})
					require.NoError(b, err)
				}
			})
		}
	}
}

// indexBuilt reports whether the file at path has a word index.
func indexBuilt(b *testing.B, path string) (ok bool) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(b, err)
	defer db.Close()
	require.NoError(b, db.View(func(tx *bolt.Tx) error {
		ok = tx.Bucket([]byte("words")) != nil
		return nil
	}))
	return ok
}

// fileBytes returns the bytes of the file at path up to its last page
// in use (bbolt grows a file ahead of its pages, in steps of 16 MiB),
// and those of the pages the word index takes.
func fileBytes(b *testing.B, path string) (used, index int64) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(b, err)
	defer db.Close()
	require.NoError(b, db.View(func(tx *bolt.Tx) error {
		used = tx.Size()
		if w := tx.Bucket([]byte("words")); w != nil {
			s := w.Stats()
			index = int64(s.BranchAlloc + s.LeafAlloc)
		}
		return nil
	}))
	return used, index
}

// benchSizes are the repository sizes BenchmarkIndex measures.
var benchSizes = []int{100_000, 1_000_000}

// BenchmarkIndexIncremental commits 100,000 messages one transaction each
// (as a chat does), and logs the time and the file's size, the word
// index's share of it: the index's pending documents merged in batches
// into posting blocks that grow where they are.
func BenchmarkIndexIncremental(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(b, err)
	start := time.Now()
	for _, m := range testinput.WordMessages(n) {
		_, err := tr.User(ctx, m.Content)
		require.NoError(b, err)
	}
	took := time.Since(start)
	require.NoError(b, tr.Close())
	used, index := fileBytes(b, path)
	b.Logf("%d commits, one a transaction: %s; %d bytes up to the file's last page in use, the word index's pages %d (%.1f%% of those)",
		n, took.Round(time.Millisecond), used, index, 100*float64(index)/float64(used))
	for b.Loop() {
	}
}
