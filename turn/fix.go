package turn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/retry"
)

// fixable reports whether the verdict vd on answer a is a fix the turn
// accepts (see acceptFix). A fix of an answer that makes tool calls is
// refused: its text is the calls' readable form, which a fix cannot give
// back as calls, so the answer is rejected with what the fixing validator
// found wrong; so is an answer a fix would leave blank. A fix larger than the repository can hold is an error: the
// validator gave what no commit can keep.
func (g *generation) fixable(a answer, vd retry.Verdict) (retry.Verdict, bool, error) {
	switch {
	case vd.Fixed == "":
		return vd, false, nil
	case len(a.calls) > 0:
		return retry.Verdict{Diagnosis: vd.Diagnosis, Type: retry.FailureVerification}, false, nil
	case strings.TrimSpace(vd.Fixed) == "":
		// An empty answer is never accepted; nor is a fix that empties one.
		return retry.Verdict{Diagnosis: fmt.Sprintf("%s\n(the fix by %s left the answer empty)", vd.Diagnosis, vd.FixedBy),
			Type: retry.FailureVerification}, false, nil
	}
	if n, limit := int64(len(vd.Fixed)), g.r.Limits().MessageSize; n > limit {
		return retry.Verdict{}, false, fmt.Errorf("the fix by %s: %w", vd.FixedBy, &ingest.TooLargeError{
			What: fmt.Sprintf("the fixed answer of attempt %d", g.attempt), Size: n, Limit: limit, Which: ingest.LimitMessageSize})
	}
	return vd, true, nil
}

// acceptFix accepts answer a as a validator fixed it (vd.Fixed), with no
// other model call. It commits a, as the model gave it, as the attempt
// (not valid, its diagnosis what the validator found wrong, its fixed
// record naming the validator), then commits the fixed answer in its
// place the way purify commits a clean answer: on the restore point with
// purify (the turn's failed attempts leave the branch too), else on the
// attempt's parent (the attempts before it stay). The answer as given
// stays off the branch, in 'log --all'; the fixed answer's fixed record
// names it. Each commit is its own transaction, as for any step.
func (g *generation) acceptFix(ctx context.Context, a answer, vd retry.Verdict) (bool, string, error) {
	parent := g.tip
	meta := attemptMeta(g.attempt, a, true, false, vd.Diagnosis, nil)
	meta.Task, meta.DurationMS, meta.Restore, meta.Validators = g.cfg.task, g.elapsed(), g.freshRestore(), g.specs()
	meta.Fix = &record.Fix{By: vd.FixedBy}
	what := fmt.Sprintf("answer of attempt %d, which %s fixed", g.attempt, vd.FixedBy)
	original, err := g.extend(ctx, Pending{dag.KindMessage, dag.RoleAssistant, nonEmpty(a.text, "(empty answer)"), meta, what})
	if err != nil {
		return false, "", err
	}
	g.lastCommit = original
	at := Attempt{Number: g.attempt, Max: g.maxAttempt(), OK: true, Text: a.text, Commit: original, Usage: a.usage,
		FixedBy: vd.FixedBy, Fixed: vd.Fixed}
	g.res.History = append(g.res.History, at)
	if g.cfg.onAttempt != nil {
		g.cfg.onAttempt(at)
	}

	fixed := a
	fixed.text = vd.Fixed
	fmeta := attemptMeta(g.attempt, fixed, true, true, "", nil)
	p := provenance(g.attempt, g.restore, g.res)
	fmeta.Attempt, fmeta.Provenance, fmeta.Task, fmeta.Validators = 0, &p, g.cfg.task, g.specs() // the fixed copy is no attempt
	fmeta.Fix = &record.Fix{By: vd.FixedBy, Original: original}
	base, msg := parent, fmt.Sprintf("fix: answer of attempt %d fixed by %s", g.attempt, vd.FixedBy)
	hid := g.cfg.purify && parent != g.restore // failed attempts (or a fresh retry's copies) go too
	if g.cfg.purify {
		base = g.restore
	}
	if hid {
		msg = purifyMessage(g.attempt-1) + "; " + msg[len("fix: "):]
	}
	chain := []Pending{{dag.KindMessage, dag.RoleAssistant, vd.Fixed, fmeta, keptAcceptedAnswer}}
	if g.cfg.purify { // the answer's tool steps go back on the restore point first, as purify does
		chain = append(pendingOf(g.steps), chain...)
	}
	hs, err := g.r.Rewind(ctx, g.tip, base, msg, chain)
	if err != nil {
		if errors.Is(err, refs.ErrReferenceChanged) {
			g.res.Text = vd.Fixed // kept off the branch: see fail
		}
		return false, "", err
	}
	h := hs[len(hs)-1]
	if g.cfg.purify {
		g.steps = recommitted(g.steps, hs)
	}
	g.tip, g.lastCommit, g.last, g.fixed = h, h, fixed, &fixed
	g.res.FixedBy, g.res.Original = vd.FixedBy, original
	g.res.Purified = g.res.Purified || hid
	g.record(ctx, h)
	return true, "", nil
}

// reset is the turn's Steering.Reset: purify, unless a fix already put
// the accepted answer on the restore point (see acceptFix).
func (g *generation) reset(ctx context.Context, restore dag.Hash) error {
	if g.fixed != nil {
		return nil
	}
	return g.purify(ctx, restore)
}
