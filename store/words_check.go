package store

import (
	"context"
	"errors"
)

// WordIndexChecker is implemented by stores other than the bbolt file
// (whose Fsck checks its own index) that keep a word index Fsck checks
// against the commits and, when it does not match them, rebuilds.
type WordIndexChecker interface {
	// CheckWordIndex compares the word index with the commits' words
	// (CommitWords). problem says what is wrong ("" when nothing is);
	// present is false when the store holds no index.
	CheckWordIndex(ctx context.Context) (problem string, present bool, err error)
	// RebuildWordIndex builds the index afresh from the commits. A store
	// it may not write to fails with an error wrapping ErrReadOnly.
	RebuildWordIndex(ctx context.Context) error
}

// fsckWordIndex checks the word index of s, when it keeps one Fsck checks
// (WordIndexChecker), and rebuilds one that does not match the commits
// when nothing else is wrong, as the file's Fsck does.
func fsckWordIndex(ctx context.Context, s Store, r *FsckReport) error {
	c, ok := s.(WordIndexChecker)
	if !ok {
		return nil
	}
	problem, present, err := c.CheckWordIndex(ctx)
	switch {
	case err != nil:
		return err
	case !present:
		r.WordIndex = WordIndexAbsent
		return nil
	case problem == "":
		r.WordIndex = WordIndexOK
		return nil
	}
	r.WordIndexProblem = problem
	if len(r.Problems) > 0 {
		// Damage elsewhere: the index may well be right about what the
		// store held.
		r.WordIndex = WordIndexWrong
		return nil
	}
	err = c.RebuildWordIndex(ctx)
	switch {
	case errors.Is(err, ErrReadOnly):
		r.WordIndex = WordIndexWrong
		r.add("word index", "%s (a check with write access rebuilds it)", problem)
		return nil
	case err != nil:
		return err
	}
	r.WordIndex = WordIndexRebuilt
	return nil
}
