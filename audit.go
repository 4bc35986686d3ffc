package tract

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/events"
	"github.com/tractdag/tract/internal/progress"
	"github.com/tractdag/tract/store"
)

// The events and statistics of validated turns (see package events).
type (
	// Event is one step of a validated turn (Chat, Generate), as OnEvent
	// reports it live and Tract.Events regenerates it from the commits.
	Event = events.Event
	// EventType names what an Event reports.
	EventType = events.EventType
	// Stats summarises the tasks of a repository (see Tract.Stats).
	Stats = events.Stats
	// TaskStats is one task's line of Stats.
	TaskStats = events.TaskStats
	// DiagnosisCount is a normalised diagnosis and how many failed
	// attempts gave it.
	DiagnosisCount = events.DiagnosisCount
)

// The events of a validated turn, the statuses of an EventAttempt and the
// resolutions of an EventResolved (see package events).
const (
	EventAttempt          = events.EventAttempt
	EventFeedbackInjected = events.EventFeedbackInjected
	EventEscalated        = events.EventEscalated
	EventUserResponse     = events.EventUserResponse
	EventResolved         = events.EventResolved

	StatusSuccess = events.StatusSuccess
	StatusFailed  = events.StatusFailed

	ResolvedSuccess   = events.ResolvedSuccess
	ResolvedEscalated = events.ResolvedEscalated
	ResolvedFailed    = events.ResolvedFailed
	ResolvedCancelled = events.ResolvedCancelled
	ResolvedSkipped   = events.ResolvedSkipped
	ResolvedAborted   = events.ResolvedAborted

	// NoTask is the Task of the line of Stats.Tasks that sums up the
	// turns without a task id.
	NoTask = events.NoTask
)

// EventFilter selects the events Tract.Events returns.
type EventFilter struct {
	// Task keeps only the events of turns with this task id ("": all).
	Task string
	// Since keeps only the events at or after this time (zero: all).
	Since time.Time
}

// Events regenerates the events of every validated turn in the
// repository from its commits, orphans included, oldest first: the
// stream OnEvent reported live for the same turns. It reads the
// repository a page of commits per short read transaction; its memory
// grows with the number of commits of turns, not with their texts.
func (t *Tract) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	traces, err := t.traces(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	out := []Event{}
	for _, tr := range traces {
		if f.Task != "" && tr.Task != f.Task {
			continue
		}
		for _, e := range tr.Events {
			if f.Since.IsZero() || !e.Timestamp.Before(f.Since) {
				out = append(out, e)
			}
		}
	}
	// Turns run one after another come out in order already; turns run
	// at the same time in several processes interleave by time.
	slices.SortStableFunc(out, func(a, b Event) int { return a.Timestamp.Compare(b.Timestamp) })
	return out, nil
}

// StatsFilter selects the tasks Tract.Stats summarises.
type StatsFilter struct {
	// TaskPrefix keeps the tasks whose id starts with it ("": all).
	TaskPrefix string
	// Since keeps the turns whose first attempt started at or after it
	// (zero: all).
	Since time.Time
	// Progress, when set, receives the commits read so far (see Progress).
	Progress ProgressFunc
}

// Stats summarises the tasks in the repository (see Stats). It reads the
// commits as Events does, a page per short read transaction.
func (t *Tract) Stats(ctx context.Context, f StatsFilter) (*Stats, error) {
	p := f.Progress.start("commits", 0)
	traces, err := t.traces(ctx, p)
	p.Stop()
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return events.Summarize(traces, events.Filter{TaskPrefix: f.TaskPrefix, Since: f.Since}), nil
}

// traces regenerates every validated turn in the repository from its
// commits (see events.Replay).
func (t *Tract) traces(ctx context.Context, p *progress.Counter) ([]*events.Trace, error) {
	steps, err := t.steps(ctx, p)
	if err != nil {
		return nil, err
	}
	return events.Replay(steps), nil
}

// steps reads every commit of a validated turn in the repository,
// reachable or not: the shape of every commit in one read transaction,
// then the commits with metadata a page per transaction.
func (t *Tract) steps(ctx context.Context, p *progress.Counter) ([]*events.Step, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var hs []Hash
	err := t.view(ctx, func(tx store.Tx) error {
		g, err := store.LoadGraph(tx)
		if err != nil {
			return err
		}
		for i := range g.Len() {
			if g.HasMeta(i) {
				hs = append(hs, g.Hash(i))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.SetTotal(int64(len(hs)))
	var out []*events.Step
	page := func(tx store.Tx) ([]*events.Step, bool, error) {
		n := min(pageSize*4, len(hs))
		cs, err := store.ReadCommitsStored(tx, hs[:n])
		if err != nil {
			return nil, false, err
		}
		var steps []*events.Step
		for i, h := range hs[:n] {
			c := cs[i]
			p.Add(1)
			if s, ok, err := stepOf(tx, h, c); err != nil {
				return nil, false, err
			} else if ok {
				steps = append(steps, s)
			}
		}
		hs = hs[n:]
		return steps, len(hs) > 0, nil
	}
	err = walkPages(ctx, t, page, func(s *events.Step) bool { out = append(out, s); return true })
	return out, err
}

// stepOf reads commit h (c), read in tx, as a step of a validated turn
// (see events.StepOf); ok is false for any other commit.
func stepOf(tx store.Tx, h Hash, c *dag.Commit) (s *events.Step, ok bool, err error) {
	return events.StepOf(h, c, func() (string, error) { return commitText(tx, c) })
}
