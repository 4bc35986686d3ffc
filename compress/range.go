package compress

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
)

// Errors of compressing a range of a branch (tract.CompressRange),
// besides ErrEmptyRange and ErrNothingToSummarize.
var (
	// ErrNotOnChain is returned when a range end is not on the current
	// branch's first-parent chain.
	ErrNotOnChain = errors.New("not on the current branch's first-parent chain")
	// ErrReversedRange is returned when from is newer than to.
	ErrReversedRange = errors.New("reversed range")
	// ErrSummaryCount is returned, wrapped with the counts, when the
	// summaries given (Config.Content) are not one per summarized group.
	ErrSummaryCount = errors.New("wrong number of summaries")
)

// RangeEndError is returned when a revision given for an end of the
// range cannot end it: it names no commit (Err wraps
// refs.ErrUnknownRevision, refs.ErrBadRevision, …) or a commit off the
// current branch's first-parent chain (Err is ErrNotOnChain).
type RangeEndError struct {
	// From is true for the range's start (the from argument), false for
	// its end (to).
	From bool
	// Rev is the revision as given.
	Rev string
	// Hash is the commit Rev names; zero when it names none.
	Hash dag.Hash
	// Err is what is wrong with it.
	Err error
}

// Error says which end is wrong and why: "range start: unknown revision
// …", "range end side (1a2b3c4d): not on the current branch's
// first-parent chain (is it on another branch?)".
func (e *RangeEndError) Error() string {
	end := "range end"
	if e.From {
		end = "range start"
	}
	if e.Hash.IsZero() {
		return fmt.Sprintf("%s: %v", end, e.Err)
	}
	return fmt.Sprintf("%s %s (%s): %v (is it on another branch?)", end, e.Rev, e.Hash.Short(), e.Err)
}

// Unwrap returns Err.
func (e *RangeEndError) Unwrap() error { return e.Err }

// Progress describes one summarized group of a range being compressed,
// once its summary is accepted.
type Progress struct {
	// Index and Total count the summarized groups, 1-based.
	Index, Total int
	// Sources is the number of commits the group replaces.
	Sources int
	// Attempts and TokensBefore/After come from the accepted summary.
	Attempts                  int
	TokensBefore, TokensAfter int
}

// Result reports what compressing a range of a branch did
// (tract.CompressRange).
type Result struct {
	// Summaries are the new summary commits, in order.
	Summaries []dag.Hash `json:"summaries"`
	// Sources are the commits the summaries replace.
	Sources []dag.Hash `json:"sources"`
	// Dropped are the note and error commits left out of the new chain.
	Dropped []dag.Hash `json:"dropped"`
	// Replayed is the number of commits after the range re-committed on the
	// new chain.
	Replayed int `json:"replayed"`
	// OldHead and NewHead are the branch tip before and after.
	OldHead dag.Hash `json:"old_head"`
	NewHead dag.Hash `json:"new_head"`
	// Kept are the pinned commits of the range, kept in place, by their
	// hashes before the compress, as Sources are: replayed on the new
	// chain after a summary, they have new hashes there.
	Kept []dag.Hash `json:"kept"`
	// TokensBefore and TokensAfter are the range's estimated sizes before
	// and after: the kept commits' TokensKept in both, plus the summarized
	// commits before and the summaries after. (Progress and each
	// record.Summary count one group's commits and summary alone.)
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	TokensKept   int `json:"tokens_kept"`
	// TokensEstimated is true when the default estimate counted them.
	TokensEstimated bool `json:"tokens_estimated"`
	// Attempts is the total number of summary attempts.
	Attempts int `json:"attempts"`
	// Usage is the model usage of every attempt.
	Usage llm.Usage `json:"usage"`
}

