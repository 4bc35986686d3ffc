package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

var wordsT0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// putWords stores a commit of text at wordsT0 plus n seconds.
func putWords(tx store.Tx, n int, text string) (dag.Hash, error) {
	blob, err := tx.PutBlob([]byte(text))
	if err != nil {
		return dag.Hash{}, err
	}
	return tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: wordsT0.Add(time.Duration(n) * time.Second)})
}

// indexed returns the commits b's word index holds for query, in its
// order; ok is false when b has no index.
func indexed(t *testing.T, b *store.Bolt, query string) (hs []dag.Hash, ok bool) {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	var terms []store.WordTerm
	for _, w := range q.Terms() {
		terms = append(terms, store.WordTerm{Word: strings.TrimSuffix(w, "*"), Prefix: strings.HasSuffix(w, "*")})
	}
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) (err error) {
		ok, err = tx.(store.WordIndexTx).WordMatches(terms, func(h dag.Hash, _ time.Time) (bool, error) {
			hs = append(hs, h)
			return true, nil
		})
		return err
	}))
	return hs, ok
}

// noIndex hides a transaction's word index: search.Scan reads every text.
type noIndex struct{ store.Tx }

// scanBoth runs query with limit through the index and by reading every
// text, and requires the same answer.
func scanBoth(t *testing.T, s store.Store, query string, limit int) []search.Hit {
	t.Helper()
	q, err := search.ParseQuery(query)
	require.NoError(t, err)
	var withIndex, without []search.Hit
	require.NoError(t, s.View(context.Background(), func(tx store.Tx) (err error) {
		if withIndex, err = search.Scan(context.Background(), tx, q, limit); err != nil {
			return err
		}
		without, err = search.Scan(context.Background(), noIndex{tx}, q, limit)
		return err
	}))
	require.Equal(t, without, withIndex, "query %q, limit %d", query, limit)
	return withIndex
}

// The index answers every query as reading every text does, through
// small writes (pending documents, merged in batches), large ones
// (merged at once), commit times out of order, and deletions.
func TestWordIndex_AnswersAsAScanDoes(t *testing.T) {
	b := storetest.NewBolt(t)
	store.SetWordsPolicy(b, 16, 8, 40)
	r := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"alpha", "beta", "gamma", "delta", "alphabet", "gam", "omega", "Δέλτα", "x1", "x12"}
	text := func() string {
		var ws []string
		for range 1 + r.IntN(6) {
			ws = append(ws, vocab[r.IntN(len(vocab))])
		}
		return strings.Join(ws, " ")
	}
	var all []dag.Hash
	queries := []string{"alpha", "alpha*", "gam*", "gamma beta", "x1*", "δέλτα", "omega alpha* x12", "nothing"}
	for round := range 40 {
		n := 1 + r.IntN(3)
		if round%7 == 3 {
			n = 30 // merged at once
		}
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			for range n {
				// Times mostly rise, some go back.
				h, err := putWords(tx, round*10+r.IntN(15), text())
				if err != nil {
					return err
				}
				all = append(all, h)
			}
			return nil
		}))
		if round%5 == 4 {
			i := r.IntN(len(all))
			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteCommit(all[i]) }))
			all = append(all[:i], all[i+1:]...)
		}
		for _, q := range queries {
			scanBoth(t, b, q, 0)
			scanBoth(t, b, q, 3)
		}
	}
	_, ok := indexed(t, b, "alpha")
	assert.True(t, ok, "the file keeps an index")
}

