package store

import (
	"context"
	crand "crypto/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// A session that has written more than the write limit closes after its
// transaction, so that the pages it read through its memory map leave
// the process's memory; the next transaction opens the file again.
func TestSession_ClosesAfterTheWriteLimit(t *testing.T) {
	b, err := OpenBolt(filepath.Join(t.TempDir(), "tract.db"), BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	defer b.Close()
	b.writeLimit = 256 << 10
	done := b.Linger() // without the limit, one session would serve every transaction
	defer done()
	current := func() *session {
		b.ss.mu.Lock()
		defer b.ss.mu.Unlock()
		return b.ss.cur
	}
	put := func(size int) {
		require.NoError(t, b.Update(context.Background(), func(tx Tx) error {
			text := make([]byte, size) // random: compression does not shrink it
			_, _ = crand.Read(text)
			_, err := tx.PutBlob(text)
			return err
		}))
	}
	put(1 << 10)
	first := current()
	require.NotNil(t, first)
	put(2 << 10)
	assert.Same(t, first, current(), "small writes share the session")
	put(300 << 10)
	assert.Nil(t, current(), "closed after passing the limit")
	put(3 << 10)
	second := current()
	require.NotNil(t, second)
	assert.NotSame(t, first, second)
	require.NoError(t, b.View(context.Background(), func(tx Tx) error {
		n := 0
		err := tx.ForEachBlob(func(_ dag.Hash, _ []byte) error { n++; return nil })
		assert.Equal(t, 4, n)
		return err
	}))
}

// The idle timer is armed once and left running while transactions come
// and go: a session that keeps serving transactions stays open past the
// grace counted from its first one, and closes one grace after its last.
func TestSession_IdleGraceCountsFromTheLastTransaction(t *testing.T) {
	const grace = 50 * time.Millisecond
	b, err := OpenBolt(filepath.Join(t.TempDir(), "tract.db"), BoltOptions{Create: true, NoSync: true, IdleGrace: grace})
	require.NoError(t, err)
	defer b.Close()
	current := func() *session {
		b.ss.mu.Lock()
		defer b.ss.mu.Unlock()
		return b.ss.cur
	}
	view := func() time.Time {
		require.NoError(t, b.View(context.Background(), func(Tx) error { return nil }))
		return time.Now()
	}
	last := view()
	first := current()
	require.NotNil(t, first)
	for start := time.Now(); time.Since(start) < 3*grace; {
		time.Sleep(time.Millisecond)
		// A stall of half the grace (a busy machine) may let the
		// session close as it should: only a shorter wait must find
		// the same one.
		if time.Since(last) < grace/2 {
			require.Same(t, first, current(), "closed %s after the last transaction", time.Since(last))
		} else {
			first = nil
		}
		last = view()
		if first == nil {
			first = current()
		}
	}
	require.Eventually(t, func() bool { return current() == nil }, 5*time.Second, time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(last), grace, "closed one grace after the last transaction")
}
