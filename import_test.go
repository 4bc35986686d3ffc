package tract_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/search"
	"github.com/tractdag/tract/store"
)

// seqOf yields msgs, then err (when set) instead of message failAt.
func seqOf(msgs []tract.ImportMessage, failAt int, err error) iter.Seq2[tract.ImportMessage, error] {
	return func(yield func(tract.ImportMessage, error) bool) {
		for i, m := range msgs {
			if err != nil && i == failAt {
				yield(tract.ImportMessage{}, err)
				return
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}

// small are the batch limits the tests use to have many batches.
var small = tract.ImportBatch(100, 4096)

func commitCount(t *testing.T, tr *tract.Tract) int {
	t.Helper()
	n := 0
	require.NoError(t, tr.Store().View(context.Background(), func(tx store.Tx) error {
		return tx.ForEachCommit(func(tract.Hash, []byte) error { n++; return nil })
	}))
	return n
}

func unpublished(t *testing.T, tr *tract.Tract) []store.PackInfo {
	t.Helper()
	var out []store.PackInfo
	require.NoError(t, tr.Store().View(context.Background(), func(tx store.Tx) (err error) {
		out, err = tx.(store.PackTx).UnpublishedPacks()
		return err
	}))
	return out
}

// A long import goes in through a pack, many transactions, and ends as a
// short one would: the same chain, counters, one reflog entry; Compact
// merges the pack away.
func TestImportSeq_ManyBatchesLandAsOne(t *testing.T) {
	for _, backend := range []string{"bolt", "memory"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var tr *tract.Tract
			if backend == "bolt" {
				tr = newTract(t)
			} else {
				var err error
				tr, err = tract.Open("", tract.WithStore(store.NewMemory()), tract.WithClock(stepClock()))
				require.NoError(t, err)
				defer tr.Close()
			}
			_, err := tr.System(ctx, "You answer briefly.")
			require.NoError(t, err)
			msgs := chain(1050, 60, "bulk")
			msgs[10].Kind, msgs[10].Role = tract.KindNote, tract.RoleUser
			msgs[20].Content = msgs[21].Content // a blob twice in one import
			msgs[30].Meta = []byte(`{"source":"test"}`)

			res, err := tr.ImportSeq(ctx, seqOf(msgs, 0, nil), small)
			require.NoError(t, err)
			assert.Equal(t, 1050, res.Messages)
			assert.Greater(t, res.Batches, 5, "written in many transactions")

			log, err := tr.Log(ctx)
			require.NoError(t, err)
			require.Len(t, log, 1051)
			assert.Equal(t, res.Tip, log[0].Hash)
			for i, m := range msgs {
				c := log[len(msgs)-1-i]
				assert.Equal(t, m.Content, c.Text, "message %d", i+1)
				if i > 0 {
					assert.True(t, c.Time.After(log[len(msgs)-i].Time), "times rise along the chain")
				}
			}
			assert.Equal(t, tract.KindNote, log[len(msgs)-1-10].Kind)
			assert.Equal(t, "test", log[len(msgs)-1-30].MetaValue("source"))
			requireStatusMatchesCompile(t, tr)
			var entries []refs.Entry
			require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) (err error) {
				entries, err = tx.Reflog(refs.BranchRef("main"))
				return err
			}))
			assert.Equal(t, "import: 1050 commits", entries[len(entries)-1].Message)
			assert.Empty(t, unpublished(t, tr))

			report, err := tr.Fsck(ctx)
			require.NoError(t, err)
			require.True(t, report.OK(), "%v", report.Problems)
			assert.Equal(t, 1051, report.Commits)
			if backend == "bolt" {
				runs, err := filepath.Glob(filepath.Join(filepath.Dir(tr.Path()), "tract-sort-*"))
				require.NoError(t, err)
				assert.Empty(t, runs, "the sort's files are gone")
				assert.Equal(t, 1, report.Packs)
				_, err = tr.Compact(ctx)
				require.NoError(t, err)
				report, err = tr.Fsck(ctx)
				require.NoError(t, err)
				assert.True(t, report.OK(), "%v", report.Problems)
				assert.Zero(t, report.Packs, "compact merged the pack")
				after, err := tr.Log(ctx)
				require.NoError(t, err)
				assert.Equal(t, log, after)
			}
		})
	}
}