// SummarizeRange summarizes the groups of a range, in order, as
// Summarize does with cfg, and returns the summaries aligned with groups
// (nil for a kept group), adding what they hold up to res: the kept
// groups' tokens (counted with cfg.Tokenizer) to its TokensKept and
// TokensAfter, each summary's tokens, attempts, usage. contents, when
// not nil, are the summaries given, one per summarized group, in order
// (Config.Content). check, when set, checks each summary's text (the
// repository's size limit) once Summarize accepted it. onGroup, when
// set, is called after each summary. It stops at the first failure with
// an error naming the group: "group 2 of 3 (4 commits from 1a2b3c4d):
// …"; nothing is written, so throwing the work away is all there is to do.
func SummarizeRange(ctx context.Context, groups []Group, cfg Config, contents []string, check func(text string) error, onGroup func(Progress), res *Result) ([]*Summary, error) {
	tok := cfg.Tokenizer
	if tok == nil {
		tok = Estimator{}
	}
	n := 0
	for _, g := range groups {
		if !g.Keep {
			n++
		}
	}
	summaries := make([]*Summary, len(groups))
	k := 0
	for i, g := range groups {
		if g.Keep {
			tokens := ItemsTokens(tok, g.Items)
			res.TokensAfter += tokens
			res.TokensKept += tokens
			res.Kept = append(res.Kept, g.Items[0].Hash)
			continue
		}
		k++
		scfg := cfg
		if contents != nil {
			scfg.Content = contents[k-1]
		}
		s, err := Summarize(ctx, g, scfg)
		if err == nil && check != nil {
			err = check(s.Text)
		}
		if err != nil {
			return nil, fmt.Errorf("group %d of %d (%s from %s): %w", k, n,
				english.Count(len(g.Items), "commit", "commits"), g.Items[0].Hash.Short(), err)
		}
		summaries[i] = s
		res.Attempts += s.Attempts
		res.Usage = res.Usage.Add(s.Usage)
		res.TokensAfter += s.TokensAfter
		if onGroup != nil {
			onGroup(Progress{Index: k, Total: n, Sources: len(g.Items), Attempts: s.Attempts, TokensBefore: s.TokensBefore, TokensAfter: s.TokensAfter})
		}
	}
	return summaries, nil
}

// Span is the range to compress on a branch's first-parent chain, as
// FindSpan finds it.
type Span struct {
	// Chain is the branch's first-parent chain, oldest first, and
	// Commits its commits by their hashes.
	Chain   []dag.Hash
	Commits map[dag.Hash]*dag.Commit
	// First and Last are the indexes on Chain of the range's first and
	// last commit.
	First, Last int
}

// FindSpan reads with get the first-parent chain ending at tip, a
// branch's, and finds on it the range from from to to (revisions, read
// by resolve; inclusive): an empty from is the root, an empty to the
// commit keepLast commits before tip. An end that resolve refuses, or
// that is off the chain, is a *RangeEndError; a range that ends before
// it starts wraps ErrReversedRange, and one that keepLast leaves empty
// ErrEmptyRange.
func FindSpan(get dag.Getter, tip dag.Hash, from, to string, keepLast int, resolve func(rev string) (dag.Hash, error)) (*Span, error) {
	sp := &Span{Commits: make(map[dag.Hash]*dag.Commit)}
	if err := dag.WalkFirstParent(get, tip, func(h dag.Hash, c *dag.Commit) error {
		sp.Chain = append(sp.Chain, h)
		sp.Commits[h] = c
		return nil
	}); err != nil {
		return nil, err
	}
	chain := sp.Chain
	slices.Reverse(chain)
	pos := make(map[dag.Hash]int, len(chain))
	for i, h := range chain {
		pos[h] = i
	}
	locate := func(rev string, from bool) (int, error) {
		h, err := resolve(rev)
		if err != nil {
			return 0, &RangeEndError{From: from, Rev: rev, Err: err}
		}
		i, ok := pos[h]
		if !ok {
			return 0, &RangeEndError{From: from, Rev: rev, Hash: h, Err: ErrNotOnChain}
		}
		return i, nil
	}
	var err error
	sp.First, sp.Last = 0, len(chain)-1-keepLast
	if from != "" {
		if sp.First, err = locate(from, true); err != nil {
			return nil, err
		}
	}
	if to != "" {
		if sp.Last, err = locate(to, false); err != nil {
			return nil, err
		}
	}
	switch {
	case keepLast < 0:
		return nil, fmt.Errorf("KeepLast(%d): it must be 0 or more", keepLast)
	case sp.Last < 0:
		return nil, fmt.Errorf("%w: the chain has %s and %s kept out of the range", ErrEmptyRange,
			english.Count(len(chain), "commit", "commits"), english.Count(keepLast, "is", "are"))
	case sp.First > sp.Last:
		return nil, fmt.Errorf("%w: its start %s is newer than its end %s", ErrReversedRange, chain[sp.First].Short(), chain[sp.Last].Short())
	}
	return sp, nil
}
