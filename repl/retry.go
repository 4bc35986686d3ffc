package repl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// retryState is retry mode's: the interaction being replaced (its base is
// frozen) and the attempts so far.
type retryState struct {
	target   *interaction
	attempts []attempt
}

// attempt is one successful attempt of retry mode: a side chain off the
// base, message then answer.
type attempt struct {
	// id is the message commit's abbreviated hash.
	id string
	// user and tip are the chain's message and last commit.
	user, tip tract.Hash
}

// ActionApply is the reflog action of /apply's ref move.
const ActionApply = "apply"

// startRetry is /retry: enter retry mode, or start its attempts afresh.
func (s *Session) startRetry(ctx context.Context) error {
	switch s.mode {
	case modeSecret:
		return fmt.Errorf("%w: secret mode is on; /secret off first", ErrModeConflict)
	case modeRetry:
		n := len(s.retry.attempts)
		s.retry.attempts = nil
		s.printf("retry: attempts start again%s\n", keptAttempts(n, " so far"))
		return nil
	}
	in, err := s.lastInteraction(ctx)
	if err != nil {
		return err
	}
	s.mode, s.retry = modeRetry, &retryState{target: in}
	s.printf("retry mode: each message is an attempt on %s, replacing the %s %s;\n/apply [ID] adopts an attempt, /cancel leaves\n",
		shortOr(in.Base), in.what(), in.First.Short())
	return nil
}

// attempt is a message in retry mode: a validated turn on a side chain off
// the frozen base. A failed attempt is not listed (its commits are orphans
// like any other).
func (s *Session) attempt(ctx context.Context, text string) error {
	client, err := s.cfg.Client(s.model)
	if err != nil {
		return fmt.Errorf("attempt not sent: %s", s.cfg.Redact(err.Error()))
	}
	in := s.retry.target
	reason := fmt.Sprintf("retry: attempt on %s replacing the %s %s", shortOr(in.Base), in.what(), in.First.Short())
	side, err := s.cfg.Tract.SideChain(ctx, in.Base, reason)
	if err != nil {
		return err
	}
	res, err := s.attemptOn(ctx, side, text, client)
	if cerr := side.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil && ctx.Err() != nil {
		s.cancelled() // not listed; its message is an orphan like a failed attempt's
		return nil
	}
	if err != nil {
		s.endLine()
		return fmt.Errorf("attempt failed (nothing changed on the branch): %w", err)
	}
	s.retry.attempts = append(s.retry.attempts, *res)
	return nil
}

// attemptOn commits text on side, names the attempt, and generates the
// answer.
func (s *Session) attemptOn(ctx context.Context, side *tract.Tract, text string, client llm.Client) (*attempt, error) {
	user, err := side.User(ctx, text)
	if err != nil {
		return nil, err
	}
	a := &attempt{id: user.Short(), user: user}
	s.printf("[attempt %s]\n", a.id)
	res, err := side.Generate(ctx, s.chatOptions(client, false)...)
	if err != nil {
		return nil, err
	}
	s.answered(res.Text)
	a.tip = res.Commit
	return a, nil
}

// apply is /apply [last|ID].
func (s *Session) apply(ctx context.Context, arg string) error {
	if s.mode != modeRetry {
		return fmt.Errorf("%w: /apply adopts an attempt of retry mode; /retry first", ErrNotRetrying)
	}
	a, err := s.chooseAttempt(arg)
	if err != nil {
		return err
	}
	in := s.retry.target
	msg := fmt.Sprintf("apply: attempt %s replaced the %s %s", a.id, in.what(), in.First.Short())
	_, err = s.cfg.Tract.Reset(ctx, a.tip.String(), tract.Soft, tract.ResetIf(in.Tip), tract.ResetReflog(ActionApply, msg))
	var conflict *tract.ConflictError
	if errors.As(err, &conflict) {
		return fmt.Errorf("%w since /retry (from %s to %s; another process committed): nothing changed; /cancel, then /retry to replace the new last interaction: %w",
			ErrBranchMoved, conflict.Expected.Short(), shortOr(conflict.Actual), err)
	}
	if err != nil {
		return err
	}
	s.mode, s.retry = modeNormal, nil
	s.printf("applied %s\n", a.id)
	return nil
}

// chooseAttempt finds the attempt arg names: "" or "last" the latest,
// else the one whose message (or last commit) hash starts with arg.
func (s *Session) chooseAttempt(arg string) (*attempt, error) {
	as := s.retry.attempts
	if len(as) == 0 {
		return nil, fmt.Errorf("%w: type a message to make one, or /cancel", ErrNoAttempts)
	}
	if arg == "" || arg == "last" {
		return &as[len(as)-1], nil
	}
	id := strings.ToLower(arg)
	for _, r := range id {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return nil, fmt.Errorf("%w: %q (give the hex id shown before an attempt's answer, or last)", ErrBadAttemptID, arg)
		}
	}
	var found []*attempt
	for i := range as {
		if strings.HasPrefix(as[i].user.String(), id) || strings.HasPrefix(as[i].tip.String(), id) {
			found = append(found, &as[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w %q; the attempts are %s", ErrUnknownAttempt, arg, s.attemptIDs())
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%w %q: %d attempts start with it; give more digits", ErrAmbiguousAttempt, arg, len(found))
}

func (s *Session) attemptIDs() string {
	ids := make([]string, len(s.retry.attempts))
	for i, a := range s.retry.attempts {
		ids[i] = a.id
	}
	return strings.Join(ids, ", ")
}

// cancel is /cancel.
func (s *Session) cancel() error {
	if s.mode != modeRetry {
		return fmt.Errorf("%w: nothing to cancel", ErrNotRetrying)
	}
	n := len(s.retry.attempts)
	s.mode, s.retry = modeNormal, nil
	s.printf("left retry mode; the branch is unchanged%s\n", keptAttempts(n, ""))
	return nil
}

// keptAttempts says, in parentheses after a space, where the n attempts
// that leave retry mode's view are kept: "" for none.
func keptAttempts(n int, soFar string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" (the attempt%s stays in 'tract log --all')", soFar)
	}
	return fmt.Sprintf(" (the %d attempts%s stay in 'tract log --all')", n, soFar)
}
