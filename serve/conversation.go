package serve

import (
	"fmt"
	"sync"

	"github.com/tractdag/tract/dag"
)

// maxSeen bounds how many elements the Handler remembers (see seen): about
// 120 bytes each, so about 32 MB at most. When a shard is full, it is
// emptied: the conversations that go on are decoded once more, then
// remembered again.
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
// prefixes. The keys are spread over shards of their own lock, as each
// request looks up each of its messages: under one lock, the calls of
// many conversations at once waited for each other.
type seen [seenShards]seenShard

// seenShards is how many shards seen has; a key's first byte picks one.
const seenShards = 32

type seenShard struct {
	// mu guards the maps.
	mu sync.Mutex
	// one holds the elements of none or one message (nearly all: an
	// OpenAI message is one, an Anthropic message is one unless it holds
	// tool results), with no pointer for the collector to follow;
	// several the others.
	one     map[dag.Hash]seenOne
	several map[dag.Hash][]prefix
}

// seenOne is an element of none or one message: the prefix after it.
type seenOne struct {
	p     prefix
	empty bool
}

func newSeen() *seen {
	s := new(seen)
	for i := range s {
		s[i].one, s[i].several = map[dag.Hash]seenOne{}, map[dag.Hash][]prefix{}
	}
	return s
}

func (s *seen) shard(k dag.Hash) *seenShard { return &s[int(k[0])%seenShards] }

// key is the key of element e after the conversation of prefix p; buf is
// scratch space, returned for the next key.
func (e *element) key(p prefix, buf []byte) (dag.Hash, []byte) {
	buf = append(append(append(buf[:0], p[:]...), byte(e.kind)), e.raw...)
	return dag.Sum(buf), buf
}

// appendKnown appends to ps the prefixes of the element of key k, when it
// is known.
func (s *seen) appendKnown(ps []prefix, k dag.Hash) ([]prefix, bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if o, ok := sh.one[k]; ok {
		if !o.empty {
			ps = append(ps, o.p)
		}
		return ps, true
	}
	if more, ok := sh.several[k]; ok {
		return append(ps, more...), true
	}
	return ps, false
}

// put remembers the prefixes ps of the element of key k.
func (s *seen) put(k dag.Hash, ps []prefix) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.one)+len(sh.several) >= maxSeen/seenShards {
		clear(sh.one)
		clear(sh.several)
	}
	switch len(ps) {
	case 0:
		sh.one[k] = seenOne{empty: true}
	case 1:
		sh.one[k] = seenOne{p: ps[0]}
	default:
		sh.several[k] = append([]prefix(nil), ps...)
	}
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
		var known bool
		if ps, known = h.seen.appendKnown(ps, k); !known {
			msgs, err := e.decode()
			if err != nil {
				return nil, err
			}
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
				p = next(p, id)
				ps = append(ps, p)
			}
			h.seen.put(k, ps[e.first:])
		}
		if e.n = len(ps) - e.first; e.n > 0 {
			p = ps[len(ps)-1]
		}
	}
	return ps, nil
}
