package store_test

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

// The conformance suite again, with a journal checkpointed every third
// record and records of at most 4 KiB: its writes land in the journal,
// in packs and in the buckets, and its reads and deletes meet all three.
func TestBolt_ConformanceWithASmallJournal(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		b := createBolt(t)
		store.SetJournalPolicy(b, 3, 1<<20, 4<<10)
		return b
	})
}

// journalCommit writes what a commit writes: a blob, a commit, its
// counters, and an entry in the reflogs of HEAD and main.
func journalCommit(t *testing.T, b *store.Bolt, i int) (blob, commit dag.Hash) {
	t.Helper()
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		var err error
		if blob, err = tx.PutBlob(fmt.Appendf(nil, "message %d", i)); err != nil {
			return err
		}
		if commit, err = tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(int64(i), 0)}); err != nil {
			return err
		}
		if err := tx.(store.DerivedTx).PutCounters(commit, store.Counters{Depth: 1, Messages: 1, Tokens: 3}); err != nil {
			return err
		}
		for _, ref := range []string{"HEAD", "refs/heads/main"} {
			if err := tx.AppendReflog(ref, refs.Entry{New: commit, Time: time.Unix(int64(i), 0), Action: "commit", Message: fmt.Sprint(i)}); err != nil {
				return err
			}
		}
		return nil
	}))
	return blob, commit
}

// journalRecords returns the sequence numbers of the journal's records.
func journalRecords(t *testing.T, b *store.Bolt) []uint64 {
	t.Helper()
	var seqs []uint64
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		j := tx.Bucket([]byte("journal"))
		if j == nil {
			return nil
		}
		return j.ForEach(func(k, _ []byte) error {
			seqs = append(seqs, binary.BigEndian.Uint64(k))
			return nil
		})
	}))
	return seqs
}

// pendingWordDocs returns how many pending documents b's words bucket
// holds.
func pendingWordDocs(t *testing.T, b *store.Bolt) int {
	t.Helper()
	n := 0
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("words")).Cursor()
		for k, _ := c.Seek([]byte("p")); k != nil && k[0] == 'p'; k, _ = c.Next() {
			n++
		}
		return nil
	}))
	return n
}

// requireReadable checks that b reads commits 0..n-1 as journalCommit
// wrote them, by key and in listings, with their reflog entries in order.
func requireReadable(t *testing.T, b store.Store, n int) {
	t.Helper()
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		var listed int
		require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { listed++; return nil }))
		assert.Equal(t, n, listed, "blobs listed")
		for _, ref := range []string{"HEAD", "refs/heads/main"} {
			es, err := tx.Reflog(ref)
			require.NoError(t, err)
			require.Len(t, es, n, ref)
			for i, e := range es {
				assert.Equal(t, fmt.Sprint(i), e.Message, "%s entry %d in order", ref, i)
				c, err := tx.Commit(e.New)
				require.NoError(t, err)
				data, err := tx.Blob(c.Blob)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("message %d", i), string(data))
				cs, ok, err := tx.(store.DerivedTx).Counters(e.New)
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, store.Counters{Depth: 1, Messages: 1, Tokens: 3}, cs)
				got, err := tx.CommitsWithPrefix(e.New.String()[:10], 0)
				require.NoError(t, err)
				assert.Equal(t, []dag.Hash{e.New}, got)
			}
		}
		names, err := tx.ReflogNames()
		require.NoError(t, err)
		if n > 0 {
			assert.Equal(t, []string{"HEAD", "refs/heads/main"}, names)
		}
		return nil
	}))
}

