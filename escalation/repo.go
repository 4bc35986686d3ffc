package escalation

import (
	"cmp"
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
