package api

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A stream that does not take its events is ended when its buffer is
// full; the others get every event.
func TestHub_DropsASlowStream(t *testing.T) {
	h := newHub(&Server{ctx: context.Background()})
	h.running = true // no poller: the test sends the events
	slow := h.subscribe()
	fast := h.subscribe()
	for i := range streamBuffer + 1 {
		h.broadcast([]event{newEvent("ref", RefEvent{Ref: string(rune('a' + i%26))})})
		_, ok := <-fast // the fast stream takes each event as it comes
		assert.True(t, ok, "event %d", i)
	}
	n := 0
	for range slow {
		n++
	}
	assert.Equal(t, streamBuffer, n, "the slow stream got its buffer's worth, then was closed")
	h.mu.Lock()
	_, kept := h.subs[fast]
	h.mu.Unlock()
	assert.True(t, kept, "the fast stream is still open")
	h.unsubscribe(fast)
	h.unsubscribe(slow) // closing twice is harmless
}

// After Close, a stream ends at once and no poller starts.
func TestServer_CloseEndsStreams(t *testing.T) {
	s := New(nil)
	s.Close()
	_, open := <-s.hub.subscribe()
	assert.False(t, open)
	s.hub.mu.Lock()
	assert.False(t, s.hub.running)
	s.hub.mu.Unlock()
	s.Close() // twice is harmless
}
