package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A stream that does not take its events is ended when its buffer is
// full; the others get every event.
func TestHub_DropsASlowStream(t *testing.T) {
	h := newHub(&Server{})
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
