package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/store"
)

// prefixStores returns a Memory and a Bolt store holding the same commits,
// some in the main buckets (with counters beside a few, as keys that share
// their commit's prefix) and some in a published pack, and every hash,
// sorted.
func prefixStores(f *testing.F) (map[string]store.Store, []dag.Hash) {
	b, err := store.OpenBolt(filepath.Join(f.TempDir(), "tract.db"), store.BoltOptions{Create: true, NoSync: true})
	require.NoError(f, err)
	m := store.NewMemory()
	stores := map[string]store.Store{"memory": m, "bolt": b}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var (
		all     []dag.Hash
		main    []*dag.Commit
		entries []store.PackEntry
	)
	for i := range 400 {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: dag.Sum([]byte{byte(i), byte(i >> 8)}), Time: at.Add(time.Duration(i))}
		enc, err := dag.Encode(c)
		require.NoError(f, err)
		h := dag.Sum(enc)
		all = append(all, h)
		if i%4 != 0 {
			main = append(main, c)
			continue
		}
		entries = append(entries,
			store.PackEntry{Kind: store.PackCommit, Hash: h, Value: enc},
			store.PackEntry{Kind: store.PackCounters, Hash: h, Value: store.Counters{Depth: 1}.Encode()})
	}
	slices.SortFunc(entries, store.PackEntry.Compare)
	for name, s := range stores {
		f.Cleanup(func() { s.Close() })
		var id uint64
		require.NoError(f, s.Update(context.Background(), func(tx store.Tx) error {
			for i, c := range main {
				h, err := tx.PutCommit(c)
				if err != nil {
					return err
				}
				if i%3 == 0 {
					if err := tx.(store.DerivedTx).PutCounters(h, store.Counters{Depth: 1}); err != nil {
						return err
					}
				}
			}
			id, err = tx.(store.PackTx).CreatePack(at)
			return err
		}), name)
		require.NoError(f, s.Update(context.Background(), func(tx store.Tx) error { return tx.(store.PackTx).AppendPack(id, at, entries) }), name)
		require.NoError(f, s.Update(context.Background(), func(tx store.Tx) error { return tx.(store.PackTx).PublishPack(id) }), name)
	}
	slices.SortFunc(all, func(a, b dag.Hash) int { return strings.Compare(a.String(), b.String()) })
	return stores, all
}

func FuzzCommitsWithPrefix(f *testing.F) {
	stores, all := prefixStores(f)
	for _, h := range all[:3] {
		f.Add(h.String(), 0)
		f.Add(strings.ToUpper(h.String()[:5]), 2)
	}
	for _, p := range []string{"", "0", "a", "F", "00", "ff", "abc", "g", "ab cd", all[0].String() + "0", "-1"} {
		f.Add(p, 3)
	}
	f.Fuzz(func(t *testing.T, prefix string, limit int) {
		// What the stores must answer: every hash whose hex starts with
		// the prefix in lower case, in key order, up to limit.
		lower := strings.ToLower(prefix)
		hexOnly := len(prefix) <= 2*dag.HashSize && strings.Trim(lower, "0123456789abcdef") == ""
		var want []dag.Hash
		for _, h := range all {
			if hexOnly && strings.HasPrefix(h.String(), lower) && (limit <= 0 || len(want) < limit) {
				want = append(want, h)
			}
		}
		for name, s := range stores {
			var got []dag.Hash
			err := s.View(context.Background(), func(tx store.Tx) (err error) {
				got, err = tx.CommitsWithPrefix(prefix, limit)
				return err
			})
			if !hexOnly {
				if err == nil {
					t.Fatalf("%s: prefix %q is not hex, but gave %d commits", name, prefix, len(got))
				}
				fuzzcheck.UserError(t, err)
				continue
			}
			if err != nil {
				t.Fatalf("%s: prefix %q: %v", name, prefix, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: prefix %q, limit %d: got %s, want %s", name, prefix, limit, shorts(got), shorts(want))
			}
		}
	})
}

func shorts(hs []dag.Hash) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.Short()
	}
	return fmt.Sprint(s)
}
