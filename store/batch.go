package store

import (
	"errors"
	"fmt"

	"github.com/tractdag/tract/dag"
)

// BatchReader is implemented by transactions that read many objects in
// one call: a store whose every read is a round trip to a server (the
// PostgreSQL store) answers a page of them in one. ReadBlobs and
// ReadCommits use it when a transaction has it and read one object at a
// time otherwise, as a bbolt file's reads are cheap.
//
// Both methods return one value per hash asked for, in the order asked
// (a hash asked twice is answered twice), and nil for an object that is
// not stored; an empty blob is an empty non-nil slice. The values are the
// caller's.
type BatchReader interface {
	// Blobs returns the contents of blobs hs.
	Blobs(hs []dag.Hash) ([][]byte, error)
	// Commits returns commits hs.
	Commits(hs []dag.Hash) ([]*dag.Commit, error)
	// CountersOf returns the counters stored for commits hs (see
	// DerivedTx.Counters); ok[i] is false where none are.
	CountersOf(hs []dag.Hash) (cs []Counters, ok []bool, err error)
}

// ChainLink is one commit of a first-parent chain: its hash and header.
type ChainLink struct {
	Hash   dag.Hash
	Header dag.Header
	// Raw is the commit's encoding when the ChainReader read it anyway
	// (the caller's to keep), so that a walk that needs whole commits
	// need not read them again; nil otherwise.
	Raw []byte
}

// ChainReader is implemented by transactions that read a first-parent
// chain in one call (the PostgreSQL store: one recursive query instead of
// a round trip per commit). ReadChain uses it when a transaction has it
// and reads one header at a time otherwise.
type ChainReader interface {
	// Chain returns up to n (n > 0) commits of the first-parent chain
	// that starts at from, newest first: from itself, its first parent,
	// and so on, ending after a root commit or before stop (which is not
	// returned; zero for none). It may return fewer, as long as it returns
	// a prefix of the chain: it stops before a commit that is not stored,
	// and may stop sooner (ReadChain continues from where it stopped). A
	// from that is not stored returns no links and no error.
	Chain(from dag.Hash, n int, stop dag.Hash) ([]ChainLink, error)
}

// ReadBlobs returns the contents of blobs hs in the order asked, with
// nil for each one not stored (see BatchReader): in one call when tx is a
// BatchReader, one blob at a time otherwise.
func ReadBlobs(tx ObjectTx, hs []dag.Hash) ([][]byte, error) {
	var batch func([]dag.Hash) ([][]byte, error)
	if br, ok := tx.(BatchReader); ok {
		batch = br.Blobs
	}
	return readEach("blobs", hs, batch, tx.Blob)
}

// ReadCommits returns commits hs in the order asked, with nil for each
// one not stored (see BatchReader): in one call when tx is a
// BatchReader, one commit at a time otherwise.
func ReadCommits(tx ObjectTx, hs []dag.Hash) ([]*dag.Commit, error) {
	var batch func([]dag.Hash) ([]*dag.Commit, error)
	if br, ok := tx.(BatchReader); ok {
		batch = br.Commits
	}
	return readEach("commits", hs, batch, tx.Commit)
}

// readEach reads objects hs (what names them in errors) with one call of
// batch when there is one, else one call of one each; an object not
// stored reads as the zero T.
func readEach[T any](what string, hs []dag.Hash, batch func([]dag.Hash) ([]T, error), one func(dag.Hash) (T, error)) ([]T, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	if batch != nil {
		out, err := batch(hs)
		if err == nil && len(out) != len(hs) {
			err = fmt.Errorf("read %d %s: %d answers: %w", len(hs), what, len(out), ErrCorrupt)
		}
		return out, err
	}
	out := make([]T, len(hs))
	for i, h := range hs {
		v, err := one(h)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			out[i] = v
		}
	}
	return out, nil
}

// ReadCounters returns the counters stored for commits hs in the order
// asked, with ok[i] false where none are (see BatchReader): in one call
// when tx is a BatchReader, one entry at a time otherwise.
func ReadCounters(tx Tx, hs []dag.Hash) (cs []Counters, ok []bool, err error) {
	if len(hs) == 0 {
		return nil, nil, nil
	}
	if br, isBatch := tx.(BatchReader); isBatch {
		cs, ok, err = br.CountersOf(hs)
		if err == nil && (len(cs) != len(hs) || len(ok) != len(hs)) {
			err = fmt.Errorf("read %d counters: %d answers: %w", len(hs), len(cs), ErrCorrupt)
		}
		return cs, ok, err
	}
	cs, ok = make([]Counters, len(hs)), make([]bool, len(hs))
	for i, h := range hs {
		if cs[i], ok[i], err = tx.Counters(h); err != nil {
			return nil, nil, err
		}
	}
	return cs, ok, nil
}

// ReadChain returns up to n commits of the first-parent chain that starts
// at from, newest first, ending after a root commit or before stop (zero
// for none; a from equal to stop returns nothing). n < 1 returns nothing.
// A commit of the chain that is not stored is an error wrapping
// ErrNotFound, unless the repository's salvage record lists it as lost
// (see SalvageRecord): the chain then ends at its child, whose link has
// a zero Parent as a root's has (the commit itself still names it). It reads the chain in as few calls as the transaction
// allows (see ChainReader); fewer than n links means the chain ended.
func ReadChain(tx ObjectTx, from dag.Hash, n int, stop dag.Hash) ([]ChainLink, error) {
	return AppendChain(nil, tx, from, n, stop)
}

// AppendChain is ReadChain appending the links to dst, so that a walk
// of many pages can reuse one buffer (dst[:0]).
func AppendChain(dst []ChainLink, tx ObjectTx, from dag.Hash, n int, stop dag.Hash) ([]ChainLink, error) {
	cr, batched := tx.(ChainReader)
	out := dst
	if !batched && n > 0 && !from.IsZero() && from != stop && cap(out)-len(out) < n {
		// Room for the n asked (a walk's page), up to 4096: growing by
		// appending would allocate twice what a long page takes.
		out = append(make([]ChainLink, 0, len(out)+min(n, 4096)), out...)
	}
	start := len(out)
	for next := from; len(out)-start < n && !next.IsZero() && next != stop; {
		if !batched {
			hd, err := tx.CommitHeader(next)
			if err != nil {
				if len(out) > start && endsAtLoss(tx, err, next) {
					out[len(out)-1].Header.Parent = dag.Hash{}
					break
				}
				return dst, err
			}
			out = append(out, ChainLink{Hash: next, Header: hd})
			next = hd.Parent
			continue
		}
		want := n - (len(out) - start)
		links, err := cr.Chain(next, want, stop)
		if err != nil {
			return dst, err
		}
		if len(links) == 0 {
			return dst, fmt.Errorf("commit %s: %w", next.Short(), ErrNotFound)
		}
		if len(links) > want {
			return dst, fmt.Errorf("chain from %s: %d commits asked, %d answered: %w", next.Short(), want, len(links), ErrCorrupt)
		}
		for _, l := range links {
			if l.Hash != next || next == stop {
				return dst, fmt.Errorf("chain from %s: commit %s where %s belongs: %w", from.Short(), l.Hash.Short(), next.Short(), ErrCorrupt)
			}
			next = l.Header.Parent
		}
		if out == nil {
			out = links
		} else {
			out = append(out, links...)
		}
	}
	if !batched && len(out)-start == n {
		endLostChain(tx, out[start:])
	}
	return out, nil
}
