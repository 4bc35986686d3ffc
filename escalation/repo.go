package escalation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// TakeUp deletes, in tx, the ref of escalation id, whose answer its turn
// has taken up, in the transaction that commits the turn's note on the
// branch (a note kept off the branch by a conflict takes nothing up: the
// escalation stays answered, for a resume once the branch is back at the
// turn's tip). The ref's reflog records it, at now; a ref gone already
// (another process took it up) is left as it is.
func TakeUp(tx store.Tx, id string, now time.Time) error {
	name := Ref(id)
	r, err := tx.Ref(name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := tx.DeleteRef(name); err != nil {
		return err
	}
	return tx.AppendReflog(name, refs.Entry{Old: r.Hash, Time: now, Action: refs.ActionEscalation,
		Message: "escalation: answer taken up by its turn"})
}

// FreeID returns a new id (NewID) that no escalation of tx has, or had.
func FreeID(tx store.Tx) (string, error) {
	for range 16 {
		id, err := NewID()
		if err != nil {
			return "", err
		}
		name := Ref(id)
		if _, err := tx.Ref(name); !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return "", err
			}
			continue
		}
		if es, err := tx.Reflog(name); err != nil || len(es) > 0 {
			if err != nil {
				return "", err
			}
			continue
		}
		return id, nil
	}
	return "", errors.New("escalation id: no free id after 16 tries")
}

// LookUp reads escalation id of tx: from its ref, or, when the turn took
// it up, from the ref's reflog (a *TakenUpError). An id that names none is
// a *NotFoundError; one that cannot name one, ErrBadID.
func LookUp(tx store.Tx, id string) (*Escalation, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	id = NormalID(id)
	name := Ref(id)
	r, err := tx.Ref(name)
	if err == nil {
		return Read(tx, id, r.Hash)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	es, err := tx.Reflog(name)
	if err != nil {
		return nil, err
	}
	if n := len(es); n > 0 && es[n-1].New.IsZero() && !es[n-1].Old.IsZero() {
		if e, err := Read(tx, id, es[n-1].Old); err == nil && e.Answer != nil {
			return nil, &TakenUpError{ID: id, Answer: *e.Answer}
		}
	}
	return nil, &NotFoundError{ID: id}
}

// Read reads escalation id of tx, whose ref names h: its note, or the
// answer on it.
func Read(tx store.Tx, id string, h dag.Hash) (*Escalation, error) {
	c, err := tx.Commit(h)
	if err != nil {
		return nil, fmt.Errorf("escalation %s: %w", id, err)
	}
	e := &Escalation{ID: id, State: Pending}
	if a, ok := record.Field[record.EscalationAnswer](c.Meta, record.KeyEscalationAnswer); ok {
		e.State = Answered
		e.Answer = &Answer{Resolution: a.Resolution, Instruction: a.Instruction, By: a.By, At: c.Time, Commit: h}
		h = c.Parent()
		if c, err = tx.Commit(h); err != nil {
			return nil, fmt.Errorf("escalation %s: %w", id, err)
		}
	}
	w, ok := record.Field[record.WaitingEscalation](c.Meta, record.KeyWaitingEscalation)
	if !ok {
		return nil, fmt.Errorf("escalation %s: commit %s holds no escalation", id, h.Short())
	}
	text, err := store.CommitText(tx, c)
	if err != nil {
		return nil, err
	}
	e.Waiting, e.Commit, e.Tip, e.Created, e.Question = w, h, c.Parent(), c.Time, text
	e.Branch = w.Branch
	if b, ok := refs.BranchName(w.Branch); ok {
		e.Branch = b
	}
	e.Task, e.Reason, e.Round, e.Attempts, e.MaxAttempts, e.TotalAttempts = w.Task, w.Reason, w.Round, w.Attempts, w.MaxAttempts, w.TotalAttempts
	e.Failures, e.LastAnswer = w.Failures, w.LastAnswer
	if e.Failures == nil {
		e.Failures = []record.Failure{}
	}
	return e, nil
}

// WhoAmI names the person answering in this process: user@host, or what
// of it is known.
func WhoAmI() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	switch {
	case name != "" && host != "":
		return name + "@" + host
	case name != "":
		return name
	}
	return host
}

// Meta is the metadata of an escalation's note or answer: v under key,
// and the turn's task.
func Meta(task, key string, v any) ([]byte, error) {
	m := map[string]any{key: v}
	if task != "" {
		m[record.KeyTask] = task
	}
	return json.Marshal(m)
}

