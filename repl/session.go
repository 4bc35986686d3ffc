package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
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
	// ErrNothingToRetry is returned by /retry when the branch does not
	// end in an interaction with an answer or an error to replace.
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
	// ErrNothingToRewind is returned by /rewind ID when commit ID is not
	// on the branch, and by /rewind when the branch does not end in an
	// interaction (a lone user message is one).
	ErrNothingToRewind = errors.New("nothing to rewind")
	// ErrCancelledKept is returned when a turn was cancelled but its
	// message could not be taken off the branch: another writer moved the
	// branch meanwhile.
	ErrCancelledKept = errors.New("the cancelled message stays on the branch")
)

// ActionCancel is the reflog action of the move that takes a cancelled
// turn off the branch.
const ActionCancel = "cancel"

// cancelledTurnCommits bounds how far below the tip a cancelled turn's
// message is looked for: a turn without purify leaves its failed attempts
// and steering messages above it.
const cancelledTurnCommits = 256

// Config is what a Session works with.
type Config struct {
	// Tract is the repository view the session acts on: a handle (HEAD's
	// branch) or a view made by OnBranch.
	Tract *tract.Tract
	// Client returns the model client for a send to model (the model
	// /model chose last, "" for the client's default), so that a change
	// of model can change the provider too. An error is a failure before
	// the send: a normal turn records it as a standalone error commit.
	Client func(model string) (llm.Client, error)
	// Model is the model asked for ("" the client's default); /model
	// changes it. Provider names the kind of server ("openai"); both go
	// into the metadata of a standalone error commit.
	Model, Provider string
	// ModelOrigin says where the model comes from, Model or the client's
	// default, in the caller's words (a flag, an environment variable, a
	// settings file): /status and /model show it after the model's name.
	// "" shows none.
	ModelOrigin string
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
	// Hint returns the advice Run prints on the line after an error's
	// (what to type about it: the program's commands), or "" for none.
	// nil prints none.
	Hint func(error) string
	// FitLine shapes each line of a one-line view (/log) for Out: a
	// program on a terminal cuts it to the terminal's width, so that it
	// does not wrap. nil leaves the lines as they are.
	FitLine func(string) string
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
	cfg   Config
	model string
	// modelOrigin says where model (or the client's default) comes from.
	modelOrigin string
	system      string
	mode        mode
	retry       *retryState
	secret      *secretState
	// confirm is the rewind waiting for "yes"; nil when none is.
	confirm *rewind
	// midLine is true while an answer streamed to Out has not ended its
	// line.
	midLine bool
}

// New returns a Session in the normal mode.
func New(cfg Config) *Session {
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	return &Session{cfg: cfg, model: cfg.Model, modelOrigin: cfg.ModelOrigin, system: cfg.System}
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

// BannerKind says what a prompt banner shows, so a terminal can colour it.
type BannerKind int

// The kinds of banner.
const (
	// BannerError shows that the branch ends in an error commit.
	BannerError BannerKind = iota + 1
	// BannerRetry shows retry mode and its number of attempts.
	BannerRetry
	// BannerSecret shows secret mode.
	BannerSecret
	// BannerConfirm shows that /rewind waits for "yes".
	BannerConfirm
)

// RewindQuestion is the question a /rewind waiting for its "yes" asks:
// the prompt's banner on a terminal, a line of Run's without one.
const RewindQuestion = "rewind? (yes/no)"

// Banner is one part of the prompt that shows a state.
type Banner struct {
	Kind BannerKind
	Text string
}

// Banners returns the prompt's banners, in order: a pending error, then
// the mode (or the question of a /rewind waiting for its answer).
func (s *Session) Banners(ctx context.Context) []Banner {
	var bs []Banner
	if last, err := s.tip(ctx); err == nil && last != nil && last.Kind == tract.KindError {
		bs = append(bs, Banner{BannerError, fmt.Sprintf("[error %s]", last.Hash.Short())})
	}
	switch {
	case s.confirm != nil:
		bs = append(bs, Banner{BannerConfirm, RewindQuestion})
	case s.mode == modeRetry:
		bs = append(bs, Banner{BannerRetry, fmt.Sprintf("retry(%d)", len(s.retry.attempts))})
	case s.mode == modeSecret:
		bs = append(bs, Banner{BannerSecret, "secret"})
	}
	return bs
}

// Prompt returns the prompt for the next line, with the banners of the
// mode and of a pending error: "retry(0)> ", "secret> ",
// "[error abc123] > ".
func (s *Session) Prompt(ctx context.Context) string {
	return PromptOf(s.Banners(ctx), func(_ BannerKind, text string) string { return text })
}

// PromptOf builds a prompt from banners, each written by paint (which
// may colour it by kind): the error banner and a space, the mode, and
// "> " (or, after the question of a /rewind, a space).
func PromptOf(bs []Banner, paint func(kind BannerKind, text string) string) string {
	var b strings.Builder
	end := "> "
	for _, bn := range bs {
		b.WriteString(paint(bn.Kind, bn.Text))
		switch bn.Kind {
		case BannerError:
			b.WriteString(" ")
		case BannerConfirm:
			end = " "
		}
	}
	return b.String() + end
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
		opts = append(opts, tract.OnDelta(s.delta))
	}
	return opts
}