// A small write is one journal record, not a page of each bucket; the
// journal is checkpointed into a pack and the reflogs bucket once it
// reaches its bound, and reads see the same history throughout.
func TestJournal_RecordsAndCheckpoints(t *testing.T) {
	b := createBolt(t)
	store.SetJournalPolicy(b, 4, 1<<20, 64<<10)

	blob, _ := journalCommit(t, b, 0)
	assert.Equal(t, []uint64{1}, journalRecords(t, b))
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		assert.Nil(t, tx.Bucket([]byte("blobs")).Get(blob[:]), "the blob is in the journal, not the bucket")
		assert.Nil(t, tx.Bucket([]byte("reflogs")).Bucket([]byte("HEAD")))
		assert.Equal(t, []byte{store.SchemaVersion}, tx.Bucket([]byte("meta")).Get([]byte("schema")), "schema 4 for the journal, and 9 for the stored forms of texts a new file has")
		return nil
	}))
	assert.Zero(t, pendingWordDocs(t, b), "the commit's word-index document is in the record, not the words bucket")
	requireReadable(t, b, 1)

	var commits []dag.Hash
	for i := 1; i < 3; i++ {
		_, c := journalCommit(t, b, i)
		commits = append(commits, c)
	}
	assert.Equal(t, []uint64{1, 2, 3}, journalRecords(t, b))
	requireReadable(t, b, 3)
	hs, ok := indexed(t, b, "message 2")
	require.True(t, ok)
	assert.Equal(t, []dag.Hash{commits[1]}, hs, "the index finds a document of the journal")
	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, store.WordIndexOK, report.WordIndex, "%s", report.WordIndexProblem)

	_, last := journalCommit(t, b, 3) // the fourth record: a checkpoint
	assert.Empty(t, journalRecords(t, b))
	assert.Equal(t, 4, pendingWordDocs(t, b), "the checkpoint moved the documents to the words bucket")
	hs, ok = indexed(t, b, "message")
	require.True(t, ok)
	assert.Equal(t, []dag.Hash{last, commits[1], commits[0]}, hs[:3], "newest first")
	packs := 0
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		assert.Equal(t, 4, tx.Bucket([]byte("reflogs")).Bucket([]byte("HEAD")).Stats().KeyN)
		return tx.Bucket([]byte("packs")).ForEachBucket(func([]byte) error { packs++; return nil })
	}))
	assert.Equal(t, 1, packs)
	requireReadable(t, b, 4)

	journalCommit(t, b, 4) // after the checkpoint, numbers go on
	assert.Equal(t, []uint64{5}, journalRecords(t, b))
	requireReadable(t, b, 5)

	report, err = store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, store.WordIndexOK, report.WordIndex, "%s", report.WordIndexProblem)
	assert.Equal(t, 5, report.Commits)
	assert.Equal(t, 10, report.ReflogEntries)
}

// Another handle (another process) sees each new record, and the
// journal's checkpoint, in its next transaction.
func TestJournal_AnotherHandleSeesEveryRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	w, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer w.Close()
	store.SetJournalPolicy(w, 3, 1<<20, 64<<10)
	r, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer r.Close()
	linger := r.Linger() // one session: its index is extended, then replaced
	defer linger()
	for i := range 7 {
		journalCommit(t, w, i)
		requireReadable(t, r, i+1)
	}
}

// A transaction that began before a checkpoint reads the journal as its
// snapshot has it, though the session's index has moved on.
func TestJournal_AnOlderSnapshotReadsItsOwnJournal(t *testing.T) {
	b := createBolt(t)
	store.SetJournalPolicy(b, 2, 1<<20, 64<<10)
	// Free pages for the writes below: a write that grew the file would
	// wait for the reader to end before remapping it (bbolt).
	// The text is random, so that compression does not shrink it.
	big := make([]byte, 1<<20)
	_, _ = crand.Read(big)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { _, err := tx.PutBlob(big); return err }))
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteBlob(dag.Sum(big)) }))
	_, first := journalCommit(t, b, 0)
	// The reader joins the writer's session, so both share its index
	// (a write would otherwise wait for a read-only session to end).
	done1 := b.Linger()
	defer done1()
	started, checked := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.View(context.Background(), func(tx store.Tx) error {
			if ok, err := tx.HasCommit(first); err != nil || !ok {
				return fmt.Errorf("before: %v %v", ok, err)
			}
			close(started)
			<-checked
			c, err := tx.Commit(first)
			if err != nil {
				return err
			}
			es, err := tx.Reflog("HEAD")
			if err != nil || len(es) != 1 || es[0].New != first || c.Kind != dag.KindMessage {
				return fmt.Errorf("after: %v %v", es, err)
			}
			return nil
		})
	}()
	<-started
	_, second := journalCommit(t, b, 1) // the checkpoint
	journalCommit(t, b, 2)              // a new journal, which the session indexes
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasCommit(second)
		assert.True(t, ok)
		return err
	}))
	close(checked)
	require.NoError(t, <-done)
	done1()
	assert.Equal(t, []uint64{3}, journalRecords(t, b), "the checkpoint happened under the reader")
	requireReadable(t, b, 3)
}

// A transaction that rolls back leaves no record, and nothing of it is
// found afterwards.
func TestJournal_RollbackLeavesNothing(t *testing.T) {
	b := createBolt(t)
	journalCommit(t, b, 0)
	var h dag.Hash
	err := b.Update(context.Background(), func(tx store.Tx) error {
		var err error
		if h, err = tx.PutBlob([]byte("rolled back")); err != nil {
			return err
		}
		if ok, _ := tx.HasBlob(h); !ok {
			return fmt.Errorf("the transaction does not see its own blob")
		}
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	assert.Equal(t, []uint64{1}, journalRecords(t, b))
	journalCommit(t, b, 1)
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(h)
		assert.False(t, ok)
		return err
	}))
	requireReadable(t, b, 2)
}

var errRollback = fmt.Errorf("roll back")

