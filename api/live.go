package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// escalationPrefix is the prefix of an escalation's ref.
const escalationPrefix = "refs/escalations/"

// RefEvent is the data of a live "ref" event: a ref that moved, was
// created (Old zero) or deleted (New zero). A symbolic ref (HEAD on a
// branch) is given by the commit it resolves to; Target is the branch it
// names, when it names one.
type RefEvent struct {
	Ref    string     `json:"ref"`
	Old    tract.Hash `json:"old"`
	New    tract.Hash `json:"new"`
	Target string     `json:"target,omitempty"`
}

// EscalationEvent is the data of a live "escalation" event: an
// escalation raised (State pending), answered, or gone (taken up by its
// turn and removed: State "closed").
type EscalationEvent struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Answer is the answer, once there is one.
	Answer *tract.EscalationAnswer `json:"answer,omitempty"`
}

// event is one server-sent event, ready to write.
type event []byte

// refState is a ref as the poller saw it.
type refState struct {
	hash   tract.Hash
	target string
}

// hub is the one poller of a Server and the streams it feeds.
type hub struct {
	s  *Server
	mu sync.Mutex // guards subs, running and last
	// subs are the open streams, each with its buffer of events.
	subs map[chan event]struct{}
	// running says a poller goroutine runs (while any stream is open).
	running bool
	// last is the refs as last seen (nil before the first poll).
	last map[string]refState
	// wake asks the poller to look now (after this process answered an
	// escalation, say), without waiting for its tick.
	wake chan struct{}
}

func newHub(s *Server) *hub {
	return &hub{s: s, subs: map[chan event]struct{}{}, wake: make(chan struct{}, 1)}
}

// subscribe opens a stream: its events come on the channel, which is
// closed when the stream falls behind by more than streamBuffer events
// or the Server closes.
func (h *hub) subscribe() chan event {
	ch := make(chan event, streamBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[ch] = struct{}{}
	if !h.running {
		h.running = true
		go h.run()
	}
	return ch
}

// unsubscribe closes a stream (once: the hub may have closed it).
func (h *hub) unsubscribe(ch chan event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

// kick has the poller look now.
func (h *hub) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// run polls the refs while any stream is open, and sends each change to
// every stream.
func (h *hub) run() {
	tick := time.NewTicker(h.s.poll)
	defer tick.Stop()
	for {
		h.poll()
		h.mu.Lock()
		if len(h.subs) == 0 || h.s.ctx.Err() != nil {
			// The last stream is gone: stop, and start afresh (with a
			// fresh view of the refs) when another opens.
			h.running, h.last = false, nil
			for ch := range h.subs {
				delete(h.subs, ch)
				close(ch)
			}
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		select {
		case <-tick.C:
		case <-h.wake:
		case <-h.s.ctx.Done():
		}
	}
}

// poll reads the refs once and sends what changed since the last read.
func (h *hub) poll() {
	ctx, cancel := context.WithTimeout(h.s.ctx, 10*time.Second)
	defer cancel()
	now, err := readRefs(ctx, h.s.t)
	if err != nil {
		return // a busy or unreachable store: the next tick tries again
	}
	h.mu.Lock()
	last := h.last
	h.last = now
	h.mu.Unlock()
	if last == nil {
		return // the first read: what is there is no change
	}
	var evs []event
	var escalations []string
	for name, cur := range now {
		if old, ok := last[name]; !ok || old != cur {
			evs = append(evs, refEvent(name, last[name].hash, cur))
			if id, ok := strings.CutPrefix(name, escalationPrefix); ok {
				escalations = append(escalations, id)
			}
		}
	}
	for name, old := range last {
		if _, ok := now[name]; !ok {
			evs = append(evs, refEvent(name, old.hash, refState{}))
			if id, ok := strings.CutPrefix(name, escalationPrefix); ok {
				escalations = append(escalations, id)
			}
		}
	}
	for _, id := range escalations {
		ev := EscalationEvent{ID: id, State: "closed"}
		if e, err := h.s.t.EscalationByID(ctx, id); err == nil {
			ev.State, ev.Answer = string(e.State), e.Answer
		}
		evs = append(evs, newEvent("escalation", ev))
	}
	h.broadcast(evs)
}

// broadcast sends evs to every stream; a stream whose buffer is full is
// ended (its channel closed), so one slow client holds no one back.
func (h *hub) broadcast(evs []event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		for _, ev := range evs {
			select {
			case ch <- ev:
			default:
				// The stream fell behind: end it rather than wait for it.
				delete(h.subs, ch)
				close(ch)
			}
			if _, ok := h.subs[ch]; !ok {
				break
			}
		}
	}
}

func refEvent(name string, old tract.Hash, cur refState) event {
	return newEvent("ref", RefEvent{Ref: name, Old: old, New: cur.hash, Target: cur.target})
}

func newEvent(name string, v any) event {
	b, _ := json.Marshal(v)
	return event(fmt.Sprintf("event: %s\ndata: %s\n\n", name, b))
}

// readRefs reads every ref, resolved, and the STRANDED reflog's last
// entry (a result a conflict kept off its branch), as the ref
// "STRANDED", in one short read transaction.
func readRefs(ctx context.Context, t *tract.Tract) (map[string]refState, error) {
	out := map[string]refState{}
	err := t.Store().View(ctx, func(tx store.Tx) error {
		all, err := tx.Refs()
		if err != nil {
			return err
		}
		for _, r := range all {
			st := refState{hash: r.Hash, target: r.Target}
			if r.IsSymbolic() {
				h, _, err := store.ResolveRef(tx, r.Name)
				if err != nil {
					return err
				}
				st.hash = h
			}
			out[r.Name] = st
		}
		es, err := store.ReflogTail(tx, refs.Stranded, 1)
		if err != nil {
			return err
		}
		if len(es) > 0 {
			out[refs.Stranded] = refState{hash: es[0].New}
		}
		return nil
	})
	return out, err
}

// live answers GET /api/live: server-sent events, "ref" and
// "escalation", until the client goes or the Server closes; a comment
// line every heartbeat keeps proxies from closing an idle stream.
func (s *Server) live(w http.ResponseWriter, r *http.Request) error {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	ch := s.hub.subscribe()
	defer s.hub.unsubscribe(ch)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: 2000\n: tract live: ref and escalation events follow\n\n")) {
		return nil
	}
	beat := time.NewTicker(s.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.ctx.Done():
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil // fell behind, or the Server closed
			}
			if !write(ev) {
				return nil
			}
		case <-beat.C:
			if !write([]byte(": heartbeat\n\n")) {
				return nil
			}
		}
	}
}
