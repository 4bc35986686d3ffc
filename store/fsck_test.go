package store_test

import (
	"context"
	"encoding/binary"
	"strings"
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

// fsckRepo is a small consistent history: root ← child on main, with a
// reflog entry for each commit.
type fsckRepo struct {
	b           *store.Bolt
	root, child dag.Hash
	rootBlob    dag.Hash
	childBlob   dag.Hash
}

func newFsckRepo(t *testing.T) fsckRepo {
	t.Helper()
	r := fsckRepo{b: createBolt(t)}
	store.WithoutJournal(r.b) // the damage is planted in the buckets
	at := time.Date(2024, 5, 17, 9, 0, 0, 0, time.UTC)
	require.NoError(t, r.b.Update(context.Background(), func(tx store.Tx) error {
		var err error
		if r.rootBlob, err = tx.PutBlob([]byte("You are terse.")); err != nil {
			return err
		}
		if r.childBlob, err = tx.PutBlob([]byte("Hello")); err != nil {
			return err
		}
		if r.root, err = tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleSystem, Blob: r.rootBlob, Time: at}); err != nil {
			return err
		}
		if r.child, err = tx.PutCommit(&dag.Commit{Parents: []dag.Hash{r.root}, Kind: dag.KindMessage, Role: dag.RoleUser,
			Blob: r.childBlob, Time: at.Add(time.Second)}); err != nil {
			return err
		}
		if err := tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: r.child}); err != nil {
			return err
		}
		for _, e := range []refs.Entry{{New: r.root, Time: at, Action: refs.ActionCommit}, {Old: r.root, New: r.child, Time: at, Action: refs.ActionCommit}} {
			if err := tx.AppendReflog("refs/heads/main", e); err != nil {
				return err
			}
		}
		return nil
	}))
	return r
}

// raw writes key → value into a top-level bucket through the bbolt handle,
// bypassing every check of the Store.
func (r fsckRepo) raw(t *testing.T, bucket string, key, value []byte) {
	t.Helper()
	require.NoError(t, raw(r.b).Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucket)).Put(key, value)
	}))
}

func TestFsck_CleanRepositoryIsOK(t *testing.T) {
	r := newFsckRepo(t)
	report, err := store.Fsck(context.Background(), r.b)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, store.FsckReport{Commits: 2, Blobs: 2, Refs: 2, ReflogEntries: 2, WordIndex: store.WordIndexOK, Problems: []store.Problem{}}, *report, "no problems is an empty list, [] in JSON")
}

