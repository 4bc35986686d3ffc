package tract_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// wordyChain returns n messages whose words make a word index of every
// shape: a word of every message (posting lists of several blocks), one
// of every third, rare ones, a number of each message's own (a word of
// one document), words beyond ASCII, and one text twice (one blob).
func wordyChain(n int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		s := fmt.Sprintf("Message %d common", i)
		if i%3 == 0 {
			s += " Third ÉTÉ"
		}
		if i%97 == 0 {
			s += " rare Δέλτα-x" + fmt.Sprint(i%11)
		}
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: s}
	}
	msgs[20].Content = msgs[10].Content
	return msgs
}

// wordsOf closes tr and returns its word index, key for key, and requires
// that no pack holds a words bucket.
func wordsOf(t *testing.T, tr *tract.Tract) map[string]string {
	t.Helper()
	path := tr.Path()
	require.NoError(t, tr.Close())
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	out := map[string]string{}
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for _, in := range []string{"packs", "staging"} {
			if b := tx.Bucket([]byte(in)); b != nil {
				require.NoError(t, b.ForEachBucket(func(k []byte) error {
					assert.Nil(t, b.Bucket(k).Bucket([]byte("words")), "a words bucket left in pack %x of %s", k, in)
					return nil
				}))
			}
		}
		return tx.Bucket([]byte("words")).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	}))
	return out
}

// importThroughAPack imports msgs into tr in small batches (hundreds of
// runs of words, merged 16 at a time; under 15 batches past 10,000
// messages), which make a pack, and returns the result and how often
// ImportBounded's function was called.
func importThroughAPack(t *testing.T, tr *tract.Tract, msgs []tract.ImportMessage) (tract.ImportResult, int) {
	t.Helper()
	batch := tract.ImportBatch(100, 2048)
	if len(msgs) > 10_000 {
		batch = tract.ImportBatch(5000, 64<<10)
	}
	bounded := 0
	res, err := tr.ImportSeq(context.Background(), seqOf(msgs, 0, nil), batch, tract.ImportBounded(func() { bounded++ }))
	require.NoError(t, err)
	require.Greater(t, res.Batches, 5, "written through a pack")
	return res, bounded
}

// sameAnswers requires that each query finds something in want, and the
// same commits, in the same order, in got; and that fsck finds got's
// index whole.
func sameAnswers(t *testing.T, got, want *tract.Tract, queries ...string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range queries {
		query, err := search.ParseQuery(q)
		require.NoError(t, err)
		var g, w []tract.Hash
		for c, err := range got.Search(ctx, query) {
			require.NoError(t, err)
			g = append(g, c.Hash)
		}
		for c, err := range want.Search(ctx, query) {
			require.NoError(t, err)
			w = append(w, c.Hash)
		}
		assert.NotEmpty(t, w, q)
		assert.Equal(t, w, g, q)
	}
	report, err := got.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
	require.Equal(t, tract.WordIndexOK, report.WordIndex, report.WordIndexProblem)
}

// An import into a repository whose word index is empty builds the index
// beside its pack, in its own transactions, from the texts it sorts: the
// index it publishes is the one the same import written in one
// transaction builds (the same documents, numbers, blocks of the document
// table and posting lists), at either level of the posting blocks, and
// searches find what they find there.
func TestImportSeq_IntoAnEmptyIndexBuildsItBesideThePack(t *testing.T) {
	for _, n := range []int{1200, 70_000} { // the recent level, and the main one past 65,536
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if n > 10_000 && testing.Short() {
				t.Skip("a long import")
			}
			ctx := context.Background()
			msgs := wordyChain(n)
			staged := newTract(t)
			res, bounded := importThroughAPack(t, staged, msgs)
			assert.Equal(t, 1, bounded, "ImportBounded's function is called once")
			whole := newTract(t)
			res2, err := whole.ImportSeq(ctx, seqOf(msgs, 0, nil), tract.ImportBatch(n, 1<<30), tract.ImportBounded(func() { bounded++ }))
			require.NoError(t, err)
			assert.Equal(t, 1, bounded, "not for an input of one batch")
			require.Equal(t, 1, res2.Batches, "written in the transaction that moves the branch")
			require.Equal(t, res.Tip, res2.Tip, "the same commits")

			sameAnswers(t, staged, whole, "common", "third été", "rare", "δέλτα x3", "message 1119", "10")

			got, want := wordsOf(t, staged), wordsOf(t, whole)
			level := "r"
			if n > 65_536 {
				level = "w"
			}
			_, ok := want[level+"common\x00"+strings.Repeat("\x00", 8)]
			assert.True(t, ok, "posting blocks of level %s", level)
			assert.Equal(t, len(want), len(got))
			for k, v := range want {
				if got[k] != v {
					t.Errorf("key %q: %x, want %x", k, got[k], v)
					break
				}
			}
		})
	}
}