// Sort orders es oldest first (by id when as old).
func Sort(es []Escalation) {
	slices.SortFunc(es, func(a, b Escalation) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
}

// List reads the escalations of tx that wait: pending, or answered and
// not yet taken up by their turn; oldest first.
func List(tx store.Tx) ([]Escalation, error) {
	all, err := tx.Refs()
	if err != nil {
		return nil, err
	}
	out := []Escalation{}
	for _, r := range all {
		id, ok := IDOf(r.Name)
		if !ok {
			continue
		}
		e, err := Read(tx, id, r.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	Sort(out)
	return out, nil
}

// NoteFunc writes, in tx, a note on parent by role with text and the
// metadata meta (tract's own, canonical or not), and returns its hash:
// the repository's checks and limits are the caller's.
type NoteFunc func(tx store.Tx, parent dag.Hash, role dag.Role, text string, meta []byte) (dag.Hash, error)

// Record records, in tx, the escalation w of a turn whose last attempt
// is tip: it gives w a free id, writes the escalation's note on tip
// with note, and sets the ref refs/escalations/ID to it, its reflog
// entry at now. It returns the escalation, pending.
func Record(tx store.Tx, tip dag.Hash, w record.WaitingEscalation, now time.Time, note NoteFunc) (*Escalation, error) {
	var err error
	if w.ID, err = FreeID(tx); err != nil {
		return nil, err
	}
	meta, err := Meta(w.Task, record.KeyWaitingEscalation, w)
	if err != nil {
		return nil, err
	}
	h, err := note(tx, tip, dag.RoleSystem, Question(w), meta)
	if err != nil {
		return nil, err
	}
	name := Ref(w.ID)
	if err := tx.SetRef(refs.Ref{Name: name, Hash: h}); err != nil {
		return nil, err
	}
	if err := tx.AppendReflog(name, refs.Entry{New: h, Time: now, Action: refs.ActionEscalation,
		Message: fmt.Sprintf("escalation: %s after %d attempts, waiting for an answer", w.Reason, w.TotalAttempts)}); err != nil {
		return nil, err
	}
	return Read(tx, w.ID, h)
}

// Give answers, in tx, the escalation a.ID with a: the answer is a note
// (written with note) on the escalation's note, and the ref moves to it,
// its reflog entry at now, only if the escalation is still pending. An
// escalation answered already, taken up by its turn or not, is an
// *AnsweredError naming the answer that won. It returns the escalation,
// answered.
func Give(tx store.Tx, a record.EscalationAnswer, now time.Time, note NoteFunc) (*Escalation, error) {
	e, err := LookUp(tx, a.ID)
	var taken *TakenUpError
	switch {
	case errors.As(err, &taken):
		return nil, &AnsweredError{ID: a.ID, Answer: taken.Answer, TakenUp: true}
	case err != nil:
		return nil, err
	case e.Answer != nil:
		return nil, &AnsweredError{ID: a.ID, Answer: *e.Answer}
	}
	meta, err := Meta(e.Task, record.KeyEscalationAnswer, a)
	if err != nil {
		return nil, err
	}
	h, err := note(tx, e.Commit, dag.RoleUser, AnswerText(a), meta)
	if err != nil {
		return nil, err
	}
	name := Ref(a.ID)
	if err := tx.SetRef(refs.Ref{Name: name, Hash: h}); err != nil {
		return nil, err
	}
	if err := tx.AppendReflog(name, refs.Entry{Old: e.Commit, New: h, Time: now, Action: refs.ActionEscalation,
		Message: "escalation: " + AnswerText(a)}); err != nil {
		return nil, err
	}
	return Read(tx, a.ID, h)
}

// Await waits for the escalation e to be answered, reading it in a
// transaction of view (LookUp) as Wait says, and returns it answered. A
// read that finds the repository locked by another process for longer
// than the lock timeout (a *store.LockedError) is no failure: a wait may
// last the night, and the next read will do. When ctx ends first it
// returns the escalation as last read and ctx's error.
func Await(ctx context.Context, e *Escalation, first, most time.Duration,
	view func(context.Context, func(store.Tx) error) error) (*Escalation, error) {
	err := Wait(ctx, first, most, func(ctx context.Context) (bool, error) {
		var got *Escalation
		err := view(ctx, func(tx store.Tx) (err error) {
			got, err = LookUp(tx, e.ID)
			return err
		})
		if locked := (*store.LockedError)(nil); errors.As(err, &locked) {
			return false, nil // another process holds the repository for long: look again later
		}
		if err != nil {
			return false, err
		}
		e = got
		return e.Answer != nil, nil
	})
	return e, err
}
