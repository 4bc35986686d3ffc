package tract_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// crashRecorder is the testing.TB the crash harness reports to in
// TestCrash_PostgresChecksSeeDamage: it records failures instead of
// failing the test, and logs them.
type crashRecorder struct {
	testing.TB
	errs []string
}

func (r *crashRecorder) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.errs = append(r.errs, msg)
	r.TB.Logf("the checks report: %s", msg)
}

// The checks of TestCrash_KillAtRandomPostgres can fail: on a repository
// made as the worker makes one (acknowledged commits with tagged texts,
// one of them then erased by a hard reset), each kind of damage the kill
// test looks for, made by hand in the rows, is reported by the checks
// that run after each kill; undamaged, the same repository passes them.
func TestCrash_PostgresChecksSeeDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage makes the damage with SQL statements run by do, given the
		// repository's name, the acknowledged commits (oldest first), and
		// the commit the hard reset erased, encoded, with its text.
		damage func(do func(sql string, args ...any), repo string, live []dag.Hash, erased dag.Hash, raw []byte, text string)
		want   []string // what the reports must say, each in one of them; none: no report
	}{
		{
			name:   "none",
			damage: func(func(string, ...any), string, []dag.Hash, dag.Hash, []byte, string) {},
		},
		{
			name: "a commit a ref reaches deleted",
			damage: func(do func(string, ...any), repo string, live []dag.Hash, _ dag.Hash, _ []byte, _ string) {
				do(`DELETE FROM tract_commits WHERE repository = $1 AND hash = $2`, repo, live[len(live)-1][:])
			},
			want: []string{"fsck found", "is gone"},
		},
		{
			name: "the text of a live commit deleted",
			damage: func(do func(string, ...any), repo string, _ []dag.Hash, _ dag.Hash, _ []byte, _ string) {
				do(`DELETE FROM tract_blobs WHERE repository = $1 AND hash = $2`, repo, crashBlob(crashDamageText(1)))
			},
			want: []string{"fsck found", "reading the acknowledged commits"},
		},
		{
			// The control: a live text that no row holds (its blob, and the
			// reflog entries that quote it, deleted).
			name: "a live text in no row",
			damage: func(do func(string, ...any), repo string, _ []dag.Hash, _ dag.Hash, _ []byte, _ string) {
				do(`DELETE FROM tract_blobs WHERE repository = $1 AND hash = $2`, repo, crashBlob(crashDamageText(1)))
				do(`DELETE FROM tract_reflog WHERE repository = $1`, repo)
			},
			want: []string{"the text [tc-r0000-n000001] of a live acknowledged commit is not in the repository's rows: the check cannot see texts"},
		},
		{
			// (A missing counters row is no damage: rows are added as
			// commits become tips. A wrong one is.)
			name: "a derived counters row wrong",
			damage: func(do func(string, ...any), repo string, live []dag.Hash, _ dag.Hash, _ []byte, _ string) {
				do(`UPDATE tract_counters SET depth = depth + 1 WHERE repository = $1 AND hash = $2`, repo, live[len(live)-1][:])
			},
			want: []string{"fsck found"},
		},
		{
			name: "the erased commit back",
			damage: func(do func(string, ...any), repo string, _ []dag.Hash, erased dag.Hash, raw []byte, _ string) {
				do(`INSERT INTO tract_commits (repository, hash, raw) VALUES ($1, $2, $3)`, repo, erased[:], raw)
			},
			want: []string{"reported erased, is back"},
		},
		{
			name: "the erased text's blob back",
			damage: func(do func(string, ...any), repo string, _ []dag.Hash, _ dag.Hash, _ []byte, text string) {
				do(`INSERT INTO tract_blobs (repository, hash, data) VALUES ($1, $2, $3)`, repo, crashBlob(text), []byte(text))
			},
			want: []string{"its blob is still stored", "is still in the repository's rows: the whole text, tract_blobs.data"},
		},
		{
			name: "a fragment of the erased text in a pack",
			damage: func(do func(string, ...any), repo string, _ []dag.Hash, _ dag.Hash, _ []byte, text string) {
				do(`WITH p AS (INSERT INTO tract_packs (repository, updated_ns, entries) VALUES ($1, 0, 1) RETURNING id)
INSERT INTO tract_pack_entries (pack, ord, kind, hash, value) SELECT id, 0, 0, $2, $3 FROM p`,
					repo, crashBlob(text), []byte("..."+text[:crashTagLen+10]))
			},
			want: []string{"is still in the repository's rows: a fragment", "tract_pack_entries.value"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := &crashRecorder{TB: t}
			be := crashPostgresBackend(t)
			h := newCrashHarness(rec, 1, be)
			tr, err := tract.Open(be.location)
			require.NoError(t, err)
			defer tr.Close()

			// Four commits, acknowledged as the worker reports them.
			var live []dag.Hash
			h.apply(crashLineBegin+" "+crashCommitMany, 0)
			for n := 1; n <= 4; n++ {
				text := crashDamageText(n)
				hash, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, text)
				require.NoError(t, err)
				h.apply(fmt.Sprintf("%s %s %s", crashLineAck, hash, strconv.Quote(text)), 0)
				live = append(live, hash)
			}
			h.apply(crashLineDone+" "+crashCommitMany, 0)
			h.check(1)
			require.Empty(t, rec.errs, "the checks of an undamaged repository")

			// A hard reset erases the last one.
			erased := live[len(live)-1]
			live = live[:len(live)-1]
			var raw []byte
			require.NoError(t, tr.Store().View(ctx, func(tx store.Tx) error {
				c, err := tx.Commit(erased)
				if err == nil {
					raw, err = dag.Encode(c)
				}
				return err
			}))
			h.apply(crashLineBegin+" "+crashResetHard+" "+erased.String(), 0)
			res, err := tr.Reset(ctx, "HEAD~1", tract.Hard)
			require.NoError(t, err)
			require.Equal(t, 1, res.Deleted.Commits)
			h.apply(crashLineErased+" "+erased.String(), 0)
			h.apply(crashLineDone+" "+crashResetHard, 0)

			tc.damage(func(sql string, args ...any) {
				require.NotZero(t, pgtest.Exec(t, be.location, sql, args...), "the damage touched no row: %s", sql)
			}, pgtest.RepositoryOf(t, be.location), live, erased, raw, crashDamageText(4))
			h.check(2)
			if len(tc.want) == 0 {
				assert.Empty(t, rec.errs)
				return
			}
			all := strings.Join(rec.errs, "\n")
			for _, want := range tc.want {
				assert.Contains(t, all, want)
			}
		})
	}
}

// crashDamageText is text n of TestCrash_PostgresChecksSeeDamage, tagged
// as a worker's (of run 0, which no worker has).
func crashDamageText(n int) string {
	tag := crashTag(0, n)
	return tag + " ledger orbit quartz " + tag + " maple signal harbor"
}

// crashBlob returns the key of the blob of text.
func crashBlob(text string) []byte {
	h := dag.Sum([]byte(text))
	return h[:]
}
