package compress

import (
	"encoding/json"
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
)

// Chain is the chain that replaces a compressed range and the commits
// after it, as Rebuild builds it: nothing of it is stored yet.
type Chain struct {
	// Commits are the new commits, oldest first, by their hashes; a
	// commit Rebuild could reuse as it was is not among them.
	Commits []Commit
	// Blobs are the summaries' texts, by their hashes.
	Blobs []Blob
	// Tip is the new chain's last commit.
	Tip dag.Hash
	// Summaries are the summary commits, in order, and Sources the
	// commits they replace.
	Summaries, Sources []dag.Hash
}

// Commit is a commit of a Chain and its hash.
type Commit struct {
	Hash   dag.Hash
	Commit *dag.Commit
}

// Blob is a summary's text and its hash.
type Blob struct {
	Hash dag.Hash
	Data []byte
}

// Needed lists the commits Rebuild reads, in order: each kept group's
// commit and each summarized group's last source (summaries as
// Rebuild takes them), then tail.
func Needed(groups []Group, summaries []*Summary, tail []dag.Hash) []dag.Hash {
	var need []dag.Hash
	for i, g := range groups {
		if g.Keep {
			need = append(need, g.Items[0].Hash)
		} else {
			need = append(need, summaries[i].Sources[len(summaries[i].Sources)-1])
		}
	}
	return append(need, tail...)
}

// Rebuild builds the chain that replaces a range on base, the parent of
// its first commit (zero at the root): for each of groups in order, a
// kept group's commit replayed, or a summarized group's summary
// (summaries[i], aligned with groups as SummarizeAll returns them), a
// commit of kind summary and role system whose metadata is its
// record.Summary (estimated says the tokens were estimated) and whose
// time is that of the last commit it replaces, so the new chain keeps
// its order in time and compressing is deterministic; then the commits
// of tail, replayed. Replaying re-commits a commit on the new tip with
// the same kind, role, text, metadata, time and merge parents; a commit
// whose parent is unchanged is reused as it is. commits holds the
// commits Needed lists.
func Rebuild(base dag.Hash, groups []Group, summaries []*Summary, tail []dag.Hash, commits map[dag.Hash]*dag.Commit, estimated bool) (*Chain, error) {
	ch := &Chain{Tip: base}
	replay := func(h dag.Hash) error {
		c, ok := commits[h]
		if !ok {
			return fmt.Errorf("compress: commit %s was not read", h.Short())
		}
		if c.Parent() == ch.Tip {
			ch.Tip = h
			return nil
		}
		nc := *c
		nc.Parents = c.Parents[min(1, len(c.Parents)):] // merge parents stay
		if !ch.Tip.IsZero() {
			nc.Parents = append([]dag.Hash{ch.Tip}, nc.Parents...)
		}
		var err error
		if ch.Tip, err = nc.Hash(); err != nil {
			return err
		}
		ch.Commits = append(ch.Commits, Commit{Hash: ch.Tip, Commit: &nc})
		return nil
	}
	for i, g := range groups {
		if g.Keep {
			if err := replay(g.Items[0].Hash); err != nil {
				return nil, err
			}
			continue
		}
		s := summaries[i]
		rec, err := json.Marshal(record.Summary{Sources: s.Sources, TokensBefore: s.TokensBefore, TokensAfter: s.TokensAfter,
			TokensEstimated: estimated, Attempts: s.Attempts, Diagnoses: append([]string{}, s.History...),
			Model: s.Model, Usage: s.Usage})
		if err != nil {
			return nil, err
		}
		meta, err := dag.CanonicalMeta(rec)
		if err != nil {
			return nil, err
		}
		data := []byte(s.Text)
		blob := dag.Sum(data)
		ch.Blobs = append(ch.Blobs, Blob{Hash: blob, Data: data})
		lastSource, ok := commits[s.Sources[len(s.Sources)-1]]
		if !ok {
			return nil, fmt.Errorf("compress: commit %s was not read", s.Sources[len(s.Sources)-1].Short())
		}
		c := &dag.Commit{Kind: dag.KindSummary, Role: dag.RoleSystem, Blob: blob, Meta: meta, Time: lastSource.Time}
		if !ch.Tip.IsZero() {
			c.Parents = []dag.Hash{ch.Tip}
		}
		if ch.Tip, err = c.Hash(); err != nil {
			return nil, err
		}
		ch.Commits = append(ch.Commits, Commit{Hash: ch.Tip, Commit: c})
		ch.Summaries = append(ch.Summaries, ch.Tip)
		ch.Sources = append(ch.Sources, s.Sources...)
	}
	for _, h := range tail {
		if err := replay(h); err != nil {
			return nil, err
		}
	}
	return ch, nil
}
