package escalation

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/refs"
)

// State is where an escalation stands.
type State string

// The states an escalation lists in.
const (
	// Pending: no one answered yet.
	Pending State = "pending"
	// Answered: answered, and not yet taken up by its turn (the process
	// that waited picks the answer up at its next look; a turn whose
	// process ended is resumed).
	Answered State = "answered"
)

// Escalation is an escalation that waits in a repository, as listed. The
// JSON names are those of 'tract escalations --json'.
type Escalation struct {
	// ID is the escalation's id, State where it stands.
	ID    string `json:"id"`
	State State  `json:"state"`
	// Branch is the short name of the branch the turn commits to ("HEAD"
	// when detached).
	Branch string `json:"branch"`
	// Task is the turn's task id ("" when none was given).
	Task string `json:"task,omitempty"`
	// Reason says why the round ended; Round is the round, from 1.
	Reason record.EscalationReason `json:"reason"`
	Round  int                     `json:"round"`
	// Attempts is the round's attempts of MaxAttempts; TotalAttempts the
	// turn's, every round.
	Attempts      int `json:"attempts"`
	MaxAttempts   int `json:"max_attempts"`
	TotalAttempts int `json:"total_attempts"`
	// Failures are the turn's failure records, in order (the diagnoses).
	Failures []record.Failure `json:"failures"`
	// LastAnswer is the model's last answer ("" when it gave none).
	LastAnswer string `json:"last_answer,omitempty"`
	// Question is the escalation note's text.
	Question string `json:"question"`
	// Commit is the escalation's note, Tip the turn's tip it was
	// committed on (the note's parent), Created its time.
	Commit  dag.Hash  `json:"commit"`
	Tip     dag.Hash  `json:"tip"`
	Created time.Time `json:"created"`
	// Answer is the answer, nil while pending.
	Answer *Answer `json:"answer,omitempty"`
	// Waiting is the record the turn wrote: what resuming it reads.
	Waiting record.WaitingEscalation `json:"-"`
}

// Answer is the answer to an escalation.
type Answer struct {
	// Resolution is the answer, Instruction a fix's guidance.
	Resolution  record.ResolutionAction `json:"resolution"`
	Instruction string                  `json:"instruction,omitempty"`
	// By says who answered ("" when no one said); At is when (the answer
	// commit's time).
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
	// Commit is the answer's note.
	Commit dag.Hash `json:"commit"`
}

// String returns the answer as an answer is given: "retry", "skip",
// "abort" or "fix: INSTRUCTION".
func (a Answer) String() string {
	if a.Resolution == record.ResolveFix {
		return "fix: " + a.Instruction
	}
	return string(a.Resolution)
}

// Sentinel errors of package escalation.
var (
	// ErrNotFound matches a *NotFoundError. errors.Is also matches it
	// with refs.ErrNotFound.
	ErrNotFound = errors.New("no such escalation")
	// ErrAnswered matches an *AnsweredError.
	ErrAnswered = errors.New("escalation answered already")
	// ErrBadID is returned for an id that cannot name an escalation.
	ErrBadID = errors.New("bad escalation id")
)

// NotFoundError reports an id that names no escalation: none was
// recorded under it, or it was taken up and gc removed it since.
type NotFoundError struct{ ID string }

// Error returns the NotFoundError message.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no escalation %s in this repository", e.ID)
}

// Is matches ErrNotFound and refs.ErrNotFound.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrNotFound || target == refs.ErrNotFound
}

// AnsweredError reports an answer to an escalation answered already: the
// first answer won (its ref moved by compare-and-swap) and this one was
// not recorded. TakenUp says the turn has acted on the first answer.
type AnsweredError struct {
	ID      string
	Answer  Answer
	TakenUp bool
}

// Error returns the AnsweredError message, naming the answer that won.
func (e *AnsweredError) Error() string {
	by := ""
	if e.Answer.By != "" {
		by = " by " + e.Answer.By
	}
	msg := fmt.Sprintf("escalation %s was answered already: %q%s at %s (commit %s); this answer was not recorded",
		e.ID, e.Answer.String(), by, e.Answer.At.UTC().Format(time.RFC3339), e.Answer.Commit.Short())
	if e.TakenUp {
		msg += ", and its turn has gone on with the first"
	}
	return msg
}

// Is matches ErrAnswered.
func (e *AnsweredError) Is(target error) bool { return target == ErrAnswered }

// TakenUpError reports a turn resumed from an escalation that its turn
// took up already (the process that waited, or an earlier resume).
type TakenUpError struct {
	ID     string
	Answer Answer
}

// Error returns the TakenUpError message.
func (e *TakenUpError) Error() string {
	return fmt.Sprintf("escalation %s was answered (%q) and its turn has gone on with the answer already", e.ID, e.Answer.String())
}

// idAlphabet is the letters of an id: digits and lower-case letters,
// without those read for one another (0 o, 1 l i).
const idAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

// IDLen is the length of an id NewID makes: 31⁶ ≈ 887 million ids.
const IDLen = 6

// NewID returns a new random id: IDLen letters of idAlphabet, short
// enough to type. The caller checks that no escalation has it.
func NewID() (string, error) {
	var b [IDLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("escalation id: %w", err)
	}
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b[:]), nil
}

// CheckID refuses an id that cannot name an escalation: empty, longer
// than 64 bytes, or with other characters than letters, digits, '-' and
// '_'. Case does not matter (NormalID).
func CheckID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("%w %q: an id is letters and digits, at most 64", ErrBadID, refs.ShortName(id))
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%w %q: an id is letters and digits", ErrBadID, refs.ShortName(id))
		}
	}
	return nil
}

// NormalID is id as refs name it: lower case, without space around.
func NormalID(id string) string { return strings.ToLower(strings.TrimSpace(id)) }

// Ref is the full name of the ref of escalation id.
func Ref(id string) string { return refs.EscalationPrefix + id }

// IDOf returns the id of an escalation's ref name, and whether name is
// one.
func IDOf(name string) (string, bool) { return strings.CutPrefix(name, refs.EscalationPrefix) }

// Question is the text of the note that records w: what a person reads
// before answering.
func Question(w record.WaitingEscalation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "escalation %s: ", w.ID)
	if w.Task != "" {
		fmt.Fprintf(&b, "task %q ", w.Task)
	}
	fmt.Fprintf(&b, "%s after %d of %d attempts (round %d, %d in all)", w.Reason, w.Attempts, w.MaxAttempts, w.Round, w.TotalAttempts)
	if n := len(w.Failures); n > 0 {
		fmt.Fprintf(&b, "; last error: %s", w.Failures[n-1].Error)
	}
	b.WriteString("\nanswer with retry, skip, abort or fix: INSTRUCTION")
	return b.String()
}

// AnswerText is the text of the note that records an answer.
func AnswerText(a record.EscalationAnswer) string {
	ans := Answer{Resolution: a.Resolution, Instruction: a.Instruction}
	s := fmt.Sprintf("escalation %s answered: %s", a.ID, ans)
	if a.By != "" {
		s += " (by " + a.By + ")"
	}
	return s
}

// Wait waits for answered to report an answer: it calls it after first,
// then after twice as long each time, up to every most, with nothing held
// in between. It returns answered's error, or ctx's when ctx ends first.
func Wait(ctx context.Context, first, most time.Duration, answered func(context.Context) (bool, error)) error {
	d := first
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		ok, err := answered(ctx)
		if err != nil || ok {
			return err
		}
		d = min(2*d, most)
		t.Reset(d)
	}
}
