package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// Run runs the conformance suite against stores made by newStore. Each
// subtest gets a new store and closes it when done.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, []group{
		{"NewStore", newStoreTests},
		{"Blobs", blobTests},
		{"Commits", commitTests},
		{"Refs", refTests},
		{"Reflogs", reflogTests},
		{"Derived", derivedTests},
		{"ResolveRef", resolveRefTests},
		{"Transactions", transactionTests},
		{"NotFound", notFoundTests},
		{"Copies", copyTests},
		{"Fsck", fsckTests},
		{"Packs", packTests},
		{"Streams", streamTests},
		{"Batch", batchTests},
		{"Contexts", contextTests},
		{"Search", searchTests},
	})
}

// RunSearch runs the suite's searches alone, for a backend's test of a
// configuration that changes only how it searches.
func RunSearch(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, []group{{"Search", searchTests}})
}

// group is a named set of subtests.
type group struct {
	name  string
	tests []subtest
}

// run runs groups, each subtest on a new store that it closes when done.
func run(t *testing.T, newStore func(t *testing.T) store.Store, groups []group) {
	open := func(t *testing.T) store.Store {
		t.Helper()
		s := newStore(t)
		require.NotNil(t, s)
		t.Cleanup(func() { s.Close() })
		return s
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) { st.fn(t, open(t)) })
			}
		})
	}
}

// cancelledContext returns a context that is cancelled already.
func cancelledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// expiredContext returns a context whose deadline has passed.
func expiredContext() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	_ = cancel // done already: nothing to release but the timer, which never ran
	return ctx
}

type subtest struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// t0 is the clock reading of the first commit built here; sample commit n
// is n seconds later.
var t0 = time.Date(2024, 5, 17, 9, 0, 0, 0, time.UTC)

func sampleCommit(n int, blob dag.Hash, parents ...dag.Hash) *dag.Commit {
	return &dag.Commit{Parents: parents, Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob,
		Time: t0.Add(time.Duration(n) * time.Second)}
}

func update(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	require.NoError(t, s.Update(context.Background(), fn))
}

func view(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	require.NoError(t, s.View(context.Background(), fn))
}

// putChain stores n commits, each with its own blob and the previous commit
// as parent, and returns their hashes, oldest first.
func putChain(t *testing.T, s store.Store, n int) []dag.Hash {
	t.Helper()
	var hs []dag.Hash
	update(t, s, func(tx store.Tx) error {
		var parent []dag.Hash
		for i := range n {
			blob, err := tx.PutBlob([]byte(fmt.Sprintf("text %d", i)))
			if err != nil {
				return err
			}
			h, err := tx.PutCommit(sampleCommit(i, blob, parent...))
			if err != nil {
				return err
			}
			hs = append(hs, h)
			parent = []dag.Hash{h}
		}
		return nil
	})
	return hs
}

func sortedHashes(hs []dag.Hash) []dag.Hash {
	out := slices.Clone(hs)
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

var newStoreTests = []subtest{
	{"HasHEADAttachedToUnbornMain", func(t *testing.T, s store.Store) {
		view(t, s, func(tx store.Tx) error {
			all, err := tx.Refs()
			require.NoError(t, err)
			assert.Equal(t, []refs.Ref{{Name: refs.HEAD, Target: "refs/heads/main"}}, all)
			_, ok, err := store.ResolveRef(tx, refs.HEAD)
			require.NoError(t, err)
			assert.False(t, ok, "main is unborn")
			names, err := tx.ReflogNames()
			require.NoError(t, err)
			assert.Empty(t, names)
			return nil
		})
		assert.NotEmpty(t, s.Path())
	}},
	{"IsEmpty", func(t *testing.T, s store.Store) {
		view(t, s, func(tx store.Tx) error {
			n := 0
			require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { n++; return nil }))
			require.NoError(t, tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }))
			assert.Zero(t, n)
			hs, err := tx.CommitsWithPrefix("", 0)
			require.NoError(t, err)
			assert.Empty(t, hs)
			return nil
		})
	}},
}

