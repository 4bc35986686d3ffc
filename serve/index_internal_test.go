package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

// A request waits for a write in flight that writes a message of its
// conversation or to the branch it matched, and for nothing else; a
// branch being written is not free for a fork; the write's end wakes the
// waiters.
func TestIndex_WritesInFlight(t *testing.T) {
	x := newIndex()
	first, second, other := dag.Sum([]byte("1")), dag.Sum([]byte("2")), dag.Sum([]byte("x"))
	x.mu.Lock()
	x.begin("serve/a", []prefix{second})
	assert.True(t, x.waitsFor([]prefix{first, second}, ""), "it extends the conversation being written")
	assert.False(t, x.waitsFor([]prefix{first}, ""), "its conversation is recorded up to first")
	assert.False(t, x.waitsFor([]prefix{other}, "serve/b"))
	assert.True(t, x.waitsFor(nil, "serve/a"), "its branch is being written")
	assert.Equal(t, "serve/a-2", x.free("serve/a"))
	woke := make(chan struct{})
	go func() {
		x.mu.Lock()
		for x.waitsFor([]prefix{second}, "") {
			x.done.Wait()
		}
		x.mu.Unlock()
		close(woke)
	}()
	x.mu.Unlock()
	time.Sleep(time.Millisecond)
	x.mu.Lock()
	x.end("serve/a", []prefix{second})
	assert.Empty(t, x.writing)
	assert.Empty(t, x.inFlight)
	assert.Equal(t, "serve/a", x.free("serve/a"))
	x.mu.Unlock()
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		require.Fail(t, "the end of the write did not wake the request waiting for it")
	}
}
