package retry

import "slices"

// StageContext is what a stage sees of the pipeline run when it executes.
// Stages are numbered as users see them: 1..n, with the source as 0. The
// StageContext belongs to one execution; its slices are copies that the
// stage may keep or change without affecting the run (the values in them
// are shallow copies).
type StageContext[T any] struct {
	// Input is the latest output of the stage before this one (the
	// source's, for stage 1).
	Input T

	// Base is the source's first output in this run; a retried source
	// does not change it.
	Base T

	// Stage is this stage's 1-based number and Name its name ("" when
	// unnamed).
	Stage int
	Name  string

	// Try is the attempt number within the active retry context when this
	// stage is part of it (1 + the retry requests so far), and 1 otherwise.
	Try int

	// Tries lists the retried stage's outputs within the active retry
	// context, oldest first; nil when this stage is not part of one. For
	// the requesting stage it starts with the output it first rejected and
	// ends with its current Input, so len(Tries) == Try. For the retried
	// stage it holds its own earlier outputs, so len(Tries) == Try-1.
	Tries []T

	// Requester is the stage that opened the active retry context when
	// this stage is part of it: Stage when this stage asked for the retry,
	// Stage+1 when this stage is the one being retried. It is 0 otherwise.
	Requester int

	// Hint is the hint given by the stage after this one when it asked for
	// this re-run. Only the retried stage sees it: it is nil on every other
	// execution, the requesting stage's re-run included.
	Hint any

	// Outputs holds the latest output of every earlier stage: Outputs[0]
	// is the source's, Outputs[k] stage k's, and Outputs[Stage-1] is Input.
	Outputs []T

	contexts []ContextTries[T]
}

// RetriedByDownstream reports whether this execution is a re-run the
// stage after this one asked for (with Hint): the question a stage asks
// before deciding whether it has seen its input before.
func (sc *StageContext[T]) RetriedByDownstream() bool {
	return sc.Requester != 0 && sc.Requester == sc.Stage+1
}

// ContextTries is one retry context of a run, as returned by
// StageContext.AllTries: stage Requester asked stage Retried (0 for the
// source) for new outputs, and Tries lists the retried stage's outputs in
// that context, oldest first, starting with the one first rejected.
type ContextTries[T any] struct {
	Requester int
	Retried   int
	Tries     []T
}

// AllTries returns every retry context of the run so far, the active one
// included, in the order they were opened. It is computed when called, so
// a stage that does not need it pays nothing.
func (sc *StageContext[T]) AllTries() []ContextTries[T] {
	if len(sc.contexts) == 0 {
		return nil
	}
	all := make([]ContextTries[T], len(sc.contexts))
	for k, c := range sc.contexts {
		c.Tries = slices.Clone(c.Tries)
		all[k] = c
	}
	return all
}

// RetryUpstream is RetryUpstream[T](hint): it asks to re-run the stage
// before this one, which will see hint.
func (sc *StageContext[T]) RetryUpstream(hint any) StageResult[T] {
	return RetryUpstream[T](hint)
}