var blobTests = []subtest{
	{"PutThenGet", func(t *testing.T, s store.Store) {
		var h dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.PutBlob([]byte("hello"))
			return err
		})
		assert.Equal(t, dag.Sum([]byte("hello")), h, "a blob's key is the hash of its content")
		view(t, s, func(tx store.Tx) error {
			data, err := tx.Blob(h)
			require.NoError(t, err)
			assert.Equal(t, "hello", string(data))
			ok, err := tx.HasBlob(h)
			require.NoError(t, err)
			assert.True(t, ok)
			return nil
		})
	}},
	{"SameContentIsStoredOnce", func(t *testing.T, s store.Store) {
		var h1, h2 dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			if h1, err = tx.PutBlob([]byte("same")); err != nil {
				return err
			}
			h2, err = tx.PutBlob([]byte("same"))
			return err
		})
		update(t, s, func(tx store.Tx) error {
			h, err := tx.PutBlob([]byte("same"))
			assert.Equal(t, h1, h)
			return err
		})
		assert.Equal(t, h1, h2)
		view(t, s, func(tx store.Tx) error {
			n := 0
			require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { n++; return nil }))
			assert.Equal(t, 1, n)
			return nil
		})
	}},
	{"EmptyBlob", func(t *testing.T, s store.Store) {
		var h dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.PutBlob(nil)
			return err
		})
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasBlob(h)
			require.NoError(t, err)
			assert.True(t, ok, "an empty blob is stored")
			data, err := tx.Blob(h)
			require.NoError(t, err)
			assert.Empty(t, data)
			return nil
		})
	}},
	{"Delete", func(t *testing.T, s store.Store) {
		var keep, drop dag.Hash
		update(t, s, func(tx store.Tx) error {
			keep, _ = tx.PutBlob([]byte("keep"))
			drop, _ = tx.PutBlob([]byte("drop"))
			return nil
		})
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.DeleteBlob(drop))
			require.NoError(t, tx.DeleteBlob(drop), "deleting twice is not an error")
			require.NoError(t, tx.DeleteBlob(dag.Sum([]byte("never stored"))), "deleting a missing blob is not an error")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasBlob(drop)
			require.NoError(t, err)
			assert.False(t, ok)
			_, err = tx.Blob(drop)
			assert.ErrorIs(t, err, store.ErrNotFound)
			ok, err = tx.HasBlob(keep)
			require.NoError(t, err)
			assert.True(t, ok)
			return nil
		})
	}},
	{"ForEachVisitsEveryBlobInKeyOrder", func(t *testing.T, s store.Store) {
		want := map[dag.Hash]string{}
		var hs []dag.Hash
		update(t, s, func(tx store.Tx) error {
			for i := range 50 {
				text := fmt.Sprintf("blob %d", i)
				h, err := tx.PutBlob([]byte(text))
				require.NoError(t, err)
				want[h] = text
				hs = append(hs, h)
			}
			return nil
		})
		got := map[dag.Hash]string{}
		var order []dag.Hash
		view(t, s, func(tx store.Tx) error {
			return tx.ForEachBlob(func(h dag.Hash, data []byte) error {
				got[h] = string(data)
				order = append(order, h)
				return nil
			})
		})
		assert.Equal(t, want, got)
		assert.Equal(t, sortedHashes(hs), order, "a copy streams blobs in this order")
	}},
	{"ForEachStopsAtCallbackError", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			for i := range 5 {
				if _, err := tx.PutBlob([]byte{byte(i)}); err != nil {
					return err
				}
			}
			return nil
		})
		stop := errors.New("stop")
		n := 0
		err := s.View(context.Background(), func(tx store.Tx) error {
			return tx.ForEachBlob(func(dag.Hash, []byte) error {
				n++
				if n == 2 {
					return stop
				}
				return nil
			})
		})
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, 2, n)
	}},
}

var commitTests = []subtest{
	{"PutThenGet", func(t *testing.T, s store.Store) {
		c := sampleCommit(1, dag.Sum([]byte("b")), dag.Sum([]byte("p1")), dag.Sum([]byte("p2")))
		c.Meta = []byte(`{"attempt":2,"model":"m"}`)
		var h dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.PutCommit(c)
			return err
		})
		want, err := c.Hash()
		require.NoError(t, err)
		assert.Equal(t, want, h, "PutCommit returns the commit's hash")
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Commit(h)
			require.NoError(t, err)
			assert.Equal(t, c.Parents, got.Parents)
			assert.Equal(t, c.Kind, got.Kind)
			assert.Equal(t, c.Role, got.Role)
			assert.Equal(t, c.Blob, got.Blob)
			assert.Equal(t, c.Meta, got.Meta)
			assert.True(t, c.Time.Equal(got.Time))
			ok, err := tx.HasCommit(h)
			require.NoError(t, err)
			assert.True(t, ok)
			return nil
		})
	}},
	{"PutTwiceKeepsOne", func(t *testing.T, s store.Store) {
		c := sampleCommit(1, dag.Sum([]byte("b")))
		update(t, s, func(tx store.Tx) error {
			_, err := tx.PutCommit(c)
			require.NoError(t, err)
			_, err = tx.PutCommit(c)
			return err
		})
		view(t, s, func(tx store.Tx) error {
			n := 0
			require.NoError(t, tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }))
			assert.Equal(t, 1, n)
			return nil
		})
	}},
	{"PutInvalidCommitFails", func(t *testing.T, s store.Store) {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			_, err := tx.PutCommit(&dag.Commit{Kind: "bogus", Role: dag.RoleUser, Time: t0})
			return err
		})
		assert.ErrorContains(t, err, `invalid kind "bogus"`)
		view(t, s, func(tx store.Tx) error {
			n := 0
			require.NoError(t, tx.ForEachCommit(func(dag.Hash, []byte) error { n++; return nil }))
			assert.Zero(t, n)
			return nil
		})
	}},
	{"Delete", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 3)
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.DeleteCommit(hs[1]))
			require.NoError(t, tx.DeleteCommit(hs[1]), "deleting twice is not an error")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasCommit(hs[1])
			require.NoError(t, err)
			assert.False(t, ok)
			_, err = tx.Commit(hs[1])
			assert.ErrorIs(t, err, store.ErrNotFound)
			for _, h := range []dag.Hash{hs[0], hs[2]} {
				ok, err := tx.HasCommit(h)
				require.NoError(t, err)
				assert.True(t, ok)
			}
			return nil
		})
	}},
	{"ForEachInKeyOrderWithEncoding", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 40)
		var got []dag.Hash
		view(t, s, func(tx store.Tx) error {
			return tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
				got = append(got, h)
				assert.Equal(t, h, dag.Sum(raw), "raw is the canonical encoding")
				c, err := dag.Decode(raw)
				require.NoError(t, err)
				assert.Equal(t, dag.KindMessage, c.Kind)
				return nil
			})
		})
		assert.Equal(t, sortedHashes(hs), got)
	}},
	{"CommitsWithPrefix", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 300)
		matching := func(prefix string) []dag.Hash {
			var out []dag.Hash
			for _, h := range sortedHashes(hs) {
				if strings.HasPrefix(h.String(), strings.ToLower(prefix)) {
					out = append(out, h)
				}
			}
			return out
		}
		full := hs[7].String()
		// With 300 commits a one-digit prefix matches about 19 commits and a
		// two-digit one about 1, so hs[7]'s prefixes cover odd and even
		// lengths with one and with several matches.
		for _, prefix := range []string{full[:1], full[:2], full[:3], full[:4], full[:5], full[:6], full[:63], full,
			strings.ToUpper(full[:5]), "", "f", "0"} {
			t.Run("prefix "+prefix, func(t *testing.T) {
				view(t, s, func(tx store.Tx) error {
					got, err := tx.CommitsWithPrefix(prefix, 0)
					require.NoError(t, err)
					want := matching(prefix)
					assert.Equal(t, want, got)
					return nil
				})
			})
		}
		view(t, s, func(tx store.Tx) error {
			got, err := tx.CommitsWithPrefix(full[:1], 3)
			require.NoError(t, err)
			assert.Equal(t, matching(full[:1])[:3], got, "limit keeps the first matches in key order")

			got, err = tx.CommitsWithPrefix("", 5)
			require.NoError(t, err)
			assert.Len(t, got, 5)

			// A prefix that matches nothing: flip the last digit of a full hash.
			other := full[:63] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", full[63])+1)%16])
			got, err = tx.CommitsWithPrefix(other, 10)
			require.NoError(t, err)
			assert.Empty(t, got)

			for _, bad := range []string{"xyz", "abcg", full + "0"} {
				_, err = tx.CommitsWithPrefix(bad, 10)
				assert.Error(t, err, "prefix %q", bad)
			}
			return nil
		})
	}},
}

