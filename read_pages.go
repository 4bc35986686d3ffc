package tract

import (
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// The walks below read a page of commits, then the page's texts, each
// with one call of store.ReadChain, store.ReadCommits or store.ReadBlobs:
// on a database a page costs a few round trips instead of one or two per
// commit, and on a file the same reads, one key at a time (a walk that
// wants most commits whole reads each once: appendChainCommits).

// readCommits returns commits hs, in order; one not stored is an error
// wrapping store.ErrNotFound.
func readCommits(tx store.Tx, hs []Hash) ([]*dag.Commit, error) {
	cs, err := store.ReadCommits(tx, hs)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if c == nil {
			return nil, fmt.Errorf("commit %s: %w", hs[i].Short(), store.ErrNotFound)
		}
	}
	return cs, nil
}

// readTexts returns the texts of blobs hs, in order; one not stored is an
// error wrapping store.ErrNotFound, naming the commit of owners (in the
// same order) that needs it.
func readTexts(tx store.Tx, hs, owners []Hash) ([]string, error) {
	bs, err := store.ReadBlobs(tx, hs)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		if b == nil {
			return nil, fmt.Errorf("commit %s: blob %s: %w", owners[i].Short(), hs[i].Short(), store.ErrNotFound)
		}
		out[i] = bytesToString(b) // ReadBlobs's copy is ours
	}
	return out, nil
}

// infos returns the CommitInfo of commits hs, whose commits are cs,
// reading their texts in one call.
func infos(tx store.Tx, hs []Hash, cs []*dag.Commit, names map[Hash][]string) ([]*CommitInfo, error) {
	blobs := make([]Hash, len(cs))
	for i, c := range cs {
		blobs[i] = c.Blob
	}
	texts, err := readTexts(tx, blobs, hs)
	if err != nil {
		return nil, err
	}
	out := make([]*CommitInfo, len(cs))
	for i, c := range cs {
		out[i] = newInfo(hs[i], c, texts[i], names)
	}
	return out, nil
}

// chainCommits returns the commits of the links that keep accepts (all
// when keep is nil), nil for the others: decoded from the encodings the
// chain's reader returned, and the rest read in one call.
func chainCommits(tx store.Tx, links []store.ChainLink, keep func(store.ChainLink) bool) ([]*dag.Commit, error) {
	out := make([]*dag.Commit, len(links))
	var read []Hash
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
	if err := readCommitsInto(tx, out, read, at); err != nil {
		return nil, err
	}
	return out, nil
}

// appendChainCommits reads up to n commits of the first-parent chain from
// from, as store.AppendChain does (appending the links to dst), with the
// commits of the links keep accepts (all when keep is nil; nil for the
// others). A store that reads chains on its server returns the commits'
// encodings with the links; on a file, where each read is a lookup, a
// walk that wants most of them whole reads each commit once and takes its
// link's header from it, instead of reading the header, then the commit.
func appendChainCommits(dst []store.ChainLink, tx store.Tx, from Hash, n int, keep func(store.ChainLink) bool) ([]store.ChainLink, []*dag.Commit, error) {
	if _, ok := tx.(store.ChainReader); ok {
		links, err := store.AppendChain(dst, tx, from, n, Hash{})
		if err != nil {
			return dst, nil, err
		}
		cs, err := chainCommits(tx, links[len(dst):], keep)
		return links, cs, err
	}
	links, start := dst, len(dst)
	if cap(links)-len(links) < n {
		links = append(make([]store.ChainLink, 0, len(links)+min(n, 4096)), links...)
	}
	cs := make([]*dag.Commit, 0, min(n, 4096))
	for next := from; len(links)-start < n && !next.IsZero(); {
		c, err := tx.Commit(next)
		if err != nil {
			return dst, nil, err
		}
		l := store.ChainLink{Hash: next, Header: header(c)}
		links = append(links, l)
		if keep != nil && !keep(l) {
			c = nil
		}
		cs = append(cs, c)
		next = l.Header.Parent
	}
	return links, cs, nil
}

// readCommitsInto reads commits hs in one call and puts each at out[at[k]]
// (k its place in hs).
func readCommitsInto(tx store.Tx, out []*dag.Commit, hs []Hash, at []int) error {
	cs, err := readCommits(tx, hs)
	if err != nil {
		return err
	}
	for k, c := range cs {
		out[at[k]] = c
	}
	return nil
}

// chainHashes returns the hashes of links.
func chainHashes(links []store.ChainLink) []Hash {
	out := make([]Hash, len(links))
	for i, l := range links {
		out[i] = l.Hash
	}
	return out
}
