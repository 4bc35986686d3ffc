package tract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// ReflogEntry is one move of a ref, as Reflog lists it.
type ReflogEntry struct {
	// Ref is the ref's full name ("HEAD", "refs/heads/main", "STRANDED").
	Ref string `json:"ref"`
	// Index counts back from the newest move, which is 0, as in git's
	// REF@{N}.
	Index int `json:"index"`
	// Old is where the ref pointed before (zero for a new ref); New where
	// it points after.
	Old Hash `json:"old"`
	New Hash `json:"new"`
	// Action is the operation that moved the ref ("commit", "purify",
	// "reset", "import", "conflict", …).
	Action string `json:"action"`
	// Message describes the move, e.g. "purify: hid 2 failed attempts".
	Message string `json:"message"`
	// Time is when the move happened.
	Time time.Time `json:"time"`
}

// RefName returns the name a revision gives the entry's ref (as in
// RefName()+"@{N}"): a branch by its short name, unless that name is
// reserved for another ref (a branch named STRANDED before the name was
// reserved), and any other ref by its full name.
func (e ReflogEntry) RefName() string {
	if short, ok := strings.CutPrefix(e.Ref, "refs/heads/"); ok && refs.ValidateBranchName(short) == nil {
		return short
	}
	return e.Ref
}

// ReflogOption configures Reflog.
type ReflogOption func(*reflogConfig)

type reflogConfig struct {
	limit int
}

// ReflogLimit makes Reflog return at most the newest n moves (0: all),
// reading no more of the reflog than those.
func ReflogLimit(n int) ReflogOption { return func(c *reflogConfig) { c.limit = max(n, 0) } }

// Reflog returns the moves of a ref, newest first, as 'git reflog' does:
// ref is "HEAD" (also when empty), a branch name, a full ref name (else a
// branch whose name starts with "refs/"), or refs.Stranded for the
// results conflicts kept off their branches. A
// branch that exists but never moved has an empty reflog; a name that is
// neither a ref nor has a reflog is an error wrapping ErrBranchNotFound.
// ReflogLimit reads only the newest moves.
func (t *Tract) Reflog(ctx context.Context, ref string, opts ...ReflogOption) ([]ReflogEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cfg reflogConfig
	for _, o := range opts {
		o(&cfg)
	}
	if ref == "" {
		ref = refs.HEAD
	}
	var out []ReflogEntry
	err := t.view(ctx, func(tx store.Tx) error {
		read := tx.Reflog
		if cfg.limit > 0 {
			// A reflog grows with every move of its ref: read its end only.
			read = func(name string) ([]refs.Entry, error) { return store.ReflogTail(tx, name, cfg.limit) }
		}
		// The first ref the name may mean that has a reflog, or exists
		// (a branch that never moved has an empty one).
		var es []refs.Entry
		var full string
		for _, full = range refs.ReflogRefs(ref) {
			var err error
			if es, err = read(full); err != nil {
				return err
			}
			if len(es) > 0 || full == refs.HEAD || full == refs.Stranded {
				break
			}
			if _, err = tx.Ref(full); err == nil {
				break
			} else if !isNotFound(err) {
				return err
			}
			full = ""
		}
		if full == "" {
			return fmt.Errorf("%w: %q has no reflog", ErrBranchNotFound, ref)
		}
		out = make([]ReflogEntry, len(es))
		for i, e := range slices.Backward(es) {
			out[len(es)-1-i] = ReflogEntry{Ref: full, Index: len(es) - 1 - i, Old: e.Old, New: e.New,
				Action: e.Action, Message: e.Message, Time: e.Time}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reflog: %w", err)
	}
	return out, nil
}