var refTests = []subtest{
	{"SetGetOverwriteDelete", func(t *testing.T, s store.Store) {
		h1, h2 := dag.Sum([]byte("c1")), dag.Sum([]byte("c2"))
		update(t, s, func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h1})
		})
		view(t, s, func(tx store.Tx) error {
			r, err := tx.Ref("refs/heads/main")
			require.NoError(t, err)
			assert.Equal(t, refs.Ref{Name: "refs/heads/main", Hash: h1}, r)
			return nil
		})
		update(t, s, func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h2})
		})
		view(t, s, func(tx store.Tx) error {
			r, err := tx.Ref("refs/heads/main")
			require.NoError(t, err)
			assert.Equal(t, h2, r.Hash)
			return nil
		})
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.DeleteRef("refs/heads/main"))
			require.NoError(t, tx.DeleteRef("refs/heads/main"), "deleting twice is not an error")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			_, err := tx.Ref("refs/heads/main")
			assert.ErrorIs(t, err, store.ErrNotFound)
			return nil
		})
	}},
	{"Symbolic", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: refs.HEAD, Target: "refs/heads/feature/x"})
		})
		view(t, s, func(tx store.Tx) error {
			r, err := tx.Ref(refs.HEAD)
			require.NoError(t, err)
			assert.True(t, r.IsSymbolic())
			assert.Equal(t, "refs/heads/feature/x", r.Target)
			assert.True(t, r.Hash.IsZero())
			return nil
		})
		// Detach HEAD: a direct ref replaces the symbolic one.
		h := dag.Sum([]byte("c"))
		update(t, s, func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: refs.HEAD, Hash: h}) })
		view(t, s, func(tx store.Tx) error {
			r, err := tx.Ref(refs.HEAD)
			require.NoError(t, err)
			assert.Equal(t, refs.Ref{Name: refs.HEAD, Hash: h}, r)
			return nil
		})
	}},
	{"ListIsSortedByName", func(t *testing.T, s store.Store) {
		names := []string{"refs/heads/zeta", "ORIG_HEAD", "refs/heads/a/b", "refs/heads/a", "refs/heads/B"}
		update(t, s, func(tx store.Tx) error {
			for i, n := range names {
				require.NoError(t, tx.SetRef(refs.Ref{Name: n, Hash: dag.Sum([]byte{byte(i)})}))
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			all, err := tx.Refs()
			require.NoError(t, err)
			var got []string
			for _, r := range all {
				got = append(got, r.Name)
			}
			want := append([]string{refs.HEAD}, names...)
			sort.Strings(want)
			assert.Equal(t, want, got)
			return nil
		})
	}},
	{"EmptyNameIsRejected", func(t *testing.T, s store.Store) {
		err := s.Update(context.Background(), func(tx store.Tx) error { return tx.SetRef(refs.Ref{Hash: dag.Sum(nil)}) })
		assert.Error(t, err)
	}},
}