// An import whose repository gets its first commit while the import runs
// (another writer's) finds the index no longer empty as it publishes: it
// merges the index built beside its pack into the file's, as an import
// into any repository with commits does.
func TestImportSeq_AFirstCommitMeanwhileIndexesAsItPublishes(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	other, err := tract.Open(tr.Path(), tract.WithNoSync())
	require.NoError(t, err)
	defer other.Close()
	msgs := wordyChain(500)
	_, err = tr.ImportSeq(ctx, commitsMeanwhile(t, other, msgs, "meanwhile, a rare word"), small)
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict, "the branch moved meanwhile")
	rare, err := search.ParseQuery("rare")
	require.NoError(t, err)
	var found []string
	for c, err := range tr.Search(ctx, rare) {
		require.NoError(t, err)
		found = append(found, c.Text)
	}
	assert.Equal(t, []string{"meanwhile, a rare word"}, found[:1])
	assert.Len(t, found, 1+(len(msgs)+96)/97, "the commits kept off the branch are indexed too")
	for _, f := range found[1:] {
		assert.True(t, strings.HasPrefix(f, "Message "), f)
	}
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
	_, ok := wordsOf(t, tr)["rmessage\x00"+strings.Repeat("\x00", 8)]
	assert.True(t, ok, "the publishing transaction merged the pack's index")
}

// An import into a repository whose word index has documents (an import
// before it, in the recent posting blocks; single commits, pending in the
// words bucket and in the journal) builds the index of its commits beside
// its pack too, and its publication merges that into the file's: the
// same documents, numbers and posting blocks as the same import written
// in one transaction (into the recent blocks, or, past 65,536, into the
// main ones after the recent ones), with bounds in the document table no
// earlier than those, and the same search answers.
func TestImportSeq_IntoAnIndexWithDocumentsMergesItsIndex(t *testing.T) {
	for _, n := range []int{1200, 70_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if n > 10_000 && testing.Short() {
				t.Skip("a long import")
			}
			ctx := context.Background()
			prepare := func() *tract.Tract {
				tr := newTract(t)
				_, err := tr.ImportSeq(ctx, seqOf(wordyChain(600), 0, nil), small)
				require.NoError(t, err)
				for i := range 300 {
					_, err := tr.User(ctx, fmt.Sprintf("single %d common, pending", i))
					require.NoError(t, err)
				}
				return tr
			}
			msgs := wordyChain(n)
			staged, whole := prepare(), prepare()
			res, bounded := importThroughAPack(t, staged, msgs)
			assert.Zero(t, bounded, "the publication holds what its merge writes")
			res2, err := whole.ImportSeq(ctx, seqOf(msgs, 0, nil), tract.ImportBatch(n, 1<<30))
			require.NoError(t, err)
			require.Equal(t, 1, res2.Batches, "written in the transaction that moves the branch")
			require.Equal(t, res.Tip, res2.Tip, "the same commits")

			sameAnswers(t, staged, whole, "common", "third été", "rare", "δέλτα x3", "message 1119", "10", "single pending")

			got, want := wordsOf(t, staged), wordsOf(t, whole)
			_, ok := want["wcommon\x00"+strings.Repeat("\x00", 8)]
			assert.Equal(t, n > 65_536, ok, "posting blocks of the main level")
			assert.Equal(t, len(want), len(got))
			for k, v := range want {
				g, ok := got[k]
				switch {
				case !ok:
					t.Fatalf("key %q missing", k)
				case k[0] == 'd' && len(k) == 9: // a block of the document table
					require.Equal(t, len(v), len(g), "key %q", k)
					assert.Equal(t, v[8:], g[8:], "key %q", k)
					assert.GreaterOrEqual(t, binary.BigEndian.Uint64([]byte(g[:8])), binary.BigEndian.Uint64([]byte(v[:8])), "the bound of %q", k)
				default:
					assert.Equal(t, v, g, "key %q", k)
				}
			}
		})
	}
}

// An import whose pack holds commits the repository has already (the
// same messages imported again at the same time onto the same commit,
// on another branch) does not take the index built beside its pack: its
// publication indexes the commits it adds, none, and each commit stays
// one document.
func TestImportSeq_ACommitStoredAlreadyKeepsTheIndexAsItIs(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := newTract(t, tract.WithClock(func() time.Time { return at }))
	_, err := tr.User(ctx, "the base")
	require.NoError(t, err)
	_, err = tr.Switch(ctx, "again", true)
	require.NoError(t, err)
	_, err = tr.Switch(ctx, "main", false)
	require.NoError(t, err)
	msgs := wordyChain(400)
	first, err := tr.ImportSeq(ctx, seqOf(msgs, 0, nil), small)
	require.NoError(t, err)
	_, err = tr.Switch(ctx, "again", false)
	require.NoError(t, err)
	again, err := tr.ImportSeq(ctx, seqOf(msgs, 0, nil), small)
	require.NoError(t, err)
	require.Greater(t, again.Batches, 1, "written through a pack")
	require.Equal(t, first.Tip, again.Tip, "the same commits")
	rare, err := search.ParseQuery("rare")
	require.NoError(t, err)
	found := 0
	for _, err := range tr.Search(ctx, rare) {
		require.NoError(t, err)
		found++
	}
	assert.Equal(t, (len(msgs)+96)/97, found, "each commit once")
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	require.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, tract.WordIndexOK, report.WordIndex, report.WordIndexProblem)
}
