package repl

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// rewind is a /rewind waiting for its "yes".
type rewind struct {
	// from is the branch tip when /rewind read it; to where it moves.
	from, to tract.Hash
	// what names what is dropped, for the reflog and the messages.
	what string
}

// startRewind is /rewind [last|ID]: it says what it would do and waits
// for "yes".
func (s *Session) startRewind(ctx context.Context, arg string) error {
	if s.mode != modeNormal {
		return fmt.Errorf("%w: /rewind works in the normal mode; leave %s mode first", ErrModeConflict, s.Mode())
	}
	var rw *rewind
	if arg == "" || arg == "last" {
		// Unlike /retry, /rewind takes a lone user message too (a turn
		// that ended before its answer or error): dropping it is what
		// the user asks.
		turn, err := s.cfg.Tract.LastTurn(ctx)
		if errors.Is(err, tract.ErrNoTurn) {
			return fmt.Errorf("%w: %w; /rewind ID drops the commits from ID on", ErrNothingToRewind, err)
		}
		if err != nil {
			return err
		}
		in := &interaction{turn}
		rw = &rewind{from: in.Tip, to: in.Base, what: fmt.Sprintf("the %s %s", in.what(), in.First.Short())}
	} else {
		var err error
		if rw, err = s.rewindTo(ctx, arg); err != nil {
			return err
		}
	}
	s.confirm = rw
	// The question is the prompt's (RewindQuestion), or Run's without a
	// prompt: asked once.
	s.printf("rewind moves the branch from %s back to %s, dropping %s.\nNothing is deleted: 'tract log --all' keeps it and 'tract reset --soft %s' undoes it.\n",
		rw.from.Short(), rw.target(), rw.what, rw.from.Short())
	return nil
}

// rewindTo plans a rewind to before the commit rev, which must be on the
// branch.
func (s *Session) rewindTo(ctx context.Context, rev string) (*rewind, error) {
	target, err := s.cfg.Tract.Show(ctx, rev)
	if err != nil {
		return nil, err
	}
	cs, err := s.cfg.Tract.Log(ctx)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if c.Hash != target.Hash {
			continue
		}
		return &rewind{from: cs[0].Hash, to: parent(c), what: fmt.Sprintf("%s from %s on", english.Count(i+1, "commit", "commits"), c.Hash.Short())}, nil
	}
	return nil, fmt.Errorf("%w: %s is not on the branch", ErrNothingToRewind, target.Hash.Short())
}

// target names where the rewind moves the branch.
func (rw *rewind) target() string {
	if rw.to.IsZero() {
		return "the start (no commits)"
	}
	return rw.to.Short()
}

// doRewind runs a confirmed rewind: a compare-and-swap soft reset, to the
// unborn branch when the first commit is dropped.
func (s *Session) doRewind(ctx context.Context, rw *rewind) error {
	opts := []tract.ResetOption{tract.ResetIf(rw.from), tract.ResetReflog("reset", "rewind: dropped "+rw.what)}
	var err error
	if rw.to.IsZero() {
		_, err = s.cfg.Tract.ResetUnborn(ctx, tract.Soft, opts...)
	} else {
		_, err = s.cfg.Tract.Reset(ctx, rw.to.String(), tract.Soft, opts...)
	}
	var conflict *tract.ConflictError
	if errors.As(err, &conflict) {
		return fmt.Errorf("%w since /rewind (another process committed): nothing changed: %w", ErrBranchMoved, err)
	}
	if err != nil {
		return err
	}
	s.printf("rewound to %s; to undo: tract reset --soft %s\n", rw.target(), rw.from.Short())
	return nil
}
