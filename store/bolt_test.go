package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

func TestBolt_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return createBolt(t) })
}

func TestBolt_NewFileHasMode0600AndPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", ".tract")
	path := filepath.Join(dir, "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.Close())

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

func TestBolt_CreatedRepositoryReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	assert.Equal(t, path, b.Path())
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.PutBlob([]byte("kept"))
		return err
	}))
	require.NoError(t, b.Close())

	b, err = store.OpenBolt(path, store.BoltOptions{})
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("kept")))
		assert.True(t, ok)
		return err
	}))
}

func TestBolt_OpenMissingFileWithoutCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := store.OpenBolt(path, store.BoltOptions{})
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrNotRepository)
	assert.Contains(t, err.Error(), "no such file")
	assert.Contains(t, err.Error(), path)
	assert.NoFileExists(t, path, "opening must not create the file")
}

func TestBolt_CreateWhereRepositoryExistsFailsWithErrExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: dag.Sum([]byte("c"))})
	}))
	require.NoError(t, b.Close())

	_, err = store.OpenBolt(path, store.BoltOptions{Create: true})
	assert.ErrorIs(t, err, store.ErrExists)

	b, err = store.OpenBolt(path, store.BoltOptions{})
	require.NoError(t, err, "the failed create leaves the repository usable")
	defer b.Close()
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		h, ok, err := store.ResolveRef(tx, refs.HEAD)
		assert.True(t, ok)
		assert.Equal(t, dag.Sum([]byte("c")), h)
		return err
	}))
}

func TestBolt_FilesThatAreNotRepositories(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rand.N(256))
	}
	tests := []struct {
		name    string
		content []byte
		create  bool
		wantMsg string
	}{
		{"random bytes", random, false, "not a tract repository"},
		{"random bytes with create", random, true, "not a tract repository"},
		{"short text", []byte("hello, world\n"), false, "not a tract repository"},
		{"empty file", []byte{}, false, "the file is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".db")
			require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			_, err := store.OpenBolt(path, store.BoltOptions{Create: tt.create, LockTimeout: 100 * time.Millisecond})
			require.Error(t, err)
			assert.ErrorIs(t, err, store.ErrNotRepository)
			assert.Contains(t, err.Error(), tt.wantMsg)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.content, got, "a file that is not a repository is left alone")
		})
	}
}

func TestBolt_DirectoryIsNotARepository(t *testing.T) {
	_, err := store.OpenBolt(t.TempDir(), store.BoltOptions{Create: true})
	assert.ErrorIs(t, err, store.ErrNotRepository)
	assert.ErrorContains(t, err, "it is a directory")
}

func TestBolt_BboltFileOfAnotherProgramIsNotARepository(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("settings"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}))
	require.NoError(t, db.Close())

	_, err = store.OpenBolt(path, store.BoltOptions{})
	assert.ErrorIs(t, err, store.ErrNotRepository)
	assert.ErrorContains(t, err, "without tract's metadata")

	_, err = store.OpenBolt(path, store.BoltOptions{Create: true})
	assert.ErrorIs(t, err, store.ErrNotRepository)
	assert.ErrorContains(t, err, "another program")

	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		assert.Equal(t, "v", string(tx.Bucket([]byte("settings")).Get([]byte("k"))), "the other program's data is untouched")
		assert.Nil(t, tx.Bucket([]byte("meta")), "create added nothing")
		return nil
	}))
}

func TestBolt_EmptyBboltFileBecomesARepositoryOnlyWithCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty-bbolt.db")
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = store.OpenBolt(path, store.BoltOptions{})
	assert.ErrorIs(t, err, store.ErrNotRepository)

	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.Close())
}

func TestBolt_NewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.SetSchemaVersion(store.SchemaVersion+1))
	require.NoError(t, b.Close())

	for _, readOnly := range []bool{false, true} {
		_, err = store.OpenBolt(path, store.BoltOptions{ReadOnly: readOnly})
		require.Error(t, err)
		assert.ErrorIs(t, err, store.ErrNewerSchema)
		assert.Contains(t, err.Error(), fmt.Sprintf("the file has schema %d, this tract reads up to %d; upgrade tract",
			store.SchemaVersion+1, store.SchemaVersion))
	}
}

