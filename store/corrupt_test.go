package store_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// populatedRepo writes a closed repository file with a few hundred commits,
// blobs from a few bytes to several pages (overflow pages), refs and
// reflogs, and returns its bytes and the length its pages use: bbolt grows
// files in steps, so the file may end in unused space.
func populatedRepo(t *testing.T) (data []byte, used int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		var parent []dag.Hash
		for i := range 300 {
			size := 10 + rng.IntN(200)
			if i%25 == 0 {
				size = 5000 + rng.IntN(20000)
			}
			text := bytes.Repeat([]byte(fmt.Sprintf("%d ", i)), size/4+1)
			blob, err := tx.PutBlob(text)
			if err != nil {
				return err
			}
			h, err := tx.PutCommit(&dag.Commit{Parents: parent, Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob,
				Meta: []byte(fmt.Sprintf(`{"i":%d}`, i)), Time: at.Add(time.Duration(i) * time.Second)})
			if err != nil {
				return err
			}
			parent = []dag.Hash{h}
			if err := tx.AppendReflog(refs.HEAD, refs.Entry{New: h, Time: at, Action: refs.ActionCommit, Message: "commit"}); err != nil {
				return err
			}
			if i%50 == 0 {
				if err := tx.SetRef(refs.Ref{Name: fmt.Sprintf("refs/heads/b%d", i), Hash: h}); err != nil {
					return err
				}
			}
		}
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: parent[0]})
	}))
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		used = int(tx.Size())
		return nil
	}))
	require.NoError(t, b.Close())
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	return data, used
}

// openAndFsck opens a damaged repository and, if that works, runs Fsck on
// it. Neither may panic or crash the process (a memory fault in a goroutine
// that bbolt starts cannot be recovered, so a crash fails the whole test
// binary).
func openAndFsck(t *testing.T, path string, readOnly bool) (opened bool, report *store.FsckReport, err error) {
	t.Helper()
	b, err := store.OpenBolt(path, store.BoltOptions{NoSync: true, ReadOnly: readOnly, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		return false, nil, err
	}
	defer b.Close()
	report, err = store.Fsck(context.Background(), b)
	return true, report, err
}

// Cuts a repository file at page boundaries and in the middle of pages:
// every cut inside the used pages is refused by Open or reported by Fsck.
func TestBolt_TruncatedFileIsReportedNotCrashed(t *testing.T) {
	data, used := populatedRepo(t)
	dir := t.TempDir()
	var cuts []int
	for n := 0; n < len(data); n += 4096 {
		cuts = append(cuts, n, n+1, n+2048)
	}
	cuts = append(cuts, used-1)
	for _, n := range cuts {
		if n >= used {
			continue // only unused space is cut off
		}
		path := filepath.Join(dir, fmt.Sprintf("cut-%d.db", n))
		require.NoError(t, os.WriteFile(path, data[:n], 0o600))
		opened, r, err := openAndFsck(t, path, n%2 == 1)
		if !opened {
			assert.ErrorIs(t, err, store.ErrNotRepository, "cut at %d", n)
			continue
		}
		require.NoError(t, err, "cut at %d: Fsck reports damage as problems, not as an error", n)
		assert.False(t, r.OK(), "cut at %d of %d: opened and fsck found nothing", n, used)
	}
}

// Overwrites runs of random bytes anywhere in the used pages, meta pages
// included: nothing crashes, and most of the damage is noticed.
func TestBolt_OverwrittenBytesAreReportedNotCrashed(t *testing.T) {
	data, used := populatedRepo(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	runs := 300
	if !testing.Short() && os.Getenv("TRACT_STRESS") != "" {
		runs = 5000
	}
	noticed := 0
	for i := range runs {
		damaged := bytes.Clone(data)
		off := rng.IntN(used)
		n := 16 + rng.IntN(512)
		for j := off; j < off+n && j < len(damaged); j++ {
			damaged[j] = byte(rng.Uint32())
		}
		path := filepath.Join(dir, fmt.Sprintf("noise-%d.db", i))
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		opened, r, err := openAndFsck(t, path, i%3 == 0)
		switch {
		case !opened:
			assert.ErrorIs(t, err, store.ErrNotRepository, "noise %d at %d+%d", i, off, n)
			noticed++
		case err != nil:
			t.Errorf("noise %d at %d+%d: Fsck reports damage as problems, not as an error: %v", i, off, n, err)
		case r.OK():
			// Free pages, the unused end of a page, or the text of a reflog
			// message: nothing hashes those.
			t.Logf("noise %d at %d+%d went unnoticed", i, off, n)
		default:
			noticed++
		}
	}
	assert.Greater(t, noticed, runs/2, "fsck noticed only %d of %d damaged files", noticed, runs)
}
