package store

import (
	"fmt"
	"unsafe"

	"github.com/tractdag/tract/dag"
)

// The walks below read a page of commits, then the page's texts, each
// with one call of ReadChain, ReadCommits or ReadBlobs:
// on a database a page costs a few round trips instead of one or two per
// commit, and on a file the same reads, one key at a time (a walk that
// wants most commits whole reads each once: AppendChainCommits).

// ReadCommitsStored returns commits hs, in order; one not stored is an error
// wrapping ErrNotFound.
func ReadCommitsStored(tx Tx, hs []dag.Hash) ([]*dag.Commit, error) {
	cs, err := ReadCommits(tx, hs)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if c == nil {
			return nil, fmt.Errorf("commit %s: %w", hs[i].Short(), ErrNotFound)
		}
	}
	return cs, nil
}

// ReadTexts returns the texts of blobs hs, in order; one not stored is an
// error wrapping ErrNotFound, naming the commit of owners (in the
// same order) that needs it, unless the repository's salvage record lists
// it as lost: its text is then LostText.
func ReadTexts(tx Tx, hs, owners []dag.Hash) ([]string, error) {
	bs, err := ReadBlobs(tx, hs)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(bs))
	var lost *lostHistory
	for i, b := range bs {
		if b == nil {
			if lost == nil {
				l := lostOf(tx)
				lost = &l
			}
			if lost.blob(hs[i]) {
				out[i] = LostText(hs[i])
				continue
			}
			return nil, fmt.Errorf("commit %s: blob %s: %w", owners[i].Short(), hs[i].Short(), ErrNotFound)
		}
		if len(b) > 0 {
			out[i] = unsafe.String(&b[0], len(b)) // ReadBlobs's copy is ours
		}
	}
	return out, nil
}

// ChainCommits returns the commits of the links that keep accepts (all
// when keep is nil), nil for the others: decoded from the encodings the
// chain's reader returned, and the rest read in one call.
func ChainCommits(tx Tx, links []ChainLink, keep func(ChainLink) bool) ([]*dag.Commit, error) {
	out := make([]*dag.Commit, len(links))
	var read []dag.Hash
	var at []int
	for i, l := range links {
		switch {
		case keep != nil && !keep(l):
		case l.Raw == nil:
			read, at = append(read, l.Hash), append(at, i)
		default:
			c, err := dag.Decode(l.Raw)
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", l.Hash.Short(), err)
			}
			out[i] = c
		}
	}
	if err := ReadCommitsInto(tx, out, read, at); err != nil {
		return nil, err
	}
	return out, nil
}

// AppendChainCommits reads up to n commits of the first-parent chain from
// from, as AppendChain does (appending the links to dst), with the
// commits of the links keep accepts (all when keep is nil; nil for the
// others). A store that reads chains on its server returns the commits'
// encodings with the links; on a file, where each read is a lookup, a
// walk that wants most of them whole reads each commit once and takes its
// link's header from it, instead of reading the header, then the commit.
func AppendChainCommits(dst []ChainLink, tx Tx, from dag.Hash, n int, keep func(ChainLink) bool) ([]ChainLink, []*dag.Commit, error) {
	if _, ok := tx.(ChainReader); ok {
		links, err := AppendChain(dst, tx, from, n, dag.Hash{})
		if err != nil {
			return dst, nil, err
		}
		cs, err := ChainCommits(tx, links[len(dst):], keep)
		return links, cs, err
	}
	links, start := dst, len(dst)
	if cap(links)-len(links) < n {
		links = append(make([]ChainLink, 0, len(links)+min(n, 4096)), links...)
	}
	cs := make([]*dag.Commit, 0, min(n, 4096))
	for next := from; len(links)-start < n && !next.IsZero(); {
		c, err := tx.Commit(next)
		if err != nil {
			if len(links) > start && endsAtLoss(tx, err, next) {
				links[len(links)-1].Header.Parent = dag.Hash{}
				break
			}
			return dst, nil, err
		}
		l := ChainLink{Hash: next, Header: c.Header()}
		links = append(links, l)
		if keep != nil && !keep(l) {
			c = nil
		}
		cs = append(cs, c)
		next = l.Header.Parent
	}
	if len(links)-start == n {
		endLostChain(tx, links[start:])
	}
	return links, cs, nil
}

// ReadCommitsInto reads commits hs in one call and puts each at out[at[k]]
// (k its place in hs).
func ReadCommitsInto(tx Tx, out []*dag.Commit, hs []dag.Hash, at []int) error {
	cs, err := ReadCommitsStored(tx, hs)
	if err != nil {
		return err
	}
	for k, c := range cs {
		out[at[k]] = c
	}
	return nil
}

// ChainHashes returns the hashes of links.
func ChainHashes(links []ChainLink) []dag.Hash {
	out := make([]dag.Hash, len(links))
	for i, l := range links {
		out[i] = l.Hash
	}
	return out
}