// An erased commit's words leave the file: from its pending document
// and from the posting blocks alike; the other commits' stay found.
func TestWordIndex_ErasedWordsLeaveTheFile(t *testing.T) {
	for _, tc := range []struct {
		name          string
		merge, recent uint64
	}{
		{"pending", 2048, 65536},
		{"recent blocks", 1, 65536}, // every commit merged into the recent blocks
		{"main blocks", 1, 1},       // and those into the main ones
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			b, err := store.OpenBolt(path, store.BoltOptions{Create: true})
			require.NoError(t, err)
			defer b.Close()
			store.SetWordsPolicy(b, tc.merge, 0, tc.recent)
			secret := "xylophonequartz"
			var gone dag.Hash
			var blob dag.Hash
			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) (err error) {
				if _, err = putWords(tx, 1, "kept words here"); err != nil {
					return err
				}
				gone, err = putWords(tx, 2, "kept and "+secret)
				blob = dag.Sum([]byte("kept and " + secret))
				return err
			}))
			for i := range 3 { // later versions of the index's pages
				require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
					_, err := putWords(tx, 3+i, fmt.Sprintf("filler %d kept", i))
					return err
				}))
			}
			require.True(t, fileHas(t, path, []byte(secret)), "precondition: the word is in the file")
			hs, ok := indexed(t, b, secret)
			require.True(t, ok)
			require.Equal(t, []dag.Hash{gone}, hs)

			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
				if err := tx.DeleteCommit(gone); err != nil {
					return err
				}
				return tx.DeleteBlob(blob)
			}))
			assert.False(t, fileHas(t, path, []byte(secret)), "the erased commit's word is still in the file")
			hs, _ = indexed(t, b, secret)
			assert.Empty(t, hs)
			hs, _ = indexed(t, b, "kept")
			assert.Len(t, hs, 4)
			r, err := store.Fsck(context.Background(), b)
			require.NoError(t, err)
			assert.Equal(t, store.WordIndexOK, r.WordIndex, r.WordIndexProblem)
		})
	}
}

// A file without an index (a tract's older than it) is read by a scan
// until its first write, which builds the index of every commit.
func TestWordIndex_FirstWriteBuildsIt(t *testing.T) {
	b := storetest.NewBolt(t)
	var old dag.Hash
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) (err error) {
		old, err = putWords(tx, 1, "an older text")
		return err
	}))
	require.NoError(t, raw(b).Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("words")) }))
	_, ok := indexed(t, b, "older")
	assert.False(t, ok, "no index: the caller reads every text")
	r, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, store.WordIndexAbsent, r.WordIndex)
	assert.Equal(t, []search.Hit{{Time: wordsT0.Add(time.Second), Hash: old}}, scanBoth(t, b, "older", 0))

	var newer dag.Hash
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) (err error) {
		newer, err = putWords(tx, 2, "a newer text")
		return err
	}))
	hs, ok := indexed(t, b, "text")
	assert.True(t, ok)
	assert.Equal(t, []dag.Hash{newer, old}, hs)
}

// Fsck finds an index that does not match the commits, whatever is
// wrong with it, and builds it again; a read-only check reports it.
func TestWordIndex_FsckRebuildsAWrongIndex(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(b *bolt.Bucket) error
		problem string
	}{
		{"a posting block lost", func(b *bolt.Bucket) error {
			return b.Delete(append([]byte("wdelta\x00"), make([]byte, 8)...))
		}, "words of commits"},
		{"a word added", func(b *bolt.Bucket) error {
			return b.Put(append([]byte("wintruder\x00"), make([]byte, 8)...), nil)
		}, "words of commits"},
		{"a document lost", func(b *bolt.Bucket) error {
			v := bytes.Clone(b.Get(append([]byte{'d'}, make([]byte, 8)...)))
			clear(v[8:16])
			return b.Put(append([]byte{'d'}, make([]byte, 8)...), v)
		}, "which it does not hold"},
		{"a malformed posting", func(b *bolt.Bucket) error {
			return b.Put(append([]byte("walpha\x00"), make([]byte, 8)...), []byte{0x80})
		}, "postings of \"alpha\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
			require.NoError(t, err)
			defer b.Close()
			store.SetWordsPolicy(b, 1, 0, 1)
			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
				for i, text := range []string{"alpha delta", "beta delta", "gamma"} {
					if _, err := putWords(tx, i, text); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, raw(b).Update(func(tx *bolt.Tx) error { return tc.damage(tx.Bucket([]byte("words"))) }))

			ro, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true})
			require.NoError(t, err)
			r, err := store.Fsck(context.Background(), ro)
			require.NoError(t, err)
			require.NoError(t, ro.Close())
			assert.Equal(t, store.WordIndexWrong, r.WordIndex)
			assert.Contains(t, r.WordIndexProblem, tc.problem)
			require.Len(t, r.Problems, 1)
			assert.Equal(t, "word index", r.Problems[0].Object)

			r, err = store.Fsck(context.Background(), b)
			require.NoError(t, err)
			assert.True(t, r.OK(), "%v", r.Problems)
			assert.Equal(t, store.WordIndexRebuilt, r.WordIndex)
			assert.Contains(t, r.WordIndexProblem, tc.problem)
			r, err = store.Fsck(context.Background(), b)
			require.NoError(t, err)
			assert.Equal(t, store.WordIndexOK, r.WordIndex, r.WordIndexProblem)
			scanBoth(t, b, "delta", 0)
			scanBoth(t, b, "intruder", 0)
			hs, _ := indexed(t, b, "delta")
			assert.Len(t, hs, 2)
		})
	}
}

