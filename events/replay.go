package events

import (
	"cmp"
	"slices"
	"time"

	"github.com/tractdag/tract/dag"
)

// Trace is a validated turn regenerated from its commits.
type Trace struct {
	// Task is the turn's task id ("" when it has none).
	Task string
	// Events are the turn's events, in order.
	Events []Event
	// Restore is the turn's restore point.
	Restore dag.Hash
	// Steps are the turn's commits, in the order they were written.
	Steps []*Step

	sum *deriver
}

// Start is when the turn's first attempt started.
func (t *Trace) Start() time.Time { return t.sum.start }

// Attempts is the number of attempts the turn made, every round.
func (t *Trace) Attempts() int { return t.sum.attempts }

// Resolution says how the turn ended (ResolvedSuccess, …).
func (t *Trace) Resolution() string { return t.sum.resolution() }

// Escalated reports a turn that escalated at least once.
func (t *Trace) Escalated() bool { return t.sum.escalated() }

// Answers are the turn's answers as its validators judged them:
// accepted, the one they accepted (the clean copy purify committed on the
// branch when there is one: the same text; zero when none was
// accepted), and rejected, those they rejected, in order (an answer
// whose validator could not run is neither). judged is false for a turn
// no validator judged.
func (t *Trace) Answers() (accepted dag.Hash, rejected []dag.Hash, judged bool) {
	var clean dag.Hash
	for _, s := range t.Steps {
		m := &s.Meta
		switch {
		case s.Kind == StepAccepted:
			clean = s.Hash
		case s.Kind != StepAttempt || m.Valid == nil:
		case *m.Valid:
			accepted = s.Hash
		case m.Failure != nil: // not a validator that could not run
			rejected = append(rejected, s.Hash)
		}
		judged = judged || m.Valid != nil
	}
	if !clean.IsZero() {
		accepted = clean
	}
	return accepted, rejected, judged
}

// Replay regenerates validated turns from their steps, given in any
// order (a repository's commits, orphans included), ordered by the time
// of their first event: the events of each are those Live reported while
// the turn ran. Copies that a compress replayed onto a new chain count
// once.
func Replay(steps []*Step) []*Trace {
	steps, parentOf := dropReplayed(steps)
	// Group the steps by the turn's restore point: an attempt's chain of
	// answers and steering goes back to it, and what ends the turn names
	// it (a provenance) or hangs off it.
	byHash := make(map[dag.Hash]*Step, len(steps))
	for _, s := range steps {
		byHash[s.Hash] = s
	}
	restore := make(map[dag.Hash]dag.Hash, len(steps))
	var restoreOf func(s *Step) dag.Hash
	restoreOf = func(s *Step) dag.Hash {
		if r, ok := restore[s.Hash]; ok {
			return r
		}
		r := parentOf(s)
		switch p := byHash[r]; {
		case s.Meta.Restore != nil:
			r = *s.Meta.Restore
		case s.Kind == StepAccepted || s.Kind == StepEnd:
			if pr := s.Meta.Provenance.Restore; !pr.IsZero() {
				r = pr
			}
		case s.firstAttempt() || p == nil:
		case s.Kind == StepModelFailure && p.Kind != StepSteering:
			// Purify rewound the attempts: the error commit hangs off
			// the restore point.
		default:
			r = restoreOf(p)
		}
		restore[s.Hash] = r
		return r
	}
	groups := make(map[dag.Hash][]*Step)
	var order []dag.Hash
	for _, s := range steps {
		r := restoreOf(s)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], s)
	}
	var out []*Trace
	for _, r := range order {
		g := groups[r]
		slices.SortStableFunc(g, func(a, b *Step) int {
			return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.seq(), b.seq()))
		})
		var cur *Trace
		for _, s := range g {
			if cur == nil || s.firstAttempt() && cur.sum.attempts > 0 {
				if cur != nil {
					cur.sum.end()
				}
				cur = &Trace{Restore: r}
				tr := cur
				tr.sum = &deriver{emit: func(e Event) { tr.Events = append(tr.Events, e) }}
				out = append(out, cur)
			}
			cur.sum.add(s)
			cur.Steps = append(cur.Steps, s)
		}
		cur.sum.end()
	}
	for _, tr := range out {
		tr.Task = tr.sum.task
	}
	out = slices.DeleteFunc(out, func(tr *Trace) bool { return len(tr.Events) == 0 })
	slices.SortStableFunc(out, func(a, b *Trace) int { return a.Events[0].Timestamp.Compare(b.Events[0].Timestamp) })
	return out
}

// dropReplayed keeps one step of each content: a compress replays the
// commits after its range onto the new chain with the same kind, role,
// text, metadata and time, and a turn it replayed is still one turn, with
// the attempts it had. The first of the copies stays, in the order of
// steps; parentOf reads a parent that is a dropped copy as the kept one,
// so a replayed chain of attempts and steering still hangs together. (The
// restore point a replayed commit's metadata names is the one before the
// replay, as the original's is: both group alike.)
func dropReplayed(steps []*Step) (kept []*Step, parentOf func(*Step) dag.Hash) {
	first := make(map[content]dag.Hash, len(steps)) // content → the kept step
	same := make(map[dag.Hash]dag.Hash)             // a dropped copy → the kept step
	for _, s := range steps {
		if k, ok := first[s.content]; ok {
			same[s.Hash] = k
			continue
		}
		first[s.content] = s.Hash
		kept = append(kept, s)
	}
	return kept, func(s *Step) dag.Hash {
		if k, ok := same[s.Parent]; ok {
			return k
		}
		return s.Parent
	}
}