// Two handles on one file in one process: the queue lock belongs to the
// open file, so a second handle waits for the first like another process
// would, and gives up with a *LockedError after its timeout.
func TestBolt_TransactionWaitsForAnotherHandleThenTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	first, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer first.Close()
	// The first handle keeps the file for a short grace after its last
	// transaction: wait that out (a probe that waits long enough, then
	// lets go at once), so that opening with a 100ms timeout does not
	// race it on a busy machine.
	probe, err := store.OpenBolt(path, store.BoltOptions{LockTimeout: 10 * time.Second})
	require.NoError(t, err)
	require.NoError(t, probe.Close())
	second, err := store.OpenBolt(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
	require.NoError(t, err, "an idle handle holds no lock")
	defer second.Close()

	release := storetest.HoldWrite(t, first)
	for name, tx := range map[string]func(context.Context, func(store.Tx) error) error{"View": second.View, "Update": second.Update} {
		start := time.Now()
		err := tx(context.Background(), func(store.Tx) error { return nil })
		var locked *store.LockedError
		require.ErrorAs(t, err, &locked, name)
		assert.Equal(t, path, locked.Path)
		assert.Equal(t, 100*time.Millisecond, locked.Waited)
		assert.ErrorContains(t, err, path)
		assert.ErrorContains(t, err, "is locked: another process held it for longer than the lock timeout (100ms)")
		assert.Less(t, time.Since(start), 2*time.Second, "the timeout bounds the wait")
	}
	release()

	// The first handle is idle again: it lets go within its idle grace
	// (a third handle waits for it as long as a busy machine may need).
	third, err := store.OpenBolt(path, store.BoltOptions{LockTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer third.Close()
	require.NoError(t, third.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.PutBlob([]byte("second"))
		return err
	}))
	require.NoError(t, first.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("second")))
		assert.True(t, ok, "the first handle sees what the second wrote")
		return err
	}))
}

// A handle waiting for the file gets it as soon as the holder is done: it
// is woken by the kernel, not by polling.
func TestBolt_WaiterGetsTheFileWhenTheHolderFinishes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	first, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer first.Close()
	second, err := store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer second.Close()

	release := storetest.HoldWrite(t, first)
	got := make(chan error)
	go func() {
		got <- second.Update(context.Background(), func(tx store.Tx) error {
			_, err := tx.PutBlob([]byte("after"))
			return err
		})
	}()
	select {
	case err := <-got:
		t.Fatalf("the second handle wrote while the first held the file: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	require.NoError(t, <-got)
}

func TestBolt_ReadOnlyOpensShareTheLockAndRefuseUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.Close())

	r1, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true, LockTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer r1.Close()
	r2, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true, LockTimeout: 100 * time.Millisecond})
	require.NoError(t, err, "readers share the lock")
	defer r2.Close()

	require.NoError(t, r1.View(context.Background(), func(tx store.Tx) error { _, err := tx.Refs(); return err }))
	err = r1.Update(context.Background(), func(tx store.Tx) error { return nil })
	assert.ErrorIs(t, err, store.ErrReadOnly)
	assert.ErrorContains(t, err, "opened read-only")

	report, err := store.Fsck(context.Background(), r2)
	require.NoError(t, err)
	assert.True(t, report.OK(), "%v", report.Problems)
}

func TestBolt_CallerPanicInUpdatePropagates(t *testing.T) {
	b := storetest.NewBolt(t)
	assert.PanicsWithValue(t, "caller bug", func() {
		_ = b.Update(context.Background(), func(tx store.Tx) error {
			_, _ = tx.PutBlob([]byte("doomed"))
			panic("caller bug")
		})
	})
	assert.Panics(t, func() {
		_ = b.View(context.Background(), func(tx store.Tx) error {
			var m map[string]int
			//lint:ignore SA5000 a deliberate bug in the caller, not in the file
			m["x"] = 1
			return nil
		})
	})
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		ok, err := tx.HasBlob(dag.Sum([]byte("doomed")))
		assert.False(t, ok, "the panicking Update was rolled back")
		return err
	}))
}

// corruptPage rewrites the page-type flags of page id in the closed
// repository file at path.
func corruptPage(t *testing.T, path string, pageSize int, id uint64, flags uint16) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt(binary.LittleEndian.AppendUint16(nil, flags), int64(id)*int64(pageSize)+8)
	require.NoError(t, err)
}

// Damaging the page a bucket's B+tree starts on passes Open (which reads
// only the top level) and makes bbolt panic on the first read of the
// bucket: that panic becomes ErrCorrupt, and Fsck reports it.
func TestBolt_BboltPanicOnDamagedPageBecomesErrCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	store.WithoutJournal(b) // the test damages the blobs bucket's page
	var blob dag.Hash
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for i := range 200 { // enough blobs for the bucket to get a page of its own
			h, err := tx.PutBlob(bytes.Repeat([]byte{byte(i)}, 100))
			if err != nil {
				return err
			}
			blob = h
		}
		return nil
	}))
	var root uint64
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket([]byte("blobs")).Root())
		return nil
	}))
	pageSize := raw(b).Info().PageSize
	require.NoError(t, b.Close())
	require.NotZero(t, root)
	corruptPage(t, path, pageSize, root, 0x10) // 0x10 is the free-list page type

	b, err = store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	err = b.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Blob(blob)
		return err
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), fmt.Sprintf("page %d is not the kind of page expected there (flags 10)", root))

	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	require.False(t, report.OK())
	var messages []string
	for _, p := range report.Problems {
		if p.Object == "file" {
			messages = append(messages, p.Message)
		}
	}
	assert.Contains(t, strings.Join(messages, "\n"), fmt.Sprintf("page %d: invalid type", root))
}