func entry(n int, action string) refs.Entry {
	return refs.Entry{
		Old: dag.Sum([]byte(fmt.Sprint("old", n))), New: dag.Sum([]byte(fmt.Sprint("new", n))),
		Time: t0.Add(time.Duration(n) * time.Minute), Action: action, Message: fmt.Sprintf("%s: entry %d", action, n),
	}
}

var derivedTests = []subtest{
	{"PutGetDelete", func(t *testing.T, s store.Store) {
		h := dag.Sum([]byte("a commit"))
		want := store.Counters{Depth: 3, Messages: 2, Tokens: 1 << 40}
		update(t, s, func(tx store.Tx) error {
			_, ok, err := tx.Counters(h)
			require.NoError(t, err)
			assert.False(t, ok, "no counters yet")
			require.NoError(t, tx.PutCounters(h, want))
			got, ok, err := tx.Counters(h)
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, want, got, "visible in the same transaction")
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			got, ok, err := tx.Counters(h)
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, want, got)
			return nil
		})
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.DeleteCounters(h))
			return tx.DeleteCounters(dag.Sum([]byte("never stored")))
		})
		view(t, s, func(tx store.Tx) error {
			_, ok, err := tx.Counters(h)
			require.NoError(t, err)
			assert.False(t, ok)
			return nil
		})
	}},
	{"ForEachInKeyOrderAndRollback", func(t *testing.T, s store.Store) {
		var hs []dag.Hash
		update(t, s, func(tx store.Tx) error {
			for i := range 5 {
				h := dag.Sum([]byte{byte(i)})
				hs = append(hs, h)
				require.NoError(t, tx.PutCounters(h, store.Counters{Depth: int64(i + 1)}))
			}
			return nil
		})
		err := s.Update(context.Background(), func(tx store.Tx) error {
			require.NoError(t, tx.PutCounters(dag.Sum([]byte("rolled back")), store.Counters{Depth: 9}))
			return errors.New("roll back")
		})
		require.Error(t, err)
		slices.SortFunc(hs, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		view(t, s, func(tx store.Tx) error {
			var got []dag.Hash
			require.NoError(t, tx.ForEachCounters(func(h dag.Hash, c store.Counters) error {
				got = append(got, h)
				assert.Positive(t, c.Depth)
				return nil
			}))
			assert.Equal(t, hs, got)
			return nil
		})
	}},
	{"WritesInViewFail", func(t *testing.T, s store.Store) {
		view(t, s, func(tx store.Tx) error {
			assert.ErrorIs(t, tx.PutCounters(dag.Sum(nil), store.Counters{}), store.ErrReadOnly)
			assert.ErrorIs(t, tx.DeleteCounters(dag.Sum(nil)), store.ErrReadOnly)
			return nil
		})
	}},
}