// delta writes a streamed piece of an answer.
func (s *Session) delta(d string) {
	if d != "" {
		io.WriteString(s.cfg.Out, d)
		s.midLine = true
	}
}

// endLine ends the line of an answer streamed so far, if it is open.
func (s *Session) endLine() {
	if s.midLine {
		s.printf("\n")
		s.midLine = false
	}
}

// answered prints the end of an answer: all of it when it was not
// streamed, else the newline after it.
func (s *Session) answered(text string) {
	if s.cfg.Stream {
		s.midLine = false
		s.printf("\n")
		return
	}
	s.printf("%s\n", text)
}

// cancelled reports a message whose context was cancelled while it was
// answered (Ctrl-C): it ends the streamed line and says so.
func (s *Session) cancelled() {
	s.endLine()
	s.printf("[message cancelled]\n")
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
	client, err := s.cfg.Client(s.model)
	if err != nil {
		return s.recordPreSend(ctx, err)
	}
	res, err := s.cfg.Tract.Chat(ctx, text, s.chatOptions(client, true)...)
	if err != nil && ctx.Err() != nil {
		s.cancelled()
		return s.dropCancelled(ctx, last, res)
	}
	if err != nil {
		s.endLine()
		return err
	}
	s.answered(res.Text)
	return nil
}

// dropCancelled takes a cancelled turn off the branch: Tract.Chat
// commits the message before it sends it, so the branch is moved back to
// before (the tip the turn started on; nil: the branch was unborn, and
// becomes so again), in one compare-and-swap from where the turn left
// it, with a reflog entry that says why. The turn's commits stay as
// orphans ('tract log --all'). When the branch cannot go back (another
// writer committed on top of the message) the message stays and the
// error says so.
func (s *Session) dropCancelled(ctx context.Context, before *tract.CommitInfo, res *tract.ChatResult) error {
	if res == nil || res.User.IsZero() {
		return nil // cancelled before the message was committed
	}
	// The turn's context is cancelled; taking the turn back must still run.
	ctx = context.WithoutCancel(ctx)
	user := res.User.Short()
	var from tract.Hash // the tip the turn started on; zero: the branch was unborn
	if before != nil {
		from = before.Hash
	}
	moved := func(err error) error {
		return fmt.Errorf("%w: %w (another process committed): /rewind %s drops it: %w", ErrCancelledKept, ErrBranchMoved, user, err)
	}
	cs, err := s.cfg.Tract.Log(ctx, tract.LogLimit(cancelledTurnCommits))
	if err != nil {
		return fmt.Errorf("take the cancelled message %s off the branch: %w", user, err)
	}
	n, ok := turnDepth(cs, res.User, from)
	if !ok {
		return moved(errors.New("its turn is not the branch's last"))
	}
	msg := fmt.Sprintf("cancel: message %s cancelled while answered; dropped the turn's %s", user, english.Count(n, "commit", "commits"))
	opts := []tract.ResetOption{tract.ResetIf(cs[0].Hash), tract.ResetReflog(ActionCancel, msg)}
	if from.IsZero() {
		_, err = s.cfg.Tract.ResetUnborn(ctx, tract.Soft, opts...)
	} else {
		_, err = s.cfg.Tract.Reset(ctx, from.String(), tract.Soft, opts...)
	}
	var conflict *tract.ConflictError
	if errors.As(err, &conflict) {
		return moved(err)
	}
	if err != nil {
		return fmt.Errorf("take the cancelled message %s off the branch: %w", user, err)
	}
	return nil
}

// turnDepth returns how many of the commits cs (a branch's, newest first)
// belong to the turn of the user message user started on before: those
// down to user (commits a turn makes before it ends: answers, steering,
// errors; see turnCommit) and a system prompt the turn committed
// under it; before is zero when the turn started on an unborn branch.
// ok is false when the branch is not in that shape.
func turnDepth(cs []*tract.CommitInfo, user, before tract.Hash) (n int, ok bool) {
	for i, c := range cs {
		if c.Hash != user {
			if !turnCommit(c) {
				return 0, false // another writer's commit
			}
			continue
		}
		// below is the commit under the turn's user message (zero for
		// the branch's first), and under the system prompt it may have
		// committed first.
		below := parent(c)
		if below == before {
			return i + 1, true
		}
		rest := cs[i+1:]
		if len(rest) > 0 && rest[0].Hash == below && rest[0].Role == tract.RoleSystem && parent(rest[0]) == before {
			return i + 2, true
		}
		return 0, false
	}
	return 0, false
}

// turnCommit reports whether c is of a kind an unfinished turn commits
// above its user message: an attempt's answer, its steering, or the error
// commit of a failed model call. Anything else (a note, a summary, a
// message of another role) is another writer's.
func turnCommit(c *tract.CommitInfo) bool {
	switch c.Kind {
	case tract.KindSteering, tract.KindError:
		return true
	case tract.KindMessage:
		return c.Role == tract.RoleAssistant
	}
	return false
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