// Open checks a file under a shared lock, which does not load the free
// list: a damaged one is found by the first write, which fails cleanly.
func TestBolt_DamagedFreeListFailsTheFirstWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	pageSize := raw(b).Info().PageSize
	require.NoError(t, b.Close())
	corruptPage(t, path, pageSize, freelistPage(t, path, pageSize), 0x02) // a leaf page where the free list should be

	b, err = store.OpenBolt(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer b.Close()
	err = b.Update(context.Background(), func(store.Tx) error { return nil })
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrNotRepository)
	assert.Contains(t, err.Error(), "the free list is damaged: its page's header is not a free-list page's (it names page")
	assertUnlocked(t, path)

	report, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.False(t, report.OK())
	assert.Contains(t, fmt.Sprint(report.Problems), "cannot be opened for writing")
}

// freelistPage reads the free-list page id from the newer of the two meta
// pages of a closed bbolt file (bbolt's meta layout: page header, then
// magic, version, page size, flags, root bucket, free-list page id at
// offset 48, high water mark, transaction id at offset 64).
func freelistPage(t *testing.T, path string, pageSize int) uint64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	best, id := uint64(0), uint64(0)
	for _, off := range []int{0, pageSize} {
		txid := binary.LittleEndian.Uint64(data[off+64:])
		if txid >= best {
			best, id = txid, binary.LittleEndian.Uint64(data[off+48:])
		}
	}
	require.NotEqual(t, ^uint64(0), id, "the file has no free-list page")
	return id
}

func TestBolt_WritesInDamagedFileReportErrCorruptAndKeepTheStoreUsable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	store.WithoutJournal(b) // commits are written to the damaged B+tree
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		for i := range 200 {
			if _, err := tx.PutCommit(&dag.Commit{Kind: dag.KindNote, Role: dag.RoleTool, Time: time.Unix(int64(i), 0)}); err != nil {
				return err
			}
		}
		return nil
	}))
	var root uint64
	require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket([]byte("commits")).Root())
		return nil
	}))
	pageSize := raw(b).Info().PageSize
	require.NoError(t, b.Close())
	corruptPage(t, path, pageSize, root, 0x10)

	b, err = store.OpenBolt(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	store.WithoutJournal(b)
	err = b.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.PutCommit(&dag.Commit{Kind: dag.KindNote, Role: dag.RoleTool, Time: time.Unix(1000, 0)})
		return err
	})
	assert.ErrorIs(t, err, store.ErrCorrupt)
	// Blobs live in another B+tree: the store still works for them.
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.PutBlob([]byte("still works"))
		return err
	}))
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Blob(dag.Sum([]byte("still works")))
		return err
	}))
	_, err = store.Fsck(context.Background(), b)
	require.NoError(t, err)
}

// PackSorted fills pages when keys arrive in ascending order: the same
// blobs take far fewer leaf pages than with bbolt's default half-full
// splits, and read back the same.
func TestBolt_PackSortedFillsPages(t *testing.T) {
	pages := func(pack bool) int {
		b := createBolt(t)
		var hashes []dag.Hash
		data := make(map[dag.Hash][]byte)
		for i := range 2000 {
			d := []byte(fmt.Sprintf("blob %04d %s", i, strings.Repeat("x", 200)))
			h := dag.Sum(d)
			hashes = append(hashes, h)
			data[h] = d
		}
		slices.SortFunc(hashes, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
			if pack {
				tx.(store.SortedPacker).PackSorted()
			}
			for _, h := range hashes {
				if _, err := tx.PutBlob(data[h]); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
			for h, d := range data {
				got, err := tx.Blob(h)
				require.NoError(t, err)
				require.Equal(t, d, got)
			}
			return nil
		}))
		var n int
		require.NoError(t, raw(b).View(func(tx *bolt.Tx) error {
			n = tx.Bucket([]byte("blobs")).Stats().LeafPageN
			return nil
		}))
		return n
	}
	loose, packed := pages(false), pages(true)
	assert.Less(t, float64(packed), 0.6*float64(loose), "packed %d leaf pages, loose %d", packed, loose)
}

// A bulk writer that hashed its objects puts them without hashing again;
// they read back as if put with PutBlob and PutCommit.
func TestBolt_HashedPuts(t *testing.T) {
	b := storetest.NewBolt(t)
	data := []byte("hashed text")
	blob := dag.Sum(data)
	c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	raw, err := dag.Encode(c)
	require.NoError(t, err)
	h := dag.Sum(raw)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		hp, ok := tx.(store.HashedPutter)
		require.True(t, ok)
		require.NoError(t, hp.PutHashedBlob(blob, data))
		require.NoError(t, hp.PutHashedBlob(blob, data), "a blob already stored is kept once")
		return hp.PutEncodedCommit(h, raw)
	}))
	require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
		got, err := tx.Commit(h)
		require.NoError(t, err)
		assert.Equal(t, c, got)
		text, err := tx.Blob(blob)
		require.NoError(t, err)
		assert.Equal(t, data, text)
		err = tx.(store.HashedPutter).PutHashedBlob(blob, data)
		assert.ErrorIs(t, err, store.ErrReadOnly)
		return nil
	}))
	r, err := store.Fsck(context.Background(), b)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%v", r.Problems)
}
