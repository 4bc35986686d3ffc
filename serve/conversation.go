package serve

import (
	"fmt"
	"sync"

	"github.com/tractdag/tract/dag"
)

// maxSeen bounds how many elements the Handler remembers (see seen): about
// 150 bytes each, so about 40 MB at most. When full, it is emptied: the
// conversations that go on are decoded once more, then remembered again.
const maxSeen = 1 << 18

// seen remembers the prefixes of the elements (messages as a client sent
// them) the Handler decoded: from the prefix of the conversation before
// an element and the element's bytes, the prefixes up to each of the
// messages it stands for. A client resends its conversation on every
// call, usually byte for byte, so that most of a request's messages are
// known by the hash of their bytes without being decoded again: the
// decoding, checks and canonical hashing of a message cost tens of times
// what hashing its bytes does. An element whose bytes differ (the same
// message, spaced or ordered otherwise) is decoded, and gets the same
// prefixes.
type seen struct {
	// mu guards m.
	mu sync.Mutex
	m  map[dag.Hash][]prefix
}

func newSeen() *seen { return &seen{m: map[dag.Hash][]prefix{}} }

// key is the key of element e after the conversation of prefix p; buf is
// scratch space, returned for the next key.
func (e *element) key(p prefix, buf []byte) (dag.Hash, []byte) {
	buf = append(append(append(buf[:0], p[:]...), byte(e.kind)), e.raw...)
	return dag.Sum(buf), buf
}

func (s *seen) get(k dag.Hash) ([]prefix, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, ok := s.m[k]
	return ps, ok
}

func (s *seen) put(k dag.Hash, ps []prefix) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxSeen {
		clear(s.m)
	}
	s.m[k] = ps
}

// conversation returns the prefixes of the request's messages (ps[i] the
// prefix of its first i+1 messages), decoding each element the Handler
// has not seen after the same conversation; it refuses a message the
// repository could not record (a *tract.TooLargeError), before the
// upstream is asked. It costs one hash of each element's bytes, and the
// decoding of the new ones.
func (h *Handler) conversation(req *request) ([]prefix, error) {
	l := h.t.Limits()
	ps := make([]prefix, 0, len(req.elems))
	var p prefix
	var buf []byte
	for i := range req.elems {
		e := &req.elems[i]
		e.first = len(ps)
		var k dag.Hash
		k, buf = e.key(p, buf)
		eps, ok := h.seen.get(k)
		if !ok {
			msgs, err := e.decode()
			if err != nil {
				return nil, err
			}
			eps = make([]prefix, len(msgs))
			q := p
			for j, m := range msgs {
				text, _, err := m.Stored()
				if err == nil {
					err = l.CheckText(fmt.Sprintf("messages[%d]", e.first+j), text)
				}
				if err != nil {
					return nil, err
				}
				id, err := identity(m)
				if err != nil {
					return nil, fmt.Errorf("messages[%d]: %w", e.first+j, err)
				}
				q = next(q, id)
				eps[j] = q
			}
			h.seen.put(k, eps)
		}
		e.ps = eps
		ps = append(ps, eps...)
		if len(eps) > 0 {
			p = eps[len(eps)-1]
		}
	}
	return ps, nil
}
