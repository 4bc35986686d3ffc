package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// importedRepo writes a repository file holding a chain of n commits of
// ~40-byte texts stored as an import stores them (keys in order, pages
// packed full) and returns its bytes and the key and encoding of each
// commit.
func importedRepo(t *testing.T, n int) ([]byte, map[dag.Hash][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := map[dag.Hash][]byte{}
	blobs := map[dag.Hash][]byte{}
	var parent dag.Hash
	for i := range n {
		text := []byte(fmt.Sprintf("message number %05d with some text ok", i))
		blob := dag.Sum(text)
		blobs[blob] = text
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: at.Add(time.Duration(i) * time.Millisecond)}
		if !parent.IsZero() {
			c.Parents = []dag.Hash{parent}
		}
		raw, err := dag.Encode(c)
		require.NoError(t, err)
		parent = dag.Sum(raw)
		commits[parent] = raw
	}
	sorted := func(m map[dag.Hash][]byte) []dag.Hash {
		hs := make([]dag.Hash, 0, len(m))
		for h := range m {
			hs = append(hs, h)
		}
		slices.SortFunc(hs, func(a, b dag.Hash) int { return bytes.Compare(a[:], b[:]) })
		return hs
	}
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		tx.(store.SortedPacker).PackSorted()
		hp := tx.(store.HashedPutter)
		for _, h := range sorted(blobs) {
			if err := hp.PutHashedBlob(h, blobs[h]); err != nil {
				return err
			}
		}
		for _, h := range sorted(commits) {
			if err := hp.PutEncodedCommit(h, commits[h]); err != nil {
				return err
			}
		}
		if err := tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: parent}); err != nil {
			return err
		}
		return tx.AppendReflog("refs/heads/main", refs.Entry{New: parent, Time: at, Action: refs.ActionImport, Message: "import"})
	}))
	require.NoError(t, b.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data, commits
}

// Zeroing any one page of an imported chain of 3,000 commits loses the
// commits stored on that page and nothing else: Salvage brings back every
// commit stored elsewhere (99% at the least; in fact all), the history
// above a lost commit included, and the new repository checks clean.
func TestSalvage_AnyZeroedPageLosesOnlyWhatItHeld(t *testing.T) {
	t.Parallel()
	data, commits := importedRepo(t, 3000)
	const page = 4096
	pageOf := map[dag.Hash]int{}
	for h, raw := range commits {
		i := bytes.Index(data, append(h[:len(h):len(h)], raw...))
		require.GreaterOrEqual(t, i, 0, "commit %s is not stored whole", h.Short())
		pageOf[h] = i / page
		if (i+dag.HashSize+len(raw)-1)/page != pageOf[h] {
			pageOf[h] = -1 // across two pages: lost with either
		}
	}
	dir := t.TempDir()
	// Every page under TRACT_STRESS; every fourth otherwise, which
	// takes each kind of page (branch, leaf of blobs, of commits, of
	// refs) all the same.
	step := 4
	if os.Getenv("TRACT_STRESS") != "" {
		step = 1
	}
	worst, zeroed, wantAll, gotAll := 1.0, 0, 0, 0
	for p := 2; p < len(data)/page; p += step {
		if bytes.Count(data[p*page:(p+1)*page], []byte{0}) == page {
			continue // free space
		}
		damaged := bytes.Clone(data)
		clear(damaged[p*page : (p+1)*page])
		src := filepath.Join(dir, fmt.Sprintf("zeroed-%d.db", p))
		require.NoError(t, os.WriteFile(src, damaged, 0o600))
		out := filepath.Join(dir, fmt.Sprintf("salvaged-%d.db", p))
		rep, err := store.Salvage(context.Background(), src, out)
		require.NoError(t, err, "page %d", p)
		b, err := store.OpenBolt(out, store.BoltOptions{ReadOnly: true})
		require.NoError(t, err)
		want, got := 0, 0
		require.NoError(t, b.View(context.Background(), func(tx store.Tx) error {
			for h, at := range pageOf {
				if at == p || at == -1 {
					continue
				}
				want++
				if ok, err := tx.HasCommit(h); err != nil {
					return err
				} else if ok {
					got++
				}
			}
			return nil
		}))
		require.NoError(t, b.Close())
		rate := float64(got) / float64(want)
		worst = min(worst, rate)
		zeroed, wantAll, gotAll = zeroed+1, wantAll+want, gotAll+got
		require.GreaterOrEqual(t, rate, 0.99, "page %d zeroed: %d of the %d commits stored elsewhere came back", p, got, want)
		r, err := store.FsckFile(out, store.BoltOptions{NoSync: true})
		require.NoError(t, err)
		require.True(t, r.OK(), "page %d zeroed: the salvaged repository: %v", p, r.Problems)
		assert.Equal(t, len(rep.Boundaries), r.SalvageBoundaries)
		require.NoError(t, os.Remove(src))
		require.NoError(t, os.Remove(out))
	}
	t.Logf("%d pages zeroed in turn: %d of the %d commits stored elsewhere came back in all; worst page: %.2f%%",
		zeroed, gotAll, wantAll, 100*worst)
}

// Fsck reads on past damage that stops its reads through bbolt: on a file
// bbolt opens whose page of commits is zeroed, it counts every commit
// stored elsewhere, and names the page and each lost commit (that a
// surviving one names as its parent) once.
func TestFsck_ReadsPastDamage(t *testing.T) {
	t.Parallel()
	data, commits := importedRepo(t, 3000)
	const page = 4096
	onPage, pageOf := map[int]int{}, map[dag.Hash]int{}
	for h, raw := range commits {
		i := bytes.Index(data, append(h[:len(h):len(h)], raw...))
		onPage[i/page]++
		pageOf[h] = i / page
	}
	zero, most := 0, 0
	for p, n := range onPage {
		if n > most || n == most && p < zero {
			zero, most = p, n
		}
	}
	// The lost commits a surviving commit names as its parent.
	named := 0
	for h, raw := range commits {
		c, err := dag.Decode(raw)
		require.NoError(t, err)
		if pageOf[h] != zero && len(c.Parents) > 0 && pageOf[c.Parents[0]] == zero {
			named++
		}
	}
	damaged := bytes.Clone(data)
	clear(damaged[zero*page : (zero+1)*page])
	path := filepath.Join(t.TempDir(), "zeroed.db")
	require.NoError(t, os.WriteFile(path, damaged, 0o600))

	r, err := store.FsckFile(path, store.BoltOptions{NoSync: true})
	require.NoError(t, err)
	assert.Equal(t, len(commits)-most, r.Commits, "every commit off the zeroed page is counted")
	var pages, lost, stopped int
	for _, p := range r.Problems {
		switch {
		case strings.Contains(p.Message, "reading stopped on damaged data"):
			stopped++ // bbolt opened the file, and its reads stopped
		case p.Object == fmt.Sprintf("page %d", zero):
			pages++
		case strings.Contains(p.Message, "is missing: the history before"):
			lost++
		}
	}
	assert.Equal(t, 1, stopped, "%v", r.Problems)
	assert.Equal(t, 1, pages, "%v", r.Problems)
	assert.Equal(t, named, lost, "each lost commit a surviving one names, once: %v", r.Problems)
}
