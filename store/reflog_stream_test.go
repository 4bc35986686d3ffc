package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// EachReflogEntry reads a reflog as Reflog does, oldest first, wherever
// its entries are (a file's reflogs bucket, its journal, the
// transaction's own), and stops at the first error of its function.
func TestEachReflogEntry_ReadsAsReflogDoes(t *testing.T) {
	ctx := context.Background()
	b, err := store.OpenBolt(filepath.Join(t.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	entry := func(i int) refs.Entry {
		return refs.Entry{New: dag.Sum([]byte(fmt.Sprint(i))), Time: at.Add(time.Duration(i) * time.Second), Action: "commit", Message: fmt.Sprint("entry ", i)}
	}
	for name, st := range map[string]store.Store{"memory": store.NewMemory(), "file": b} {
		t.Run(name, func(t *testing.T) {
			const ref = "refs/heads/main"
			// Many transactions' entries (on a file, most of them
			// checkpointed out of the journal), then a transaction's own.
			for i := range 150 {
				require.NoError(t, st.Update(ctx, func(tx store.Tx) error { return tx.AppendReflog(ref, entry(i)) }))
			}
			require.NoError(t, st.Update(ctx, func(tx store.Tx) error {
				require.NoError(t, tx.AppendReflog(ref, entry(150)))
				want, err := tx.Reflog(ref)
				require.NoError(t, err)
				require.Len(t, want, 151)
				var got []refs.Entry
				require.NoError(t, store.EachReflogEntry(tx, ref, func(e refs.Entry) error {
					got = append(got, e)
					return nil
				}))
				require.Len(t, got, len(want))
				for i := range want {
					assert.Equal(t, entry(i).Message, got[i].Message)
					assert.True(t, want[i].Time.Equal(got[i].Time))
				}
				stop := errors.New("enough")
				n := 0
				err = store.EachReflogEntry(tx, ref, func(refs.Entry) error {
					if n++; n == 3 {
						return stop
					}
					return nil
				})
				assert.ErrorIs(t, err, stop)
				assert.Equal(t, 3, n)
				return nil
			}))
		})
	}
}
