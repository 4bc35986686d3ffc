package compiled

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// grow appends n user messages of size bytes to tip, in one transaction,
// and returns the new tip.
func grow(t *testing.T, tx store.Tx, tip dag.Hash, n, size int, tag string) dag.Hash {
	t.Helper()
	for i := range n {
		text := fmt.Sprintf("%s %d %s", tag, i, strings.Repeat("x", size))
		blob, err := tx.PutBlob([]byte(text))
		require.NoError(t, err)
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(int64(i), 0)}
		if !tip.IsZero() {
			c.Parents = []dag.Hash{tip}
		}
		var cn store.Counters
		if !tip.IsZero() {
			cn, _, err = tx.Counters(tip)
			require.NoError(t, err)
		}
		tip, err = tx.PutCommit(c)
		require.NoError(t, err)
		require.NoError(t, tx.PutCounters(tip, cn.Next(c.Kind, []byte(text))))
	}
	return tip
}

// recordSizes returns the sizes of the records of the chain ending at tip,
// newest first, following prev.
func recordSizes(t *testing.T, tx store.Tx, tip dag.Hash) []int {
	t.Helper()
	var sizes []int
	for h := tip; !h.IsZero(); {
		raw, err := tx.(store.ContextTx).Context(h)
		require.NoError(t, err)
		require.NotNil(t, raw, "record %s", h.Short())
		prev, _, _, _, err := checked(raw)
		require.NoError(t, err)
		sizes = append(sizes, len(raw))
		h = prev
	}
	return sizes
}

func newBolt(t *testing.T) *store.Bolt {
	t.Helper()
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// A chain grown a turn at a time keeps a few records per doubling of its
// size (merged as a binary counter merges), each message written again a
// few times only; a fresh cache reads the chain from them, exactly.
func TestSave_MergesAsABinaryCounter(t *testing.T) {
	ctx := context.Background()
	b := newBolt(t)
	var tip dag.Hash
	c := &Cache{}
	written := 0
	const turns = 600
	for turn := range turns {
		require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
			tip = grow(t, tx, tip, 2, 100, fmt.Sprint("turn ", turn))
			return c.Save(ctx, counting{tx, tx.(store.ContextTx), &written}, tip)
		}))
	}
	require.NoError(t, b.View(ctx, func(tx store.Tx) error {
		sizes := recordSizes(t, tx, tip)
		assert.LessOrEqual(t, len(sizes), 2*bits.Len(uint(turns)), "record sizes %v", sizes)
		total := 0
		for _, s := range sizes {
			total += s
		}
		t.Logf("records %v; %d bytes written for %d kept", sizes, written, total)
		assert.Less(t, written, 12*total, "each message written again a few times")
		fresh := &Cache{}
		got, err := fresh.Compile(ctx, tx, tip, false)
		require.NoError(t, err)
		want, err := (&Cache{}).Compile(ctx, noRecords{tx}, tip, false)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Len(t, fresh.chain, len(sizes), "the fresh cache read the records, not the commits")
		return nil
	}))
}

// counting is a transaction that adds up the bytes of the records put.
type counting struct {
	store.Tx
	store.ContextTx
	put *int
}

func (c counting) PutContext(h dag.Hash, rec []byte, replaced []dag.Hash) error {
	*c.put += len(rec)
	return c.ContextTx.PutContext(h, rec, replaced)
}

// noRecords is a transaction without records.
type noRecords struct{ store.Tx }

// A long chain saved at once is cut into records of about maxRecord,
// and a new process reads it from them.
func TestSave_CutsALongRun(t *testing.T) {
	ctx := context.Background()
	b := newBolt(t)
	var tip dag.Hash
	require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
		tip = grow(t, tx, tip, 5000, 300, "m")
		return (&Cache{}).Save(ctx, tx, tip)
	}))
	require.NoError(t, b.View(ctx, func(tx store.Tx) error {
		sizes := recordSizes(t, tx, tip)
		assert.Len(t, sizes, 5000*310/maxRecord+1)
		for _, s := range sizes[1:] {
			assert.InDelta(t, maxRecord, s, 400)
		}
		got, err := (&Cache{}).Compile(ctx, tx, tip, false)
		require.NoError(t, err)
		require.Len(t, got, 5000)
		assert.Equal(t, fmt.Sprintf("m 4999 %s", strings.Repeat("x", 300)), got[4999].Content)
		return nil
	}))
}