// A transaction that adds more than one record may hold writes to the
// buckets, after checkpointing the journal: a ref's reflog stays in order.
func TestJournal_LargeWritesGoToTheBuckets(t *testing.T) {
	b := createBolt(t)
	store.SetJournalPolicy(b, 100, 1<<20, 2<<10)
	journalCommit(t, b, 0)
	journalCommit(t, b, 1)
	big := make([]byte, 4<<10) // random: compression does not shrink it
	_, _ = crand.Read(big)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		h, err := tx.PutBlob(big)
		if err != nil {
			return err
		}
		return tx.AppendReflog("HEAD", refs.Entry{New: h, Time: time.Unix(2, 0), Action: "large", Message: "2"})
	}))
	assert.Empty(t, journalRecords(t, b), "checkpointed before writing to the buckets")
	journalCommit(t, b, 3)
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		es, err := tx.Reflog("HEAD")
		require.NoError(t, err)
		require.Len(t, es, 4)
		for i, e := range es {
			assert.Equal(t, fmt.Sprint(i), e.Message)
		}
		data, err := tx.Blob(dag.Sum(big))
		require.NoError(t, err)
		assert.Equal(t, big, data)
		return nil
	}))
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		h := dag.Sum(big)
		assert.NotNil(t, tx.Bucket([]byte("blobs")).Get(h[:]))
		return nil
	}))
}

// Deleting a text that is in the journal checkpoints the journal and
// deletes it there; the text is gone from the file.
func TestJournal_DeleteErasesAJournalText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true})
	require.NoError(t, err)
	defer b.Close()
	secret := secretText("journal")
	var h dag.Hash
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) (err error) { h, err = tx.PutBlob(secret); return err }))
	journalCommit(t, b, 0)
	require.True(t, fileHas(t, path, secret), "precondition")
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteBlob(h) }))
	assert.Empty(t, journalRecords(t, b))
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(h)
		assert.False(t, ok)
		return err
	}))
	requireReadable(t, b, 1)
	assert.False(t, fileHas(t, path, secret), "the deleted text is still in the file")
}

// Compact merges the journal into the buckets: the compacted file has no
// journal and reads the same.
func TestJournal_CompactMergesIt(t *testing.T) {
	b := createBolt(t)
	store.SetJournalPolicy(b, 3, 1<<20, 64<<10)
	for i := range 5 { // a checkpoint, then two records
		journalCommit(t, b, i)
	}
	require.Len(t, journalRecords(t, b), 2)
	before, ok := indexed(t, b, "message")
	require.True(t, ok)
	require.Len(t, before, 5)
	_, _, err := b.Compact(context.Background())
	require.NoError(t, err)
	assert.Empty(t, journalRecords(t, b))
	assert.Equal(t, 5, pendingWordDocs(t, b), "the records' word-index documents are pending in the words bucket")
	requireReadable(t, b, 5)
	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, store.WordIndexOK, report.WordIndex, "%s", report.WordIndexProblem)
	after, ok := indexed(t, b, "message")
	require.True(t, ok)
	assert.Equal(t, before, after)
	journalCommit(t, b, 5) // numbered after them
	report, err = store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, store.WordIndexOK, report.WordIndex, "%s", report.WordIndexProblem)
}

// A journal record that does not decode is a problem fsck names; salvage
// keeps what the others hold.
func TestJournal_DamagedRecord(t *testing.T) {
	b := createBolt(t)
	journalCommit(t, b, 0)
	journalCommit(t, b, 1)
	require.NoError(t, raw(b).Update(func(tx *bolt.Tx) error {
		j := tx.Bucket([]byte("journal"))
		if err := j.Put([]byte{0xff}, []byte{1}); err != nil { // not a sequence number
			return err
		}
		return j.Put(binary.BigEndian.AppendUint64(nil, 2), []byte{9, 9, 9})
	}))
	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(report.Problems), "journal record 2: does not decode")
	assert.Contains(t, fmt.Sprint(report.Problems), "journal key ff: does not decode")
	requireReadable(t, b, 1)

	out := filepath.Join(t.TempDir(), "salvaged.db")
	res, err := store.Salvage(context.Background(), b.Path(), out)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Commits, "the intact record's commit")
	assert.Contains(t, fmt.Sprint(res.Lost), "journal record")
}

