package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// chainTx is a transaction whose Chain answers what answer returns, and
// counts its calls.
type chainTx struct {
	store.Tx
	answer func(tx store.Tx, from dag.Hash, n int, stop dag.Hash) ([]store.ChainLink, error)
	calls  int
}

func (c *chainTx) Chain(from dag.Hash, n int, stop dag.Hash) ([]store.ChainLink, error) {
	c.calls++
	return c.answer(c.Tx, from, n, stop)
}

// firstLinks returns up to max links of the chain from from, read one
// header at a time.
func firstLinks(tx store.Tx, from dag.Hash, max int) []store.ChainLink {
	var out []store.ChainLink
	for h := from; !h.IsZero() && len(out) < max; {
		hd, err := tx.CommitHeader(h)
		if err != nil {
			break
		}
		out = append(out, store.ChainLink{Hash: h, Header: hd})
		h = hd.Parent
	}
	return out
}

// memoryChain stores a chain of n commits and returns them, oldest first.
func memoryChain(t *testing.T, n int) (*store.Memory, []dag.Hash) {
	t.Helper()
	m := store.NewMemory()
	t.Cleanup(func() { m.Close() })
	var hs []dag.Hash
	require.NoError(t, m.Update(context.Background(), func(tx store.Tx) error {
		var parents []dag.Hash
		for i := range n {
			b, err := tx.PutBlob([]byte(fmt.Sprint(i)))
			require.NoError(t, err)
			h, err := tx.PutCommit(&dag.Commit{Parents: parents, Kind: dag.KindMessage, Role: dag.RoleUser, Blob: b,
				Time: time.Unix(int64(i), 0)})
			require.NoError(t, err)
			hs, parents = append(hs, h), []dag.Hash{h}
		}
		return nil
	}))
	return m, hs
}

// A ChainReader may stop short (PostgreSQL's stops at a commit of more
// than 127 parents): ReadChain carries on from where it stopped.
func TestReadChain_ContinuesAfterAShortAnswer(t *testing.T) {
	m, hs := memoryChain(t, 10)
	require.NoError(t, m.View(context.Background(), func(tx store.Tx) error {
		ct := &chainTx{Tx: tx, answer: func(tx store.Tx, from dag.Hash, n int, _ dag.Hash) ([]store.ChainLink, error) {
			return firstLinks(tx, from, min(n, 3)), nil
		}}
		links, err := store.ReadChain(ct, hs[9], 8, dag.Hash{})
		require.NoError(t, err)
		require.Len(t, links, 8)
		for i, l := range links {
			assert.Equal(t, hs[9-i], l.Hash)
		}
		assert.Equal(t, 3, ct.calls, "3 + 3 + 2 links")
		return nil
	}))
}

// ReadChain checks that an answer is a prefix of the chain.
func TestReadChain_RefusesAnAnswerOffTheChain(t *testing.T) {
	m, hs := memoryChain(t, 5)
	for _, tc := range []struct {
		name   string
		answer func(tx store.Tx, from dag.Hash, n int, stop dag.Hash) ([]store.ChainLink, error)
	}{
		{"skips a commit", func(tx store.Tx, from dag.Hash, n int, _ dag.Hash) ([]store.ChainLink, error) {
			l := firstLinks(tx, from, n)
			return append(l[:1], l[2:]...), nil
		}},
		{"more than asked", func(tx store.Tx, from dag.Hash, n int, _ dag.Hash) ([]store.ChainLink, error) {
			return firstLinks(tx, from, n+1), nil
		}},
		{"past stop", func(tx store.Tx, from dag.Hash, n int, _ dag.Hash) ([]store.ChainLink, error) {
			return firstLinks(tx, from, n), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, m.View(context.Background(), func(tx store.Tx) error {
				_, err := store.ReadChain(&chainTx{Tx: tx, answer: tc.answer}, hs[4], 3, hs[2])
				assert.ErrorIs(t, err, store.ErrCorrupt)
				return nil
			}))
		})
	}
}

// AppendChain keeps what dst holds, with or without a ChainReader.
func TestAppendChain_AppendsToDst(t *testing.T) {
	m, hs := memoryChain(t, 4)
	require.NoError(t, m.View(context.Background(), func(tx store.Tx) error {
		for _, tx := range []store.Tx{tx, &chainTx{Tx: tx, answer: func(tx store.Tx, from dag.Hash, n int, _ dag.Hash) ([]store.ChainLink, error) {
			return firstLinks(tx, from, n), nil
		}}} {
			dst := []store.ChainLink{{Hash: hs[0]}}
			out, err := store.AppendChain(dst, tx, hs[3], 2, dag.Hash{})
			require.NoError(t, err)
			require.Len(t, out, 3)
			assert.Equal(t, []dag.Hash{hs[0], hs[3], hs[2]}, []dag.Hash{out[0].Hash, out[1].Hash, out[2].Hash})
		}
		return nil
	}))
}