// A record that cannot be read, or that does not add up (its total is
// not the chain's, as the commit's counters say), is passed by:
// the chain is compiled from its commits.
func TestCompile_BadRecordsArePassedBy(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]func(rec []byte) []byte{
		"truncated": func(rec []byte) []byte { return rec[:len(rec)-3] },
		"version":   func(rec []byte) []byte { rec[0] = 9; return rec },
		"too few":   func(rec []byte) []byte { return encode(dag.Hash{}, 1, []Message{{content: "only"}}) },
		"bad role code": func(rec []byte) []byte {
			var r record
			r, _ = decode(append([]byte(nil), rec...))
			r.msgs[2].role = 77
			return encode(r.prev, r.total, r.msgs)
		},
		"a text changed": func(rec []byte) []byte { rec[len(rec)-6] ^= 1; return rec },
	} {
		t.Run(name, func(t *testing.T) {
			b := newBolt(t)
			var tip dag.Hash
			require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
				tip = grow(t, tx, tip, 7, 10, "m")
				return (&Cache{}).Save(ctx, tx, tip)
			}))
			require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
				ct := tx.(store.ContextTx)
				rec, err := ct.Context(tip)
				require.NoError(t, err)
				return ct.PutContext(tip, damage(rec), nil)
			}))
			require.NoError(t, b.View(ctx, func(tx store.Tx) error {
				got, err := (&Cache{}).Compile(ctx, tx, tip, false)
				require.NoError(t, err)
				want, err := (&Cache{}).Compile(ctx, noRecords{tx}, tip, false)
				require.NoError(t, err)
				assert.Equal(t, want, got)
				return nil
			}))
		})
	}
}

// decode refuses what encode cannot have written, and reads back what it
// wrote.
func TestDecode(t *testing.T) {
	msgs := []Message{{content: "hello", role: 1}, {content: "", role: 2}, {content: strings.Repeat("é", 200), role: 0}}
	prev := dag.Sum([]byte("prev"))
	rec := encode(prev, 10, msgs)
	r, err := decode(append([]byte(nil), rec...))
	require.NoError(t, err)
	assert.Equal(t, record{prev: prev, total: 10, msgs: msgs}, r)
	for i := range rec {
		_, err := decode(rec[:i])
		assert.ErrorIs(t, err, errBadRecord, "cut at %d", i)
	}
	for i := range rec {
		flipped := append([]byte(nil), rec...)
		flipped[i] ^= 0x10
		_, err := decode(flipped)
		assert.ErrorIs(t, err, errBadRecord, "byte %d flipped", i)
	}
	_, err = decode(encode(dag.Hash{}, 10, msgs))
	assert.ErrorIs(t, err, errBadRecord, "a first run whose total is not its own")
}

// A new process compiles a long chain once, then adds its turn's
// commits: the cache makes room for them when it starts, so the turn's
// Save does not copy the chain's messages into a larger slice (the
// cache here writes no records, whose merges allocate of their own).
func TestSave_ColdCacheTakesATurnWithoutCopyingTheChain(t *testing.T) {
	ctx := context.Background()
	b := newBolt(t)
	const n = 12_000
	var tip dag.Hash
	require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
		tip = grow(t, tx, tip, n, 20, "history")
		return (&Cache{}).Save(ctx, tx, tip)
	}))
	chain := n * int(unsafe.Sizeof(Message{}))
	for _, records := range []bool{true, false} {
		c := &Cache{MinBytes: math.MaxInt}
		require.NoError(t, b.View(ctx, func(tx store.Tx) error {
			if !records {
				tx = noRecords{tx}
			}
			msgs, err := c.Compile(ctx, tx, tip, false)
			require.Len(t, msgs, n)
			return err
		}))
		turnTip := tip
		for turn := range 4 { // a turn's commits, each in a transaction of its own
			var before, after runtime.MemStats
			require.NoError(t, b.Update(ctx, func(tx store.Tx) error {
				turnTip = grow(t, tx, turnTip, 1, 20, fmt.Sprint("turn ", turn))
				runtime.ReadMemStats(&before)
				err := c.Save(ctx, tx, turnTip)
				runtime.ReadMemStats(&after)
				return err
			}))
			// A copy would allocate 1.25 times the chain's messages or more
			// (the walk of one commit takes a block of hashes, 160 KB).
			assert.Less(t, int(after.TotalAlloc-before.TotalAlloc), chain,
				"records %v, commit %d: Save copied the chain's messages", records, turn)
		}
	}
}