func TestFsck_ReportsDamage(t *testing.T) {
	tests := []struct {
		name       string
		damage     func(t *testing.T, r fsckRepo)
		wantObject func(r fsckRepo) string
		wantMsg    string
	}{
		{
			name:       "blob content altered",
			damage:     func(t *testing.T, r fsckRepo) { r.raw(t, "blobs", r.childBlob[:], []byte("Hellò")) },
			wantObject: func(r fsckRepo) string { return "blob " + r.childBlob.Short() },
			wantMsg:    "content hashes to " + dag.Sum([]byte("Hellò")).Short() + ", not to its key",
		},
		{
			name: "commit stored under the wrong key",
			damage: func(t *testing.T, r fsckRepo) {
				raw := encodeCommit(t, &dag.Commit{Kind: dag.KindNote, Role: dag.RoleTool, Blob: r.rootBlob, Time: time.Unix(1, 0)})
				r.raw(t, "commits", r.child[:], raw)
			},
			wantObject: func(r fsckRepo) string { return "commit " + r.child.Short() },
			wantMsg:    "not to its key",
		},
		{
			name: "commit whose parent is missing",
			damage: func(t *testing.T, r fsckRepo) {
				require.NoError(t, raw(r.b).Update(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("commits")).Delete(r.root[:])
				}))
			},
			wantObject: func(r fsckRepo) string { return "commit " + r.child.Short() },
			wantMsg:    "parent " + "%ROOT%" + " is missing",
		},
		{
			name: "commit whose blob is missing",
			damage: func(t *testing.T, r fsckRepo) {
				require.NoError(t, raw(r.b).Update(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("blobs")).Delete(r.rootBlob[:])
				}))
			},
			wantObject: func(r fsckRepo) string { return "commit " + r.root.Short() },
			wantMsg:    "blob " + "%ROOTBLOB%" + " is missing",
		},
		{
			name: "ref to a missing commit",
			damage: func(t *testing.T, r fsckRepo) {
				r.raw(t, "refs", []byte("refs/heads/gone"), refs.Ref{Hash: dag.Sum([]byte("gone"))}.Encode())
			},
			wantObject: func(fsckRepo) string { return "ref refs/heads/gone" },
			wantMsg:    "points at missing commit " + dag.Sum([]byte("gone")).Short(),
		},
		{
			name:       "commit bytes that do not decode",
			damage:     func(t *testing.T, r fsckRepo) { r.raw(t, "commits", r.root[:], []byte("\x01garbage")) },
			wantObject: func(r fsckRepo) string { return "commit " + r.root.Short() },
			wantMsg:    "not a canonical commit encoding",
		},
		{
			name: "commit with non-canonical metadata",
			damage: func(t *testing.T, r fsckRepo) {
				raw := []byte{1, 0, 4}
				raw = append(raw, "note"...)
				raw = append(raw, 4)
				raw = append(raw, "tool"...)
				raw = append(raw, r.rootBlob[:]...)
				raw = append(raw, 13)
				raw = append(raw, `{"b":1,"a":2}`...)
				raw = binary.BigEndian.AppendUint64(raw, 1)
				h := dag.Sum(raw)
				r.raw(t, "commits", h[:], raw)
			},
			wantObject: func(fsckRepo) string { return "commit " },
			wantMsg:    "metadata is not canonical JSON",
		},
		{
			name:       "ref value that is neither hash nor symbolic",
			damage:     func(t *testing.T, r fsckRepo) { r.raw(t, "refs", []byte("refs/heads/bad"), []byte("garbage")) },
			wantObject: func(fsckRepo) string { return "refs" },
			wantMsg:    "cannot read: ref refs/heads/bad: stored value of 7 bytes",
		},
		{
			name: "reflog entry that does not decode",
			damage: func(t *testing.T, r fsckRepo) {
				require.NoError(t, raw(r.b).Update(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("reflogs")).Bucket([]byte("refs/heads/main")).Put([]byte("\x00\x00\x00\x00\x00\x00\x00\x09"), []byte{1, 2, 3})
				}))
			},
			wantObject: func(fsckRepo) string { return "reflog refs/heads/main" },
			wantMsg:    "reflog entry: malformed (3 bytes)",
		},
		{
			name:       "blob key of the wrong length",
			damage:     func(t *testing.T, r fsckRepo) { r.raw(t, "blobs", []byte("short"), []byte("x")) },
			wantObject: func(fsckRepo) string { return "blobs" },
			wantMsg:    "cannot iterate: blob key of 5 bytes",
		},
		{
			name: "HEAD deleted",
			damage: func(t *testing.T, r fsckRepo) {
				require.NoError(t, raw(r.b).Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("refs")).Delete([]byte("HEAD")) }))
			},
			wantObject: func(fsckRepo) string { return "ref HEAD" },
			wantMsg:    "is missing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFsckRepo(t)
			tt.damage(t, r)
			report, err := store.Fsck(context.Background(), r.b)
			require.NoError(t, err)
			require.False(t, report.OK(), "the damage went unnoticed")
			wantMsg := strings.NewReplacer("%ROOT%", r.root.Short(), "%ROOTBLOB%", r.rootBlob.Short()).Replace(tt.wantMsg)
			found := false
			for _, p := range report.Problems {
				if strings.HasPrefix(p.Object, tt.wantObject(r)) && strings.Contains(p.Message, wantMsg) {
					found = true
				}
			}
			assert.True(t, found, "no problem %q: %q among %v", tt.wantObject(r), wantMsg, report.Problems)
		})
	}
}

func TestFsck_ProblemsAreSortedByObject(t *testing.T) {
	r := newFsckRepo(t)
	r.raw(t, "refs", []byte("refs/heads/gone"), refs.Ref{Hash: dag.Sum([]byte("gone"))}.Encode())
	r.raw(t, "blobs", r.childBlob[:], []byte("tampered"))
	report, err := store.Fsck(context.Background(), r.b)
	require.NoError(t, err)
	require.Len(t, report.Problems, 2)
	assert.Equal(t, "blob "+r.childBlob.Short(), report.Problems[0].Object)
	assert.Equal(t, "ref refs/heads/gone", report.Problems[1].Object)
	assert.Equal(t, "ref refs/heads/gone: points at missing commit "+dag.Sum([]byte("gone")).Short(), report.Problems[1].String())
}

func TestFsck_MemoryStore(t *testing.T) {
	m := storetest.NewMemory(t) // checked again on cleanup
	require.NoError(t, m.Update(context.Background(), func(tx store.Tx) error {
		b, err := tx.PutBlob([]byte("x"))
		if err != nil {
			return err
		}
		h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: b, Time: time.Unix(1, 0)})
		if err != nil {
			return err
		}
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h})
	}))
	report, err := store.Fsck(context.Background(), m)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
	assert.Equal(t, 1, report.Commits)
}

func encodeCommit(t *testing.T, c *dag.Commit) []byte {
	t.Helper()
	raw, err := dag.Encode(c)
	require.NoError(t, err)
	return raw
}
