package retry

import (
	"context"
	"fmt"
)

// BestOfN returns a stage that collects n candidates from its upstream and
// passes on the one with the highest score (the earliest among equals). It
// asks its upstream for another output until the retry context holds n of
// them in Tries, so n-1 retries must fit in the per-context limit
// (WithMaxRetriesPerContext; the default allows n up to 11). When the stage
// after it asks it to retry, it starts a new round, forwarding that stage's
// hint upstream; the round's first candidate is the upstream's latest output.
//
// Candidates collected so far are lost if the upstream stage itself asks for
// a retry, since that replaces the retry context: the round starts over.
// The stage is named "best of N". It fails when n < 1 or score is nil.
func BestOfN[T any](n int, score func(T) float64) Stage[T] {
	return NewStage(fmt.Sprintf("best of %d", n), func(_ context.Context, sc *StageContext[T]) (StageResult[T], error) {
		if n < 1 || score == nil {
			return StageResult[T]{}, fmt.Errorf("best of %d: need n >= 1 and a score function", n)
		}
		var candidates []T
		switch {
		case sc.Requester == sc.Stage:
			candidates = sc.Tries // ends with Input
		case sc.RetriedByDownstream():
			// Retried by the next stage: every candidate of the last
			// round was seen; ask for a new round.
			if n > 1 {
				return sc.RetryUpstream(sc.Hint), nil
			}
			candidates = []T{sc.Input}
		default:
			candidates = []T{sc.Input}
		}
		if len(candidates) < n {
			return sc.RetryUpstream(nil), nil
		}
		best, bestScore := candidates[0], score(candidates[0])
		for _, c := range candidates[1:] {
			if s := score(c); s > bestScore {
				best, bestScore = c, s
			}
		}
		return Output(best), nil
	})
}

// ValidatorStage returns a stage that runs v on its input: when v accepts
// it, the input is passed on unchanged; otherwise the stage asks its
// upstream to retry, with v's diagnosis (or "validation failed" when it is
// empty) as a string hint. An error from v, meaning it could not run, stops
// the pipeline. The stage is named v.Name(); v must not be nil.
func ValidatorStage(v Validator) Stage[string] {
	return NewStage(v.Name(), func(ctx context.Context, sc *StageContext[string]) (StageResult[string], error) {
		ok, diagnosis, err := v.Validate(ctx, sc.Input)
		if err != nil {
			return StageResult[string]{}, fmt.Errorf("validator %s: %w", v.Name(), err)
		}
		if ok {
			return Output(sc.Input), nil
		}
		if diagnosis == "" {
			diagnosis = "validation failed"
		}
		return sc.RetryUpstream(diagnosis), nil
	})
}
