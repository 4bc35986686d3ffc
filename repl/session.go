package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// Sentinel errors of package repl. Each error a Session returns wraps one
// of them (or an error of package tract or llm), with a message that says
// what to do.
var (
	// ErrExit is returned by /exit: the REPL should end.
	ErrExit = errors.New("exit")
	// ErrUnknownCommand is returned for a "/" command that does not exist.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrUsage is returned for a command given the wrong arguments.
	ErrUsage = errors.New("wrong arguments")
	// ErrPendingError is returned for a message sent while the branch
	// ends in an error commit.
	ErrPendingError = errors.New("the branch ends in an error")
	// ErrNothingToRetry is returned by /retry and /rewind when the branch
	// does not end in an interaction.
	ErrNothingToRetry = errors.New("nothing to retry")
	// ErrNotRetrying is returned by /apply and /cancel outside retry mode.
	ErrNotRetrying = errors.New("not in retry mode")
	// ErrNoAttempts is returned by /apply before any attempt succeeded.
	ErrNoAttempts = errors.New("no attempts yet")
	// ErrBadAttemptID is returned by /apply for an id that is not hex.
	ErrBadAttemptID = errors.New("not an attempt id")
	// ErrUnknownAttempt is returned by /apply for an id no attempt has.
	ErrUnknownAttempt = errors.New("no such attempt")
	// ErrAmbiguousAttempt is returned by /apply for an id several
	// attempts start with.
	ErrAmbiguousAttempt = errors.New("ambiguous attempt id")
	// ErrBranchMoved is returned by /apply and /rewind when another
	// writer moved the branch since it was read; it wraps the
	// *tract.ConflictError too.
	ErrBranchMoved = errors.New("the branch moved")
	// ErrModeConflict is returned for entering retry or secret mode while
	// the other is on, or for a command the mode does not allow.
	ErrModeConflict = errors.New("not in this mode")
	// ErrSecretBlocked is returned for a secret message after a secret
	// turn failed.
	ErrSecretBlocked = errors.New("secret sends are stopped")
	// ErrNothingToRewind is returned by /rewind when nothing comes before
	// the interaction or commit to rewind past.
	ErrNothingToRewind = errors.New("nothing to rewind to")
)

// Config is what a Session works with.
type Config struct {
	// Tract is the repository view the session acts on: a handle (HEAD's
	// branch) or a view made by OnBranch.
	Tract *tract.Tract
	// Client returns the model client for a send. An error is a failure
	// before the send: a normal turn records it as a standalone error
	// commit.
	Client func() (llm.Client, error)
	// Model is the model asked for ("" the client's default); /model
	// changes it. Provider names the kind of server ("openai"); both go
	// into the metadata of a standalone error commit.
	Model, Provider string
	// System is the system prompt of normal turns (see tract.SystemPrompt);
	// /system changes it.
	System string
	// ChatOptions apply to every turn and attempt: validators, max
	// attempts, purify and the like. The Session adds the client, the
	// model, the system prompt and the streaming itself.
	ChatOptions []tract.ChatOption
	// Out receives every reply: answers (streamed as they arrive when
	// Stream is set) and what commands print.
	Out    io.Writer
	Stream bool
	// Redact hides secrets (an API key) in text the Session records
	// itself: the text of a standalone error commit. nil redacts nothing.
	Redact func(string) string
}

// mode is what a message line does.
type mode int

const (
	modeNormal mode = iota
	modeRetry
	modeSecret
)

// Session is one interactive chat on a branch: it takes lines (messages
// and commands) through Handle and writes replies to Config.Out.
type Session struct {
	cfg    Config
	model  string
	system string
	mode   mode
	retry  *retryState
	secret *secretState
	// confirm is the rewind waiting for "yes"; nil when none is.
	confirm *rewind
}

// New returns a Session in the normal mode.
func New(cfg Config) *Session {
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	return &Session{cfg: cfg, model: cfg.Model, system: cfg.System}
}