var reflogTests = []subtest{
	{"AppendKeepsOrder", func(t *testing.T, s store.Store) {
		want := []refs.Entry{entry(1, refs.ActionCommit), entry(2, refs.ActionPurify), entry(3, refs.ActionReset)}
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.AppendReflog(refs.HEAD, want[0]))
			return tx.AppendReflog(refs.HEAD, want[1])
		})
		update(t, s, func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, want[2]) })
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Equal(t, want, got, "oldest first, across transactions")
			return nil
		})
	}},
	{"TailIsTheEndOfTheReflog", func(t *testing.T, s store.Store) {
		for i := range 5 {
			update(t, s, func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, entry(i, refs.ActionCommit)) })
		}
		check := func(tx store.Tx) {
			all, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			for n := 1; n <= len(all)+2; n++ {
				tail, err := store.ReflogTail(tx, refs.HEAD, n)
				require.NoError(t, err)
				assert.Equal(t, all[max(len(all)-n, 0):], tail, "the newest %d, oldest first", n)
			}
			none, err := store.ReflogTail(tx, "refs/heads/nothing", 2)
			require.NoError(t, err)
			assert.Empty(t, none)
		}
		view(t, s, func(tx store.Tx) error { check(tx); return nil })
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(5, refs.ActionCommit)))
			check(tx) // with the transaction's own entry
			return nil
		})
	}},
	{"EachEntryReadsAsReflogDoes", func(t *testing.T, s store.Store) {
		for i := range 5 {
			update(t, s, func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, entry(i, refs.ActionCommit)) })
		}
		check := func(tx store.Tx) {
			all, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			var got []refs.Entry
			require.NoError(t, store.EachReflogEntry(tx, refs.HEAD, func(e refs.Entry) error {
				got = append(got, e)
				return nil
			}))
			assert.Equal(t, all, got, "every entry, oldest first")
			stop := errors.New("enough")
			n := 0
			err = store.EachReflogEntry(tx, refs.HEAD, func(refs.Entry) error {
				if n++; n == 2 {
					return stop
				}
				return nil
			})
			assert.ErrorIs(t, err, stop, "the function's error ends the read")
			assert.Equal(t, 2, n)
			require.NoError(t, store.EachReflogEntry(tx, "refs/heads/nothing", func(refs.Entry) error {
				t.Error("an entry of a reflog that is not there")
				return nil
			}))
		}
		view(t, s, func(tx store.Tx) error { check(tx); return nil })
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(5, refs.ActionCommit)))
			check(tx) // with the transaction's own entry
			return nil
		})
	}},
	{"EachReflogReadsEveryReflogAsReflogDoes", func(t *testing.T, s store.Store) {
		names := []string{"refs/heads/z", refs.HEAD, "refs/heads/a", "ORIG_HEAD", "refs/heads/a/b"}
		for round := range 3 {
			update(t, s, func(tx store.Tx) error {
				for i, n := range names[:len(names)-round] {
					require.NoError(t, tx.AppendReflog(n, entry(10*round+i, refs.ActionCommit)))
				}
				return nil
			})
		}
		type named struct {
			name string
			e    refs.Entry
		}
		check := func(tx store.Tx) {
			var want []named
			all, err := tx.ReflogNames()
			require.NoError(t, err)
			for _, n := range all {
				es, err := tx.Reflog(n)
				require.NoError(t, err)
				for _, e := range es {
					want = append(want, named{n, e})
				}
			}
			var got []named
			require.NoError(t, store.EachReflog(tx, func(n string, e refs.Entry) error {
				got = append(got, named{n, e})
				return nil
			}))
			assert.Equal(t, want, got, "every reflog in name order, each oldest first")
			stop := errors.New("enough")
			n := 0
			err = store.EachReflog(tx, func(string, refs.Entry) error {
				if n++; n == 4 {
					return stop
				}
				return nil
			})
			assert.ErrorIs(t, err, stop, "the function's error ends the read")
			assert.Equal(t, 4, n)
		}
		view(t, s, func(tx store.Tx) error { check(tx); return nil })
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.AppendReflog("refs/heads/m", entry(99, refs.ActionCommit)))
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(98, refs.ActionCommit)))
			check(tx) // with the transaction's own entries
			return nil
		})
	}},
	{"MissingReflogIsEmpty", func(t *testing.T, s store.Store) {
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Reflog("refs/heads/nothing")
			require.NoError(t, err)
			assert.Empty(t, got)
			return nil
		})
	}},
	{"NamesAreSorted", func(t *testing.T, s store.Store) {
		names := []string{"refs/heads/z", refs.HEAD, "refs/heads/a", "ORIG_HEAD"}
		update(t, s, func(tx store.Tx) error {
			for i, n := range names {
				require.NoError(t, tx.AppendReflog(n, entry(i, refs.ActionCommit)))
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			got, err := tx.ReflogNames()
			require.NoError(t, err)
			want := slices.Clone(names)
			sort.Strings(want)
			assert.Equal(t, want, got)
			return nil
		})
	}},
	{"ReplaceAndDelete", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			for i := range 4 {
				require.NoError(t, tx.AppendReflog(refs.HEAD, entry(i, refs.ActionCommit)))
				require.NoError(t, tx.AppendReflog("refs/heads/main", entry(i, refs.ActionCommit)))
			}
			return nil
		})
		kept := []refs.Entry{entry(1, refs.ActionCommit), entry(3, refs.ActionCommit)}
		update(t, s, func(tx store.Tx) error { return tx.ReplaceReflog(refs.HEAD, kept) })
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Equal(t, kept, got)
			return nil
		})
		// Appending after a replace continues after the kept entries.
		update(t, s, func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, entry(9, refs.ActionReset)) })
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Equal(t, append(slices.Clone(kept), entry(9, refs.ActionReset)), got)
			return nil
		})
		// An empty replacement deletes the reflog.
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.ReplaceReflog(refs.HEAD, nil))
			return tx.ReplaceReflog("refs/heads/never", nil)
		})
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Empty(t, got)
			names, err := tx.ReflogNames()
			require.NoError(t, err)
			assert.Equal(t, []string{"refs/heads/main"}, names)
			return nil
		})
	}},
	{"ReplaceAndAppendInOneTransaction", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(1, refs.ActionCommit)))
			require.NoError(t, tx.ReplaceReflog(refs.HEAD, []refs.Entry{entry(2, refs.ActionCommit)}))
			require.NoError(t, tx.AppendReflog(refs.HEAD, entry(3, refs.ActionCommit)))
			got, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Equal(t, []refs.Entry{entry(2, refs.ActionCommit), entry(3, refs.ActionCommit)}, got)
			return nil
		})
	}},
}

