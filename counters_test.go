package tract_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store"
)

// requireStatusMatchesCompile checks that Status, which reads the derived
// counters, says what a full Compile and Log say.
func requireStatusMatchesCompile(t *testing.T, tr *tract.Tract) *tract.Status {
	t.Helper()
	ctx := context.Background()
	st, err := tr.Status(ctx)
	require.NoError(t, err)
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	tokens := 0
	for _, m := range msgs {
		tokens += compress.EstimateTokens(m.Content)
	}
	assert.Equal(t, len(log), st.Length, "length")
	assert.Equal(t, len(msgs), st.Messages, "messages")
	assert.Equal(t, tokens, st.Tokens, "tokens")
	return st
}

// Status answers from the derived counters, and they agree with Compile
// through every kind of commit and every operation that moves a branch:
// notes and errors, steering and purify, compress, reset, import, views.
func TestCounters_StatusAgreesWithCompile(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	requireStatusMatchesCompile(t, tr)
	_, err := tr.System(ctx, "You answer in JSON.")
	require.NoError(t, err)
	_, err = tr.Note(ctx, "a note is not sent")
	require.NoError(t, err)
	srv.Reply(llmtest.Answer("not json"), llmtest.Answer(`{"a": 1}`))
	_, err = tr.Chat(ctx, "question one", tract.Validate(retry.JSON()))
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)

	srv.Reply(llmtest.Answer("no"), llmtest.Answer("still no"))
	_, err = tr.Chat(ctx, "question two", tract.Validate(retry.JSON()), tract.MaxAttempts(2))
	require.Error(t, err) // exhausted: user + error commit
	requireStatusMatchesCompile(t, tr)

	srv.Reply(llmtest.Answer("bad"))
	_, err = tr.Chat(ctx, "question three", tract.Validate(retry.JSON()), tract.MaxAttempts(1), tract.Purify(false))
	require.Error(t, err)
	requireStatusMatchesCompile(t, tr)

	_, err = tr.CommitMany(ctx, chain(50, 120, "bulk"))
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)
	_, err = tr.CompressRange(ctx, "HEAD~40", "HEAD~10", tract.Summaries("thirty-one messages, summed up"))
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)
	_, err = tr.Reset(ctx, "HEAD~3", tract.Soft)
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)
	_, err = tr.Reset(ctx, "ORIG_HEAD", tract.Soft)
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)

	_, err = tr.CreateBranch(ctx, "side", "HEAD~20")
	require.NoError(t, err)
	side := tr.OnBranch("side")
	_, err = side.User(ctx, "on the side")
	require.NoError(t, err)
	requireStatusMatchesCompile(t, side)
	_, err = tr.Reset(ctx, "HEAD~5", tract.Hard)
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)
}

// A repository written before the derived index existed (no "derived"
// bucket): Status still answers, by walking the chain; the first write
// builds the index for the whole chain in its transaction, and fsck checks
// it.
func TestCounters_UpgradeFromAFileWithoutTheIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	for i := range 6 { // batches too small for a pack: that format had none
		_, err = tr.Import(ctx, chain(50, 80, fmt.Sprintf("old %d", i)))
		require.NoError(t, err)
	}
	_, err = tr.Compact(ctx) // nor a journal: everything into the buckets
	require.NoError(t, err)
	require.NoError(t, tr.Close())

	// Make it a file of the earlier format: schema 1, no counters (the
	// 33-byte keys beside the commits).
	rawFile(t, path, func(tx *bolt.Tx) error {
		commits := tx.Bucket([]byte("commits"))
		var keys [][]byte
		_ = commits.ForEach(func(k, _ []byte) error {
			if len(k) == 33 {
				keys = append(keys, slices.Clone(k))
			}
			return nil
		})
		require.Len(t, keys, 300)
		for _, k := range keys {
			if err := commits.Delete(k); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{1})
	})

	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	st := requireStatusMatchesCompile(t, tr)
	assert.Equal(t, 300, st.Length)
	entries := func() int {
		n := 0
		require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
			return tx.ForEachCounters(func(_ tract.Hash, _ store.Counters) error { n++; return nil })
		}))
		return n
	}
	assert.Zero(t, entries(), "reads do not write")
	_, err = tr.User(ctx, "") // a failed write upgrades nothing
	require.ErrorIs(t, err, tract.ErrInvalidText)

	_, err = tr.User(ctx, "first commit after the upgrade")
	require.NoError(t, err)
	assert.Equal(t, 301, entries(), "the whole chain is indexed by the first write")
	requireStatusMatchesCompile(t, tr)
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 301, report.Counters)
	require.NoError(t, tr.Close())
	rawFile(t, path, func(tx *bolt.Tx) error {
		// Schema 2 (counters), 4 (the first write's commit is a journal
		// record), and on to the word index's: a file of schema 1 has
		// none this tract reads, so the first write builds it.
		assert.Equal(t, []byte{8}, tx.Bucket([]byte("meta")).Get([]byte("schema")), "upgraded with the first write to the word index's schema (8); its texts keep their form until compacted (9)")
		return nil
	})
}

// rawFile runs fn in a bbolt write transaction on the file at path.
func rawFile(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
}

// fsck recomputes every entry: a wrong one, and one whose commit is gone,
// are problems.
func TestCounters_FsckFindsBadEntries(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	h, err := tr.User(ctx, "hello")
	require.NoError(t, err)
	require.NoError(t, tr.Store().Update(ctx, func(tx store.Tx) error {
		if err := tx.PutCounters(h, store.Counters{Depth: 7, Messages: 1, Tokens: 2}); err != nil {
			return err
		}
		return tx.PutCounters(tract.Hash{1, 2, 3}, store.Counters{Depth: 1})
	}))
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	require.Len(t, report.Problems, 2, "%v", report.Problems)
	got := fmt.Sprint(report.Problems)
	assert.Contains(t, got, "counters "+h.Short()+": stored depth 7, 1 messages, 2 tokens; the chain adds up to depth 1, 1 messages, 2 tokens")
	assert.Contains(t, got, "entry of a commit that is not stored")

	// The repository is now marked damaged and refuses writes.
	_, err = tr.User(ctx, "more")
	require.ErrorIs(t, err, tract.ErrDamaged)

	// Put right (the mark lifted by hand, damaged_test.go has the mark
	// outlive a repair until fsck), it takes writes again; the test's own
	// fsck at cleanup checks it once more.
	rawFile(t, tr.Path(), func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("damaged")) })
	require.NoError(t, tr.Store().Update(ctx, func(tx store.Tx) error {
		if err := tx.PutCounters(h, store.Counters{Depth: 1, Messages: 1, Tokens: 2}); err != nil {
			return err
		}
		return tx.DeleteCounters(tract.Hash{1, 2, 3})
	}))
	report, err = tr.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
	_, err = tr.User(ctx, "more")
	assert.NoError(t, err)
}