// Handle runs one line: a message, "yes"/anything after /rewind, or a
// command. Empty lines do nothing. An error is the line's failure, to be
// shown; the session goes on after it, except after ErrExit.
func (s *Session) Handle(ctx context.Context, line string) error {
	if c := s.confirm; c != nil {
		s.confirm = nil
		if strings.TrimSpace(line) == "yes" {
			return s.doRewind(ctx, c)
		}
		s.printf("rewind cancelled; nothing changed\n")
		return nil
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if strings.HasPrefix(line, "/") {
		return s.command(ctx, line)
	}
	switch s.mode {
	case modeRetry:
		return s.attempt(ctx, line)
	case modeSecret:
		return s.secretTurn(ctx, line)
	}
	return s.turn(ctx, line)
}

// Prompt returns the prompt for the next line, with the banners of the
// mode and of a pending error: "retry> ", "secret> ", "[error abc123] > ".
func (s *Session) Prompt(ctx context.Context) string {
	var b strings.Builder
	if last, err := s.tip(ctx); err == nil && last != nil && last.Kind == tract.KindError {
		fmt.Fprintf(&b, "[error %s] ", last.Hash.Short())
	}
	switch {
	case s.confirm != nil:
		b.WriteString("rewind? (yes/no) ")
		return b.String()
	case s.mode == modeRetry:
		fmt.Fprintf(&b, "retry(%d)", len(s.retry.attempts))
	case s.mode == modeSecret:
		b.WriteString("secret")
	}
	b.WriteString("> ")
	return b.String()
}

// Mode names the session's mode: "normal", "retry" or "secret".
func (s *Session) Mode() string {
	switch s.mode {
	case modeRetry:
		return "retry"
	case modeSecret:
		return "secret"
	}
	return "normal"
}

func (s *Session) printf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Out, format, args...)
}

// chatOptions are the options of a turn or attempt with client.
func (s *Session) chatOptions(client llm.Client, system bool) []tract.ChatOption {
	opts := append([]tract.ChatOption{}, s.cfg.ChatOptions...)
	opts = append(opts, tract.UseClient(client), tract.Model(s.model))
	if system && s.system != "" {
		opts = append(opts, tract.SystemPrompt(s.system))
	}
	if s.cfg.Stream {
		opts = append(opts, tract.OnDelta(func(d string) { io.WriteString(s.cfg.Out, d) }))
	}
	return opts
}

// answered prints the end of an answer: all of it when it was not
// streamed, else the newline after it.
func (s *Session) answered(text string) {
	if s.cfg.Stream {
		s.printf("\n")
		return
	}
	s.printf("%s\n", text)
}

// turn is a normal message: a validated turn on the branch.
func (s *Session) turn(ctx context.Context, text string) error {
	last, err := s.tip(ctx)
	if err != nil {
		return err
	}
	if last != nil && last.Kind == tract.KindError {
		return fmt.Errorf("%w (%s: %s): /retry to replace it, or /rewind to drop it",
			ErrPendingError, last.Hash.Short(), firstLine(last.Text))
	}
	client, err := s.cfg.Client()
	if err != nil {
		return s.recordPreSend(ctx, err)
	}
	res, err := s.cfg.Tract.Chat(ctx, text, s.chatOptions(client, true)...)
	if err != nil {
		if res != nil && !res.Commit.IsZero() && s.cfg.Stream {
			s.printf("\n")
		}
		return err
	}
	s.answered(res.Text)
	return nil
}

// recordPreSend commits a standalone error commit for a failure before the
// send, and returns the failure.
func (s *Session) recordPreSend(ctx context.Context, cause error) error {
	text := s.cfg.Redact(cause.Error())
	meta := map[string]any{tract.MetaError: text, "provider": s.cfg.Provider}
	if s.model != "" {
		meta[tract.MetaModel] = s.model
	}
	h, err := s.cfg.Tract.Commit(ctx, tract.KindError, tract.RoleAssistant, "model call not sent: "+text, tract.WithMeta(meta))
	if err != nil {
		return errors.Join(fmt.Errorf("model call not sent: %s", text), err)
	}
	return fmt.Errorf("model call not sent (recorded as error %s): %s", h.Short(), text)
}

// tip returns the branch's last commit, nil on an unborn branch.
func (s *Session) tip(ctx context.Context) (*tract.CommitInfo, error) {
	cs, err := s.cfg.Tract.Log(ctx, tract.LogLimit(1))
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return cs[0], nil
}

// firstLine returns s up to its first line break, cut to 80 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}