// A bulk write builds the index that the same commits written one a
// transaction build: the same documents in each word's posting lists
// (which the two may cut into blocks and code apart: a list coded whole
// picks its parameter once, one grown a commit at a time each time its
// last block grows), and the rest key for key and byte for byte; with
// posting lists long enough for several blocks, words beyond ASCII,
// upper case, and runs longer than a word.
func TestWordIndex_BulkBuildsWhatCommitsOneByOneBuild(t *testing.T) {
	const n = 4500
	long := strings.Repeat("Ab", 40)
	text := func(i int) string {
		s := fmt.Sprintf("Message %d common", i)
		if i%3 == 0 {
			s += " Third ÉTÉ"
		}
		if i%7 == 0 {
			s += " " + long + " Δέλτα-x" + fmt.Sprint(i%11)
		}
		return s
	}
	blocks := map[*store.Bolt]int{} // of the common word
	dump := func(b *store.Bolt) map[string]string {
		out := map[string]string{}
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("words")).ForEach(func(k, v []byte) error {
				if k[0] != 'r' && k[0] != 'w' {
					out[string(k)] = string(v)
					return nil
				}
				list := string(k[:len(k)-8]) // level, word, 0
				if list == "rcommon\x00" {
					blocks[b]++
				}
				ids, err := store.PostingIDs(binary.BigEndian.Uint64(k[len(k)-8:]), v)
				require.NoError(t, err)
				out[list] += fmt.Sprint(ids)
				return nil
			})
		}))
		return out
	}

	oneByOne := storetest.NewBolt(t)
	store.SetWordsPolicy(oneByOne, 1, 1, 1<<40) // each commit merged into the recent blocks as it comes
	for i := range n {
		require.NoError(t, oneByOne.Update(context.Background(), func(tx store.Tx) error {
			_, err := putWords(tx, i, text(i))
			return err
		}))
	}
	bulk := storetest.NewBolt(t)
	store.SetWordsPolicy(bulk, 1, 1, 1<<40)
	require.NoError(t, bulk.Update(context.Background(), func(tx store.Tx) error {
		for i := n - 1; i >= 0; i-- { // numbered by time all the same
			if _, err := putWords(tx, i, text(i)); err != nil {
				return err
			}
		}
		return nil
	}))

	want, got := dump(oneByOne), dump(bulk)
	require.Greater(t, blocks[oneByOne], 1, "the common word takes several posting blocks")
	require.Greater(t, blocks[bulk], 1, "the common word takes several posting blocks")
	assert.Equal(t, want, got)
	scanBoth(t, bulk, "common third", 0)
	scanBoth(t, bulk, "δέλτα x3", 5)
}

// The recent posting blocks move into the main ones a few words a write
// transaction: every search answers as a scan does before, during and
// after the move, a move cut short by the process's end (the file closed
// half-way, as a kill leaves it: each step is its own part of a
// committed transaction) goes on with the next write of the next
// process, and fsck finds the index whole throughout.
func TestWordIndex_RecentBlocksMoveInSteps(t *testing.T) {
	for _, tc := range []recentMove{
		{name: "two words a step", words: 2, postings: 1 << 20, recent: 24, rounds: 150, moves: 3, check: 1},
		// The word of every document takes two posting blocks by the
		// time its recent ones move, which steps of a block each cut.
		{name: "a block a step", words: 1 << 10, postings: 1, recent: 4500, rounds: 2400, moves: 1, check: 200},
	} {
		t.Run(tc.name, func(t *testing.T) { testRecentMove(t, tc) })
	}
}