// Whatever stops a long import (a bad message in a late batch, a failing
// stream, a cancelled context) leaves the repository as it was: the
// branch, the commits, and no pack behind.
func TestImportSeq_FailureLeavesNothing(t *testing.T) {
	boom := errors.New("the source broke")
	bad := chain(900, 40, "bad")
	bad[776].Role = "wizard"
	for _, tc := range []struct {
		name string
		seq  func(cancel context.CancelFunc) iter.Seq2[tract.ImportMessage, error]
		want []string
		is   error
	}{
		{"an invalid message in a late batch", func(context.CancelFunc) iter.Seq2[tract.ImportMessage, error] {
			return seqOf(bad, 0, nil)
		}, []string{"message 777", "wizard"}, nil},
		{"a failing stream", func(context.CancelFunc) iter.Seq2[tract.ImportMessage, error] {
			return seqOf(chain(900, 40, "s"), 650, boom)
		}, []string{"the source broke"}, boom},
		{"a cancelled context", func(cancel context.CancelFunc) iter.Seq2[tract.ImportMessage, error] {
			return func(yield func(tract.ImportMessage, error) bool) {
				for i, m := range chain(900, 40, "c") {
					if i == 500 {
						cancel()
					}
					if !yield(m, nil) {
						return
					}
				}
			}
		}, nil, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTract(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			before := commitChain(t, tr, 3, "before")
			_, err := tr.ImportSeq(ctx, tc.seq(cancel), small)
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			tip, err := tr.Resolve(context.Background(), "HEAD")
			require.NoError(t, err)
			assert.Equal(t, before[2], tip)
			assert.Equal(t, 3, commitCount(t, tr))
			assert.Empty(t, unpublished(t, tr))
		})
	}
}

// When the branch moves while a long import runs, the import is kept off
// the branch, recorded in the stranded reflog, and reported as a conflict.
func TestImportSeq_BranchMovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	commitChain(t, tr, 2, "base")
	other, err := tract.Open(tr.Path(), tract.WithNoSync())
	require.NoError(t, err)
	defer other.Close()
	msgs := chain(500, 40, "long")
	_, err = tr.ImportSeq(ctx, commitsMeanwhile(t, other, msgs, "meanwhile"), small)
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	require.ErrorIs(t, err, tract.ErrConflict)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, "meanwhile", log[0].Text, "the other writer's commit stays")
	kept, err := tr.Show(ctx, conflict.Kept.String())
	require.NoError(t, err)
	assert.Equal(t, msgs[499].Content, kept.Text, "the import is kept, off the branch")
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, refs.ActionConflict, all.Orphans[0].Action)
	assert.Len(t, all.Orphans[0].Commits, 500)
}

// An abandoned unpublished pack (its import was killed) is dropped by GC
// once it has not been written to for an hour, whatever the expiry; a
// fresher one, perhaps an import running now, stays even with expiry 0.
func TestGC_DropsAbandonedPacks(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tr := newTract(t, tract.WithClock(clock))
	es := []store.PackEntry{{Kind: store.PackBlob, Hash: tract.Hash{1}, Value: []byte("x")}}
	for _, age := range []time.Duration{3 * time.Hour, 10 * time.Minute} {
		require.NoError(t, tr.Store().Update(ctx, func(tx store.Tx) error {
			p := tx.(store.PackTx)
			id, err := p.CreatePack(now.Add(-age))
			if err != nil {
				return err
			}
			return p.AppendPack(id, now.Add(-age), es)
		}))
	}
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "unfinished imports are not problems: %v", report.Problems)
	assert.Equal(t, 2, report.UnfinishedImports)

	rm, err := tr.GC(ctx, tract.GCExpiry(0), tract.GCDryRun())
	require.NoError(t, err)
	assert.Equal(t, 1, rm.UnfinishedImports)
	assert.Len(t, unpublished(t, tr), 2, "a dry run drops nothing")
	rm, err = tr.GC(ctx, tract.GCExpiry(0))
	require.NoError(t, err)
	assert.Equal(t, 1, rm.UnfinishedImports)
	left := unpublished(t, tr)
	require.Len(t, left, 1)
	assert.Equal(t, now.Add(-10*time.Minute), left[0].Updated)
	rm, err = tr.GC(ctx) // 30 days
	require.NoError(t, err)
	assert.Zero(t, rm.UnfinishedImports)
}

