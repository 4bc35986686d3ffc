package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// chainOf builds n commits of a chain in memory, the first on parent,
// every third a note (which Compile does not send).
func chainOf(t *testing.T, parent dag.Hash, n int) ([]store.NewCommit, []store.NewBlob) {
	return chainOfTexts(t, parent, "message", n)
}

// chainOfTexts is chainOf with the texts prefix 0, prefix 1, ….
func chainOfTexts(t *testing.T, parent dag.Hash, prefix string, n int) ([]store.NewCommit, []store.NewBlob) {
	var commits []store.NewCommit
	var blobs []store.NewBlob
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		text := []byte(fmt.Sprintf("%s %d", prefix, i))
		blob := dag.Sum(text)
		kind := dag.KindMessage
		if i%3 == 2 {
			kind = dag.KindNote
		}
		c := &dag.Commit{Kind: kind, Role: dag.RoleUser, Blob: blob, Time: at.Add(time.Duration(i))}
		if !parent.IsZero() {
			c.Parents = []dag.Hash{parent}
		}
		raw, err := dag.Encode(c)
		require.NoError(t, err)
		parent = dag.Sum(raw)
		commits = append(commits, store.NewCommit{Hash: parent, Commit: c, Raw: raw})
		blobs = append(blobs, store.NewBlob{Hash: blob, Data: text})
	}
	return commits, blobs
}

// PutChain stores a chain with its counters, in a pack of its own from
// PackMin commits on a file, loose below that and on other stores.
func TestPutChain(t *testing.T) {
	for _, n := range []int{1, 5, store.PackMin + 3} {
		for name, open := range map[string]func(t *testing.T) store.Store{
			"memory": func(*testing.T) store.Store { return store.NewMemory() },
			"bolt": func(t *testing.T) store.Store {
				b, err := store.OpenBolt(filepath.Join(t.TempDir(), "t.db"), store.BoltOptions{Create: true})
				require.NoError(t, err)
				t.Cleanup(func() { b.Close() })
				return b
			},
		} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				st := open(t)
				first, firstBlobs := chainOf(t, dag.Hash{}, 2)
				require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error {
					return store.PutChain(tx, time.Now(), first, firstBlobs)
				}))
				commits, blobs := chainOf(t, first[1].Hash, n)

				require.NoError(t, st.Update(context.Background(), func(tx store.Tx) error {
					return store.PutChain(tx, time.Now(), commits, blobs)
				}))

				last := commits[len(commits)-1]
				require.NoError(t, st.View(context.Background(), func(tx store.Tx) error {
					got, err := tx.Commit(last.Hash)
					require.NoError(t, err)
					assert.Equal(t, last.Commit.Blob, got.Blob)
					text, err := tx.Blob(last.Commit.Blob)
					require.NoError(t, err)
					assert.Equal(t, fmt.Sprintf("message %d", n-1), string(text))
					c, ok, err := tx.Counters(last.Hash)
					require.NoError(t, err)
					require.True(t, ok)
					assert.Equal(t, int64(2+n), c.Depth)
					want := 2 + n - n/3 // the first chain's two messages, then every third a note
					assert.Equal(t, int64(want), c.Messages)
					assert.Equal(t, c, last.Counters, "PutChain sets each NewCommit's counters")
					return nil
				}))
			})
		}
	}
}