// recentMove is a case of TestWordIndex_RecentBlocksMoveInSteps: the
// words and the postings a step moves, the recent documents that start a
// move, the rounds of writes, the moves they make at least, and how often
// searches and fsck check the index (every check rounds, and every round
// of a move).
type recentMove struct {
	name                 string
	words, postings      int
	recent               uint64
	rounds, moves, check int
}

func testRecentMove(t *testing.T, tc recentMove) {
	path := filepath.Join(t.TempDir(), "tract.db")
	created := false
	open := func() *store.Bolt {
		b, err := store.OpenBolt(path, store.BoltOptions{Create: !created, NoSync: true})
		created = true
		require.NoError(t, err)
		store.SetJournalPolicy(b, 3, 1<<20, 64<<10) // a checkpoint every third record
		store.SetWordsPolicy(b, 4, 8, tc.recent)    // merged into the recent blocks every 4 documents
		store.SetRecentStep(b, tc.words, tc.postings)
		return b
	}
	b := open()
	defer func() { b.Close() }()
	// Frequent words, rare ones, and one of every document, which the
	// posting blocks of 300 documents take several blocks of.
	vocab := []string{"alpha", "beta", "gamma", "delta", "alphabet", "gam", "omega", "Δέλτα", "x1", "x12", "zeta", "eta"}
	queries := []string{"alpha", "alpha*", "gam*", "gamma beta", "x1*", "δέλτα", "omega alpha* x12", "zeta eta", "every", "every alpha", "nothing"}
	r := rand.New(rand.NewPCG(5, 6))
	var moves, movingRounds int
	reopened := false
	wasMoving := false
	for round := range tc.rounds {
		n := 1 + r.IntN(3)
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			for range n {
				ws := []string{"every"}
				for range 1 + r.IntN(5) {
					ws = append(ws, vocab[r.IntN(len(vocab))])
				}
				if _, err := putWords(tx, round, strings.Join(ws, " ")); err != nil {
					return err
				}
			}
			return nil
		}))
		moving, err := store.MovingRecent(b)
		require.NoError(t, err)
		if moving {
			movingRounds++
			if !wasMoving {
				moves++
			}
			if !reopened && moves >= min(2, tc.moves) {
				// The process ends half-way through a move: the next
				// one's writes go on with it.
				require.NoError(t, b.Close())
				b = open()
				reopened = true
				moving, err = store.MovingRecent(b)
				require.NoError(t, err)
				require.True(t, moving, "the move under way is in the file")
			}
		}
		wasMoving = moving
		if round%tc.check != 0 && !moving {
			continue
		}
		for _, q := range queries {
			scanBoth(t, b, q, 0)
			scanBoth(t, b, q, 2)
		}
		if round%10 == 0 || moving {
			rep, err := store.Fsck(context.Background(), b)
			require.NoError(t, err)
			require.Equal(t, store.WordIndexOK, rep.WordIndex, "round %d: %s", round, rep.WordIndexProblem)
		}
	}
	assert.GreaterOrEqual(t, moves, tc.moves, "moves started")
	assert.Greater(t, movingRounds, 2*moves, "a move takes several transactions")
	assert.True(t, reopened)
}

