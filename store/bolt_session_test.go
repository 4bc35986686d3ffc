package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// One handle, a writer goroutine and reader goroutines: every transaction
// gets its turn. A reader that found no session open while a writer
// waited used to open a shared one, find the writer waiting, close it and
// open it again, never letting go of the handle's lock in between, so the
// writer waited forever.
func TestSessions_WritersAndReadersOfOneHandleAllGetTheirTurn(t *testing.T) {
	// No idle grace: each transaction opens the file and the last one out
	// closes it, so transactions often find no session open.
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true, IdleGrace: -1})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	const writes, readers = 300, 3
	var written atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range writes {
			err := b.Update(context.Background(), func(tx store.Tx) error {
				_, err := tx.PutBlob([]byte(fmt.Sprintf("text %d", i)))
				return err
			})
			if !assert.NoError(t, err) {
				return
			}
			written.Add(1)
			runtime.Gosched()
		}
	})
	for range readers {
		wg.Go(func() {
			for written.Load() < writes {
				assert.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
					_, err := tx.Ref("HEAD")
					return err
				}))
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang, not a speed limit: the test takes a fraction of a second
		buf := make([]byte, 1<<20)
		t.Fatalf("stuck after %d of %d writes:\n%s", written.Load(), writes, buf[:runtime.Stack(buf, true)])
	}
	require.EqualValues(t, writes, written.Load())
}

// A write goes to the file the path names when it runs, even while the
// handle holds the file open (a long idle grace keeps the session of
// the first write): after the file was moved away or removed, the write
// fails instead of going to a file nobody opens at that path any more
// (and, removed, losing it); after another repository was moved over
// the path, the write goes to that one.
func TestSessions_WriteGoesToTheFileThePathNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change changes what path names; it returns where the
		// handle's first file is now ("" when it is gone).
		change   func(t *testing.T, path string) (old string)
		replaced bool // the write goes to a new file at path
	}{
		{name: "moved away", change: func(t *testing.T, path string) string {
			moved := path + ".moved"
			require.NoError(t, os.Rename(path, moved))
			return moved
		}},
		{name: "removed", change: func(t *testing.T, path string) string {
			require.NoError(t, os.Remove(path))
			return ""
		}},
		{name: "replaced", replaced: true, change: func(t *testing.T, path string) string {
			other := filepath.Join(filepath.Dir(path), "other.db")
			o, err := store.OpenBolt(other, store.BoltOptions{Create: true, NoSync: true})
			require.NoError(t, err)
			require.NoError(t, o.Close())
			moved := path + ".moved"
			require.NoError(t, os.Rename(path, moved))
			require.NoError(t, os.Rename(other, path))
			return moved
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tract.db")
			b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true, IdleGrace: time.Hour})
			require.NoError(t, err)
			defer b.Close()
			put := func(text string) (dag.Hash, error) {
				var h dag.Hash
				err := b.Update(context.Background(), func(tx store.Tx) (err error) {
					h, err = tx.PutBlob([]byte(text))
					return err
				})
				return h, err
			}
			before, err := put("before")
			require.NoError(t, err)
			old := tc.change(t, path)
			after, err := put("after")
			if !tc.replaced {
				require.ErrorIs(t, err, store.ErrNotRepository)
				assert.ErrorIs(t, err, fs.ErrNotExist)
			} else {
				require.NoError(t, err)
			}
			require.NoError(t, b.Close())
			has := func(path string, h dag.Hash) bool {
				r, err := store.OpenBolt(path, store.BoltOptions{ReadOnly: true})
				require.NoError(t, err)
				defer r.Close()
				var ok bool
				require.NoError(t, r.View(context.Background(), func(tx store.Tx) (err error) {
					ok, err = tx.HasBlob(h)
					return err
				}))
				return ok
			}
			if old != "" {
				assert.True(t, has(old, before), "the first write is in the file it went to")
				assert.False(t, has(old, after), "the write after the move went to the moved file")
			}
			if tc.replaced {
				assert.True(t, has(path, after), "the write went to the file the path names")
				assert.False(t, has(path, before))
			}
		})
	}
}
