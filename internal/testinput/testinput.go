// Package testinput makes inputs for the tests of what enters a
// repository: large or endless readers, made as they are read.
package testinput

import (
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
)

// Generated is a reader of head, then body repeated (for ever when
// times is negative), then tail, that never holds more than those three.
type Generated struct {
	head, body, tail []byte
	times            int64
	// Delivered counts the bytes read so far.
	Delivered int64
	state     []byte
}

// NewGenerated returns a reader of head, body times times (for ever when
// times is negative) and tail.
func NewGenerated(head, body, tail string, times int64) *Generated {
	g := &Generated{head: []byte(head), body: []byte(body), tail: []byte(tail), times: times}
	g.state = g.head
	return g
}

// Read reads the next bytes.
func (g *Generated) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.state) == 0 {
			switch {
			case g.times != 0:
				g.state = g.body
				g.times--
			case g.tail != nil:
				g.state, g.tail = g.tail, nil
			default:
				g.Delivered += int64(n)
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
		}
		c := copy(p[n:], g.state)
		g.state = g.state[c:]
		n += c
	}
	g.Delivered += int64(n)
	return n, nil
}

// RequireTooLarge requires err to wrap a *TooLargeError of limit which.
func RequireTooLarge(t testing.TB, err error, which ingest.SizeLimit) *ingest.TooLargeError {
	t.Helper()
	var tl *ingest.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, which, tl.Which)
	return tl
}

// Collect collects a sequence's messages up to its first error.
func Collect(seq iter.Seq2[ingest.Message, error]) ([]ingest.Message, error) {
	var out []ingest.Message
	for m, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// WordMessages returns n messages, user and assistant in turn, of about
// 300 bytes of words drawn from a vocabulary of 5,000 (Zipf-distributed,
// as in prose: w1 is the commonest), with the word "needle" in one
// message of 1,000: the same history every call, for search benchmarks.
func WordMessages(n int) []ingest.Message {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	msgs := make([]ingest.Message, n)
	var b strings.Builder
	for i := range msgs {
		b.Reset()
		if i%1000 == 0 {
			b.WriteString("needle ")
		}
		for b.Len() < 300 {
			fmt.Fprintf(&b, "w%d ", z.Uint64())
		}
		role := dag.RoleUser
		if i%2 == 1 {
			role = dag.RoleAssistant
		}
		msgs[i] = ingest.Message{Role: role, Content: b.String()}
	}
	return msgs
}