var resolveRefTests = []subtest{
	{"FollowsSymbolicRefs", func(t *testing.T, s store.Store) {
		h := dag.Sum([]byte("c"))
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h}))
			return tx.SetRef(refs.Ref{Name: "refs/heads/alias", Target: refs.HEAD})
		})
		view(t, s, func(tx store.Tx) error {
			for _, name := range []string{refs.HEAD, "refs/heads/main", "refs/heads/alias"} {
				got, ok, err := store.ResolveRef(tx, name)
				require.NoError(t, err, name)
				assert.True(t, ok, name)
				assert.Equal(t, h, got, name)
			}
			return nil
		})
	}},
	{"UnbornAndMissing", func(t *testing.T, s store.Store) {
		view(t, s, func(tx store.Tx) error {
			for _, name := range []string{refs.HEAD, "refs/heads/main", "refs/heads/nothing", refs.OrigHead} {
				h, ok, err := store.ResolveRef(tx, name)
				require.NoError(t, err, name)
				assert.False(t, ok, name)
				assert.True(t, h.IsZero(), name)
			}
			return nil
		})
	}},
	{"SymbolicLoopIsAnError", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/a", Target: "refs/heads/b"}))
			return tx.SetRef(refs.Ref{Name: "refs/heads/b", Target: "refs/heads/a"})
		})
		view(t, s, func(tx store.Tx) error {
			_, _, err := store.ResolveRef(tx, "refs/heads/a")
			assert.ErrorContains(t, err, "nested too deep")
			return nil
		})
	}},
	{"ResolverResolvesRevisions", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 4)
		update(t, s, func(tx store.Tx) error {
			return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[3]})
		})
		view(t, s, func(tx store.Tx) error {
			r := store.Resolver(tx)
			for expr, want := range map[string]dag.Hash{
				"HEAD": hs[3], "main~2": hs[1], "HEAD^": hs[2], hs[0].String()[:12]: hs[0],
			} {
				got, err := refs.Resolve(r, expr)
				require.NoError(t, err, expr)
				assert.Equal(t, want, got, expr)
			}
			_, err := refs.Resolve(r, "main~4")
			assert.ErrorIs(t, err, refs.ErrUnknownRevision)
			var n int
			require.NoError(t, dag.WalkFirstParent(store.Getter(tx), hs[3], func(dag.Hash, *dag.Commit) error {
				n++
				return nil
			}))
			assert.Equal(t, 4, n)
			return nil
		})
	}},
}