// ReflogTail gives the newest entries of a reflog, wherever they are:
// the reflogs bucket (after a checkpoint), the journal, and the
// transaction's own; the same as the end of Reflog, for every length.
func TestBolt_ReflogTailIsTheEndOfTheReflog(t *testing.T) {
	b := createBolt(t)
	store.SetJournalPolicy(b, 3, 1<<20, 4<<10) // a checkpoint every third record
	at := time.Unix(1_700_000_000, 0)
	entry := func(i int) refs.Entry {
		return refs.Entry{New: dag.Sum([]byte(fmt.Sprint(i))), Action: refs.ActionCommit, Message: fmt.Sprint("move ", i), Time: at.Add(time.Duration(i) * time.Second)}
	}
	for i := range 10 {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, entry(i)) }))
	}
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for i := 10; i < 12; i++ {
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(i)))
		}
		all, err := tx.Reflog(refs.HEAD)
		require.NoError(t, err)
		require.Len(t, all, 12)
		for n := 0; n <= 14; n++ {
			tail, err := store.ReflogTail(tx, refs.HEAD, n)
			require.NoError(t, err)
			if n == 0 {
				assert.Empty(t, tail)
				continue
			}
			assert.Equal(t, all[max(len(all)-n, 0):], tail, "n=%d", n)
		}
		none, err := store.ReflogTail(tx, "refs/heads/none", 3)
		require.NoError(t, err)
		assert.Empty(t, none)
		return nil
	}))
}

// A checkpoint of the reflog entries of many refs, as a proxy's
// conversations each move a branch, keeps them in the journal as one
// record, the next checkpoint's too, until they outgrow the policy's
// bound or a transaction rewrites a reflog: then they move to the reflogs
// bucket. Reads see every ref's entries in order throughout, from this
// handle and another.
func TestJournal_ACheckpointKeepsManyRefsReflogEntries(t *testing.T) {
	var write func(round, from, to int)
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	store.SetJournalPolicy(b, 4, 1<<20, 64<<10)
	other, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer other.Close()

	const nrefs = 12
	ref := func(i int) string { return fmt.Sprintf("refs/heads/serve/%02d", i) }
	// checkpoint writes an entry to each ref in as many writes as make
	// the journal reach its bound of 4 records, the first of which may
	// be the record a checkpoint kept.
	checkpoint := func(round int) {
		t.Helper()
		writes := 4 - len(journalRecords(t, b))
		for w := range writes {
			write(round, w*nrefs/writes, (w+1)*nrefs/writes)
		}
	}
	write = func(round, from, to int) {
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			for r := from; r < to; r++ {
				blob, err := tx.PutBlob(fmt.Appendf(nil, "round %d, ref %d", round, r))
				if err != nil {
					return err
				}
				h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(int64(round), 0)})
				if err != nil {
					return err
				}
				if err := tx.AppendReflog(ref(r), refs.Entry{New: h, Time: time.Unix(int64(round), 0), Action: "commit", Message: fmt.Sprint(round)}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	inBucket := func() (n int) {
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("reflogs")).ForEachBucket(func(k []byte) error {
				n += tx.Bucket([]byte("reflogs")).Bucket(k).Stats().KeyN
				return nil
			})
		}))
		return n
	}
	readable := func(rounds int) {
		t.Helper()
		for _, s := range []*store.Bolt{b, other} {
			require.NoError(t, s.View(context.Background(), func(tx store.Tx) error {
				for r := range nrefs {
					es, err := tx.Reflog(ref(r))
					require.NoError(t, err)
					require.Len(t, es, rounds, ref(r))
					for round, e := range es {
						assert.Equal(t, fmt.Sprint(round), e.Message, "%s entry %d in order", ref(r), round)
					}
					tail, err := tx.(store.ReflogTailer).ReflogTail(ref(r), 1)
					require.NoError(t, err)
					assert.Equal(t, es[len(es)-1:], tail)
				}
				names, err := tx.ReflogNames()
				require.NoError(t, err)
				assert.Len(t, names, nrefs)
				return nil
			}))
		}
	}

	for round := range 2 {
		checkpoint(round)
		assert.Len(t, journalRecords(t, b), 1, "round %d: the checkpoint kept its reflog entries as one record", round)
		n, err := store.JournalReflogEntries(b)
		require.NoError(t, err)
		assert.Equal(t, (round+1)*nrefs, n, "round %d", round)
		assert.Zero(t, inBucket(), "round %d", round)
		readable(round + 1)
	}
	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 2*nrefs, report.ReflogEntries)

	// Past the bound, the next checkpoint moves them all.
	store.SetJournalPolicy(b, 4, 8<<10, 64<<10)
	checkpoint(2)
	assert.Empty(t, journalRecords(t, b))
	assert.Equal(t, 3*nrefs, inBucket())
	readable(3)

	// A reflog rewritten moves the journal's entries first.
	store.SetJournalPolicy(b, 4, 1<<20, 64<<10)
	checkpoint(3)
	require.Len(t, journalRecords(t, b), 1)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		es, err := tx.Reflog(ref(0))
		if err != nil {
			return err
		}
		return tx.ReplaceReflog(ref(0), es)
	}))
	assert.Empty(t, journalRecords(t, b))
	assert.Equal(t, 4*nrefs, inBucket())
	readable(4)
	report, err = store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 4*nrefs, report.ReflogEntries)
}
