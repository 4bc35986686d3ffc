package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