// A file written by the format before packs (schema 2, testdata/schema2.db,
// made by that tract) opens and reads as it is; its first write marks it
// schema 4 (the write is a journal record, which that tract would not
// read), and it goes on taking imports through packs, and imports of
// conversations whose branches are published as a refset (schema 5).
func TestImport_UpgradesASchema2File(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(filepath.Join("testdata", "schema2.db"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tract.db")
	require.NoError(t, os.WriteFile(path, src, 0o600))
	schema := func() byte {
		var v []byte
		rawFile(t, path, func(tx *bolt.Tx) error {
			v = slices.Clone(tx.Bucket([]byte("meta")).Get([]byte("schema")))
			return nil
		})
		require.Len(t, v, 1)
		return v[0]
	}
	require.Equal(t, byte(2), schema())

	tr, err := tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a note", `{"name":"Ada"}`, "Describe Ada", "You answer in JSON."}, textsOf(log))
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "And Babbage?", all.Orphans[0].Commits[0].Text)
	requireStatusMatchesCompile(t, tr)

	babbage, err := search.ParseQuery("babbage")
	require.NoError(t, err)
	searchFinds := func(want ...string) {
		t.Helper()
		got := []string{}
		for c, err := range tr.Search(ctx, babbage) {
			require.NoError(t, err)
			got = append(got, c.Text)
		}
		assert.Equal(t, want, got)
	}
	searchFinds("And Babbage?") // read without an index, before the first write

	_, err = tr.User(ctx, "an ordinary write")
	require.NoError(t, err)
	searchFinds("And Babbage?") // through the index the first write built
	_, err = tr.User(ctx, "Babbage again")
	require.NoError(t, err)
	searchFinds("Babbage again", "And Babbage?")
	require.NoError(t, tr.Close())
	assert.Equal(t, byte(8), schema(), "the first write builds the word index (schema 8), beside its journal record (4)")

	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = tr.ImportSeq(ctx, seqOf(chain(300, 40, "big"), 0, nil), small)
	require.NoError(t, err)
	requireStatusMatchesCompile(t, tr)
	report, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	require.NoError(t, tr.Close())
	assert.Equal(t, byte(8), schema())

	// Conversations imported through a pack publish their branches as a
	// refset (schema 5); the file's reflogs of the older layout read as
	// before, and the new branches' beside them.
	tr, err = tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	before, err := tr.Reflog(ctx, "HEAD")
	require.NoError(t, err)
	bs, err := tr.ImportConversations(ctx, "conv", tract.ReadConversations(strings.NewReader(conversationsJSONL(60))), small)
	require.NoError(t, err)
	require.Len(t, bs, 60)
	after, err := tr.Reflog(ctx, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, before, after)
	es, err := tr.Reflog(ctx, bs[59].Name)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, bs[59].Hash, es[0].New)
	report, err = tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	require.NoError(t, tr.Close())
	assert.Equal(t, byte(8), schema(), "a refset (schema 5) leaves the word index's schema")
}

func textsOf(cs []*tract.CommitInfo) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

// A long import through a view lands on the view's branch and leaves HEAD
// alone; on a detached HEAD (no branch to move) it is refused before
// anything is written.
func TestImportSeq_OnAViewAndOnADetachedHead(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	base := commitChain(t, tr, 2, "base")
	_, err := tr.CreateBranch(ctx, "bulk", "")
	require.NoError(t, err)

	res, err := tr.OnBranch("bulk").ImportSeq(ctx, seqOf(chain(450, 40, "view"), 0, nil), small)
	require.NoError(t, err)
	assert.Greater(t, res.Batches, 1)
	head, err := tr.Resolve(ctx, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, base[1], head, "HEAD did not move")
	tip, err := tr.Resolve(ctx, "bulk")
	require.NoError(t, err)
	assert.Equal(t, res.Tip, tip)
	st, err := tr.OnBranch("bulk").Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 452, st.Length)

	_, err = tr.Checkout(ctx, base[0].String())
	require.NoError(t, err)
	before := commitCount(t, tr)
	_, err = tr.ImportSeq(ctx, seqOf(chain(450, 40, "detached"), 0, nil), small)
	require.ErrorIs(t, err, tract.ErrDetachedHead)
	assert.Equal(t, before, commitCount(t, tr), "nothing written")
	assert.Empty(t, unpublished(t, tr))
}

// A handle opened read-only reads a repository whose history is in a pack.
func TestImportSeq_ReadOnlyHandleReadsPacks(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.ImportSeq(ctx, seqOf(chain(300, 40, "packed"), 0, nil), small)
	require.NoError(t, err)
	ro, err := tract.Open(tr.Path(), tract.WithReadOnly())
	require.NoError(t, err)
	defer ro.Close()
	log, err := ro.Log(ctx)
	require.NoError(t, err)
	assert.Len(t, log, 300)
	msgs, err := ro.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 300)
	r, err := ro.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%v", r.Problems)
	assert.Equal(t, 1, r.Packs)
}

// A long import into a repository that may not be written is refused
// before its input is sorted: with ErrReadOnly, having read no more than
// its first batch.
func TestImportSeq_ReadOnlyRefusedBeforeSorting(t *testing.T) {
	ctx := context.Background()
	tr := newTract(t)
	_, err := tr.User(ctx, "hello")
	require.NoError(t, err)
	ro, err := tract.Open(tr.Path(), tract.WithReadOnly())
	require.NoError(t, err)
	defer ro.Close()
	read := 0
	msgs := func(yield func(tract.ImportMessage, error) bool) {
		for m, err := range seqOf(chain(450, 40, "refused"), 0, nil) {
			read++
			if !yield(m, err) {
				return
			}
		}
	}
	_, err = ro.ImportSeq(ctx, msgs, small)
	require.ErrorIs(t, err, tract.ErrReadOnly)
	assert.LessOrEqual(t, read, 101, "the import read on past its first batch")
	assert.Equal(t, 1, commitCount(t, tr))
}

// commitsMeanwhile yields msgs for an import, and has other commit text
// as a user message on its branch once 300 of them were read: a write
// that lands while the import's pack is being built.
func commitsMeanwhile(t *testing.T, other *tract.Tract, msgs []tract.ImportMessage, text string) iter.Seq2[tract.ImportMessage, error] {
	return func(yield func(tract.ImportMessage, error) bool) {
		for i, m := range msgs {
			if i == 300 {
				_, err := other.User(context.Background(), text)
				require.NoError(t, err)
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}