// Writers of one handle that wait for each other leave the index's
// upkeep (merges of pending documents, the steps of a move of the recent
// blocks) and the journal's checkpoints to the handle's background; once
// they stop, the writes that come carry the move's steps again, until it
// is done. The index answers as a scan does throughout.
func TestWordIndex_ConcurrentWritersLeaveTheUpkeepToTheBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	store.SetJournalPolicy(b, 3, 1<<20, 64<<10)
	store.SetWordsPolicy(b, 4, 8, 200)
	store.SetRecentStep(b, 2, 1<<20)
	vocab := []string{"alpha", "beta", "gamma", "delta", "omega", "zeta"}
	var wg sync.WaitGroup
	moved := atomic.Bool{}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for round := range 60 {
				assert.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
					_, err := putWords(tx, round, "every "+vocab[r.IntN(len(vocab))]+" "+vocab[r.IntN(len(vocab))])
					return err
				}))
				if moving, err := store.MovingRecent(b); err == nil && moving {
					moved.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	assert.True(t, moved.Load(), "a move of the recent blocks started")
	for _, q := range []string{"alpha", "every", "gamma beta", "omega*", "nothing"} {
		scanBoth(t, b, q, 0)
	}
	for i := 0; ; i++ {
		moving, err := store.MovingRecent(b)
		require.NoError(t, err)
		if !moving {
			break
		}
		require.Less(t, i, 10_000, "the move never ended")
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			_, err := putWords(tx, 100+i, "every alpha after")
			return err
		}))
	}
	require.NoError(t, b.Close())

	b, err = store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	for _, q := range []string{"alpha", "every", "gamma beta", "omega*", "nothing"} {
		scanBoth(t, b, q, 0)
	}
	rep, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, store.WordIndexOK, rep.WordIndex, rep.WordIndexProblem)
}

// A chain's words given with it (NewCommit.Words, tokenised before the
// transaction) are what the index takes: given as CommitWords makes them,
// every search answers as for the same chain without them, through the
// journal's documents, their checkpoint and their merge; the words given
// are taken as they are, the text not read again (and fsck, which reads
// it, finds the index wrong then, and builds it again).
func TestWordIndex_WordsGivenAhead(t *testing.T) {
	chain := func(n int, ahead func(c *dag.Commit, text string) []string) ([]store.NewCommit, []store.NewBlob) {
		var commits []store.NewCommit
		var blobs []store.NewBlob
		var parent dag.Hash
		for i := range 3 {
			text := fmt.Sprintf("question %d of round %d: what next? shared words", i, n)
			data := []byte(text)
			c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum(data), Time: wordsT0.Add(time.Duration(3*n+i) * time.Second)}
			if !parent.IsZero() {
				c.Parents = []dag.Hash{parent}
			}
			raw, err := dag.Encode(c)
			require.NoError(t, err)
			parent = dag.Sum(raw)
			commits = append(commits, store.NewCommit{Hash: parent, Commit: c, Raw: raw, Words: ahead(c, text)})
			blobs = append(blobs, store.NewBlob{Hash: c.Blob, Data: data})
		}
		return commits, blobs
	}
	write := func(ahead func(c *dag.Commit, text string) []string) *store.Bolt {
		b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		store.SetJournalPolicy(b, 4, 1<<20, 64<<10) // checkpointed every 4 writes
		store.SetWordsPolicy(b, 8, 256, 20)         // merged every 8 documents, moved every 20
		for n := range 41 {
			commits, blobs := chain(n, ahead)
			require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
				return store.PutChain(tx, wordsT0, commits, blobs)
			}))
		}
		return b
	}
	read := write(func(*dag.Commit, string) []string { return nil })
	given := write(store.CommitWords)
	for _, q := range []string{"question", "round", "17", "shared words", "what next"} {
		want, ok := indexed(t, read, q)
		require.True(t, ok)
		require.NotEmpty(t, want, q)
		got, ok := indexed(t, given, q)
		require.True(t, ok)
		assert.Equal(t, want, got, q)
	}
	taken := write(func(*dag.Commit, string) []string { return []string{"given"} })
	hs, _ := indexed(t, taken, "given")
	assert.Len(t, hs, 123)
	hs, _ = indexed(t, taken, "question")
	assert.Empty(t, hs)
	for _, tc := range []struct {
		b    *store.Bolt
		good bool
	}{{read, true}, {given, true}, {taken, false}} {
		r, err := store.Fsck(context.Background(), tc.b)
		require.NoError(t, err)
		assert.Empty(t, r.Problems)
		assert.Equal(t, tc.good, r.WordIndex != store.WordIndexRebuilt, r.WordIndexProblem)
	}
}