var transactionTests = []subtest{
	{"DoneContextBeginsNothing", func(t *testing.T, s store.Store) {
		before := snapshot(t, s)
		for name, ctx := range map[string]context.Context{"cancelled": cancelledContext(), "past its deadline": expiredContext()} {
			ran := false
			err := s.Update(ctx, func(tx store.Tx) error {
				ran = true
				return tx.SetRef(refs.Ref{Name: "refs/heads/never", Target: refs.BranchRef("main")})
			})
			assert.ErrorIs(t, err, ctx.Err(), "Update with a context %s", name)
			err = s.View(ctx, func(store.Tx) error { ran = true; return nil })
			assert.ErrorIs(t, err, ctx.Err(), "View with a context %s", name)
			assert.False(t, ran, "no transaction begins with a context %s", name)
		}
		assert.Equal(t, before, snapshot(t, s), "nothing written")
	}},
	{"ErrorRollsBackEveryWrite", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 2)
		keepBlob := dag.Sum([]byte("text 0"))
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[1]}))
			return tx.AppendReflog("refs/heads/main", entry(1, refs.ActionCommit))
		})
		before := snapshot(t, s)

		boom := errors.New("validator said no")
		err := s.Update(context.Background(), func(tx store.Tx) error {
			_, err := tx.PutBlob([]byte("new blob"))
			require.NoError(t, err)
			_, err = tx.PutCommit(sampleCommit(99, keepBlob, hs[1]))
			require.NoError(t, err)
			require.NoError(t, tx.DeleteBlob(keepBlob))
			require.NoError(t, tx.DeleteCommit(hs[0]))
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[0]}))
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/new", Hash: hs[0]}))
			require.NoError(t, tx.DeleteRef(refs.HEAD))
			require.NoError(t, tx.AppendReflog("refs/heads/main", entry(2, refs.ActionReset)))
			require.NoError(t, tx.AppendReflog("refs/heads/new", entry(3, refs.ActionBranch)))
			require.NoError(t, tx.ReplaceReflog("refs/heads/main", nil))
			return boom
		})
		assert.ErrorIs(t, err, boom, "Update returns fn's error")
		assert.Equal(t, before, snapshot(t, s), "nothing written in the failed Update is visible")
	}},
	{"ReadsSeeOwnWritesInsideUpdate", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error {
			b, err := tx.PutBlob([]byte("x"))
			require.NoError(t, err)
			ok, err := tx.HasBlob(b)
			require.NoError(t, err)
			assert.True(t, ok)
			h, err := tx.PutCommit(sampleCommit(1, b))
			require.NoError(t, err)
			hs, err := tx.CommitsWithPrefix(h.String()[:6], 0)
			require.NoError(t, err)
			assert.Equal(t, []dag.Hash{h}, hs)
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h}))
			got, ok, err := store.ResolveRef(tx, refs.HEAD)
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, h, got)

			require.NoError(t, tx.DeleteBlob(b))
			ok, err = tx.HasBlob(b)
			require.NoError(t, err)
			assert.False(t, ok)
			n := 0
			require.NoError(t, tx.ForEachBlob(func(dag.Hash, []byte) error { n++; return nil }))
			assert.Zero(t, n)
			require.NoError(t, tx.DeleteRef("refs/heads/main"))
			all, err := tx.Refs()
			require.NoError(t, err)
			assert.Len(t, all, 1)
			return nil
		})
	}},
	{"WritesAreInvisibleToViewsUntilCommit", func(t *testing.T, s store.Store) {
		written := make(chan struct{})
		release := make(chan struct{})
		done := make(chan error, 1)
		blob := dag.Sum([]byte("pending"))
		go func() {
			done <- s.Update(context.Background(), func(tx store.Tx) error {
				if _, err := tx.PutBlob([]byte("pending")); err != nil {
					return err
				}
				if err := tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: blob}); err != nil {
					return err
				}
				close(written)
				<-release
				return nil
			})
		}()
		<-written
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasBlob(blob)
			require.NoError(t, err)
			assert.False(t, ok, "a View does not see an uncommitted blob")
			_, err = tx.Ref("refs/heads/main")
			assert.ErrorIs(t, err, store.ErrNotFound, "a View does not see an uncommitted ref")
			return nil
		})
		close(release)
		require.NoError(t, <-done)
		view(t, s, func(tx store.Tx) error {
			ok, err := tx.HasBlob(blob)
			require.NoError(t, err)
			assert.True(t, ok, "committed writes are visible")
			return nil
		})
	}},
	{"WritesInViewFailWithErrReadOnly", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 1)
		writes := map[string]func(tx store.Tx) error{
			"PutBlob":       func(tx store.Tx) error { _, err := tx.PutBlob([]byte("text 0")); return err },
			"DeleteBlob":    func(tx store.Tx) error { return tx.DeleteBlob(dag.Sum([]byte("text 0"))) },
			"PutCommit":     func(tx store.Tx) error { _, err := tx.PutCommit(sampleCommit(5, dag.Hash{})); return err },
			"DeleteCommit":  func(tx store.Tx) error { return tx.DeleteCommit(hs[0]) },
			"SetRef":        func(tx store.Tx) error { return tx.SetRef(refs.Ref{Name: "refs/heads/x", Hash: hs[0]}) },
			"DeleteRef":     func(tx store.Tx) error { return tx.DeleteRef(refs.HEAD) },
			"AppendReflog":  func(tx store.Tx) error { return tx.AppendReflog(refs.HEAD, entry(1, "x")) },
			"ReplaceReflog": func(tx store.Tx) error { return tx.ReplaceReflog(refs.HEAD, nil) },
		}
		before := snapshot(t, s)
		for name, write := range writes {
			err := s.View(context.Background(), write)
			assert.ErrorIs(t, err, store.ErrReadOnly, name)
		}
		assert.Equal(t, before, snapshot(t, s))
	}},
	{"ConcurrentViewsAndUpdates", func(t *testing.T, s store.Store) {
		const writers, perWriter = 4, 10
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					err := s.Update(context.Background(), func(tx store.Tx) error {
						if _, err := tx.PutBlob([]byte(fmt.Sprintf("w%d-%d", w, i))); err != nil {
							return err
						}
						return tx.AppendReflog(refs.HEAD, entry(w*100+i, refs.ActionCommit))
					})
					assert.NoError(t, err)
				}
			})
		}
		for range 4 {
			wg.Go(func() {
				for range 20 {
					err := s.View(context.Background(), func(tx store.Tx) error {
						es, err := tx.Reflog(refs.HEAD)
						if err != nil {
							return err
						}
						n := 0
						if err := tx.ForEachBlob(func(dag.Hash, []byte) error { n++; return nil }); err != nil {
							return err
						}
						if n != len(es) {
							return fmt.Errorf("a View saw %d blobs but %d reflog entries: half an Update", n, len(es))
						}
						return nil
					})
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		view(t, s, func(tx store.Tx) error {
			es, err := tx.Reflog(refs.HEAD)
			require.NoError(t, err)
			assert.Len(t, es, writers*perWriter)
			return nil
		})
	}},
	{"PanicInUpdateWritesNothing", func(t *testing.T, s store.Store) {
		before := snapshot(t, s)
		func() {
			defer func() { _ = recover() }()
			_ = s.Update(context.Background(), func(tx store.Tx) error {
				_, _ = tx.PutBlob([]byte("doomed"))
				panic("caller bug")
			})
		}()
		assert.Equal(t, before, snapshot(t, s))
		// The store still works after the panic.
		update(t, s, func(tx store.Tx) error { _, err := tx.PutBlob([]byte("fine")); return err })
	}},
}

var notFoundTests = []subtest{
	{"MissingObjectsAndRefsWrapErrNotFound", func(t *testing.T, s store.Store) {
		missing := dag.Sum([]byte("missing"))
		view(t, s, func(tx store.Tx) error {
			_, blobErr := tx.Blob(missing)
			_, commitErr := tx.Commit(missing)
			_, refErr := tx.Ref("refs/heads/missing")
			for what, err := range map[string]error{"blob": blobErr, "commit": commitErr, "ref": refErr} {
				require.Error(t, err, what)
				assert.ErrorIs(t, err, store.ErrNotFound, what)
				assert.ErrorIs(t, err, refs.ErrNotFound, what)
				assert.True(t, refs.IsNotFound(err), what)
			}
			assert.Contains(t, blobErr.Error(), missing.Short())
			assert.Contains(t, commitErr.Error(), missing.Short())
			assert.Contains(t, refErr.Error(), "refs/heads/missing")
			return nil
		})
	}},
}

var copyTests = []subtest{
	{"PutBlobCopiesItsInput", func(t *testing.T, s store.Store) {
		data := []byte("original")
		var h dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.PutBlob(data)
			copy(data, "XXXXXXXX")
			return err
		})
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Blob(h)
			require.NoError(t, err)
			assert.Equal(t, "original", string(got))
			return nil
		})
	}},
	{"ReturnedBytesAreCopies", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 2)
		c0 := dag.Sum([]byte("text 0"))
		var blob []byte
		var commit *dag.Commit
		view(t, s, func(tx store.Tx) error {
			var err error
			blob, err = tx.Blob(c0)
			require.NoError(t, err)
			commit, err = tx.Commit(hs[1])
			require.NoError(t, err)
			// Scribble on what was returned, inside the transaction.
			copy(blob, "XXXX")
			commit.Parents[0] = dag.Hash{}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Blob(c0)
			require.NoError(t, err)
			assert.Equal(t, "text 0", string(got))
			c, err := tx.Commit(hs[1])
			require.NoError(t, err)
			assert.Equal(t, hs[0], c.Parents[0])
			return nil
		})
	}},
	{"ReturnedBytesOutliveTheTransaction", func(t *testing.T, s store.Store) {
		var h dag.Hash
		update(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.PutBlob(bytes.Repeat([]byte("a"), 3000))
			return err
		})
		var got []byte
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.Blob(h)
			return err
		})
		// Free the pages the blob lived on and write over them.
		update(t, s, func(tx store.Tx) error { return tx.DeleteBlob(h) })
		update(t, s, func(tx store.Tx) error {
			for i := range 50 {
				if _, err := tx.PutBlob(bytes.Repeat([]byte{byte('b' + i%20)}, 3000+i)); err != nil {
					return err
				}
			}
			return nil
		})
		assert.Equal(t, bytes.Repeat([]byte("a"), 3000), got)
	}},
}

