package repl

import (
	"context"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
)

// secretState is secret mode's, held in memory only: the branch's context
// compiled at /secret on, the secret turns since, and the failure that
// stopped secret sends.
type secretState struct {
	base       []tract.Message
	transcript []tract.Message
	failed     error
}

// secretCommand is /secret [on|off].
func (s *Session) secretCommand(ctx context.Context, arg string) error {
	switch arg {
	case "":
		state := "off"
		if s.mode == modeSecret {
			state = "on"
		}
		s.printf("secret mode is %s\n", state)
		return nil
	case "on":
		switch s.mode {
		case modeRetry:
			return fmt.Errorf("%w: retry mode is on; /apply or /cancel first", ErrModeConflict)
		case modeSecret:
			s.printf("secret mode is already on\n")
			return nil
		}
		base, err := s.cfg.Tract.Compile(ctx)
		if err != nil {
			return err
		}
		s.mode, s.secret = modeSecret, &secretState{base: base}
		s.printf("secret mode on: messages go to the model with the branch as it is now, and nothing is written; /secret off forgets them\n")
		return nil
	case "off":
		if s.mode != modeSecret {
			s.printf("secret mode is already off\n")
			return nil
		}
		n := len(s.secret.transcript) / 2
		s.mode, s.secret = modeNormal, nil
		s.printf("secret mode off: %s forgotten\n", english.Count(n, "secret turn", "secret turns"))
		return nil
	}
	return fmt.Errorf("%w: /secret takes on, off or nothing, not %q", ErrUsage, arg)
}

// secretTurn is a message in secret mode: sent with the frozen base and the
// secret turns so far, straight to the client, outside any transaction.
func (s *Session) secretTurn(ctx context.Context, text string) error {
	st := s.secret
	if st.failed != nil {
		return fmt.Errorf("%w: a secret turn failed (%v); /secret off, then /secret on to start again", ErrSecretBlocked, st.failed)
	}
	client, err := s.cfg.Client(s.model)
	if err != nil {
		st.failed = fmt.Errorf("not sent: %s", s.cfg.Redact(err.Error()))
		return fmt.Errorf("secret message %w (nothing was written)", st.failed)
	}
	user := tract.Message{Role: string(tract.RoleUser), Content: text}
	msgs := append(append(append([]tract.Message{}, st.base...), st.transcript...), user)
	req := llm.Request{Model: s.model, Messages: msgs}
	if s.cfg.Stream {
		req.OnDelta = s.delta
	}
	resp, err := client.Complete(ctx, req)
	if err != nil && ctx.Err() != nil {
		s.cancelled() // not a failure: secret sends go on
		return nil
	}
	if err != nil {
		s.endLine()
		st.failed = err
		return fmt.Errorf("secret message failed (nothing was written): %w", err)
	}
	answer := resp.Message() // with its tool calls, if it makes any
	s.answered(answer.Text())
	st.transcript = append(st.transcript, user, answer)
	return nil
}