var fsckTests = []subtest{
	{"CleanStoreIsOK", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 5)
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: hs[4]}))
			require.NoError(t, tx.SetRef(refs.Ref{Name: refs.OrigHead, Hash: hs[2]}))
			return tx.AppendReflog("refs/heads/main", refs.Entry{Old: hs[2], New: hs[4], Time: t0, Action: refs.ActionCommit})
		})
		r, err := store.Fsck(context.Background(), s)
		require.NoError(t, err)
		assert.True(t, r.OK(), "problems: %v", r.Problems)
		assert.Equal(t, 5, r.Commits)
		assert.Equal(t, 5, r.Blobs)
		assert.Equal(t, 3, r.Refs)
		assert.Equal(t, 1, r.ReflogEntries)
	}},
	{"ReportsDanglingReferences", func(t *testing.T, s store.Store) {
		hs := putChain(t, s, 2)
		ghost := dag.Sum([]byte("ghost"))
		update(t, s, func(tx store.Tx) error {
			require.NoError(t, tx.DeleteCommit(hs[0]))
			require.NoError(t, tx.DeleteBlob(dag.Sum([]byte("text 1"))))
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: ghost}))
			require.NoError(t, tx.SetRef(refs.Ref{Name: "refs/heads/odd", Target: refs.HEAD}))
			return tx.AppendReflog(refs.HEAD, refs.Entry{Old: ghost, Time: t0, Action: refs.ActionReset})
		})
		r, err := store.Fsck(context.Background(), s)
		require.NoError(t, err)
		assert.False(t, r.OK())
		want := []store.Problem{
			{Object: "commit " + hs[1].Short(), Message: "parent " + hs[0].Short() + " is missing"},
			{Object: "commit " + hs[1].Short(), Message: "blob " + dag.Sum([]byte("text 1")).Short() + " is missing"},
			{Object: "ref refs/heads/main", Message: "points at missing commit " + ghost.Short()},
			{Object: "ref refs/heads/odd", Message: "points at HEAD, which is not a branch"},
			{Object: "reflog HEAD", Message: "entry 1 (reset) refers to missing commit " + ghost.Short()},
		}
		assert.ElementsMatch(t, want, r.Problems)
	}},
	{"ReportsMissingHEAD", func(t *testing.T, s store.Store) {
		update(t, s, func(tx store.Tx) error { return tx.DeleteRef(refs.HEAD) })
		r, err := store.Fsck(context.Background(), s)
		require.NoError(t, err)
		assert.Equal(t, []store.Problem{{Object: "ref HEAD", Message: "is missing"}}, r.Problems)
	}},
}

// state is everything a store holds, read in one View.
type state struct {
	Blobs   map[dag.Hash]string
	Commits map[dag.Hash]string
	Refs    []refs.Ref
	Reflogs map[string][]refs.Entry
}

func snapshot(t *testing.T, s store.Store) state {
	t.Helper()
	st := state{Blobs: map[dag.Hash]string{}, Commits: map[dag.Hash]string{}, Reflogs: map[string][]refs.Entry{}}
	view(t, s, func(tx store.Tx) error {
		require.NoError(t, tx.ForEachBlob(func(h dag.Hash, data []byte) error {
			st.Blobs[h] = string(data)
			return nil
		}))
		require.NoError(t, tx.ForEachCommit(func(h dag.Hash, raw []byte) error {
			st.Commits[h] = string(raw)
			return nil
		}))
		var err error
		st.Refs, err = tx.Refs()
		require.NoError(t, err)
		names, err := tx.ReflogNames()
		require.NoError(t, err)
		for _, n := range names {
			st.Reflogs[n], err = tx.Reflog(n)
			require.NoError(t, err)
		}
		return nil
	})
	return st
}
