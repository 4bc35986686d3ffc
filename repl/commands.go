package repl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
)

// commandInfo is one REPL command as /help lists it.
type commandInfo struct {
	name, args, help string
}

// commands lists every command, in /help's order.
func commands() []commandInfo {
	return []commandInfo{
		{"/retry", "", "replace the last interaction: each message becomes an attempt off the commit before it"},
		{"/apply", "[last|ID]", "point the branch at an attempt (the latest by default) and leave retry mode"},
		{"/cancel", "", "leave retry mode; the branch is unchanged, the attempts stay in 'tract log --all'"},
		{"/secret", "[on|off]", "continue off the record (nothing is written); alone, say whether it is on"},
		{"/rewind", "[last|ID]", "move the branch back before the last interaction (or commit ID), after yes"},
		{"/log", "[N]", "list the branch's last N commits (default 10)"},
		{"/show", "ID", "print a commit"},
		{"/status", "", "branch, mode, model, pending error and context size"},
		{"/model", "[NAME]", "use model NAME from now on; alone, print the model"},
		{"/system", "[TEXT]", "use TEXT as the system prompt of later turns; alone, print it"},
		{"/help", "", "list the commands"},
		{"/exit", "", "leave (so does end of input)"},
	}
}

// command runs a "/" line.
func (s *Session) command(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	noArg := func() error {
		if arg != "" {
			return fmt.Errorf("%w: %s takes no argument", ErrUsage, name)
		}
		return nil
	}
	switch name {
	case "/retry":
		if err := noArg(); err != nil {
			return err
		}
		return s.startRetry(ctx)
	case "/apply":
		return s.apply(ctx, arg)
	case "/cancel":
		if err := noArg(); err != nil {
			return err
		}
		return s.cancel()
	case "/secret":
		return s.secretCommand(ctx, arg)
	case "/rewind":
		return s.startRewind(ctx, arg)
	case "/log":
		return s.log(ctx, arg)
	case "/show":
		return s.show(ctx, arg)
	case "/status":
		return s.status(ctx)
	case "/model":
		if arg != "" {
			s.model, s.modelOrigin = arg, "/model"
		}
		s.printf("model: %s\n", s.modelName())
		return nil
	case "/system":
		if arg != "" {
			s.system = arg
		}
		s.printf("system prompt: %s\n", or(s.system, "(none)"))
		return nil
	case "/help":
		s.printf("%s", help())
		return nil
	case "/exit", "/quit":
		return ErrExit
	}
	return fmt.Errorf("%w %s; the commands are %s (/help explains them)", ErrUnknownCommand, name, commandNames())
}

func help() string {
	var b strings.Builder
	b.WriteString("A line is a message; end a line with \\ to continue the message on the next.\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-19s %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	return b.String()
}

func commandNames() string {
	cs := commands()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return strings.Join(names, " ")
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// log is /log [N].
func (s *Session) log(ctx context.Context, arg string) error {
	n := 10
	if arg != "" {
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n < 1 {
			return fmt.Errorf("%w: /log takes a number of commits, 1 or more, not %q", ErrUsage, arg)
		}
	}
	cs, err := s.cfg.Tract.Log(ctx, tract.LogLimit(n))
	if err != nil {
		return err
	}
	if len(cs) == 0 {
		s.printf("no commits yet\n")
	}
	for _, c := range cs {
		text := firstLine(c.Text)
		if step, ok := c.ToolStepRecord(); ok && step.Tool != "" && c.Role == tract.RoleTool {
			text = step.Tool + " → " + text // a tool's result names its tool
		}
		line := fmt.Sprintf("%s %-9s %-8s %s", c.Hash.Short(), c.Role, c.Kind, text)
		if s.cfg.FitLine != nil {
			line = s.cfg.FitLine(line)
		}
		s.printf("%s\n", line)
	}
	return nil
}

// show is /show ID.
func (s *Session) show(ctx context.Context, arg string) error {
	if arg == "" {
		return fmt.Errorf("%w: /show takes a commit id", ErrUsage)
	}
	c, err := s.cfg.Tract.Show(ctx, arg)
	if err != nil {
		return err
	}
	s.printf("commit %s\n%s %s, %s\n\n%s\n", c.Hash, c.Role, c.Kind, c.Time.Format("2006-01-02 15:04:05Z07:00"), c.Text)
	return nil
}

// status is /status.
func (s *Session) status(ctx context.Context) error {
	st, err := s.cfg.Tract.Status(ctx)
	if err != nil {
		return err
	}
	branch := or(s.cfg.Tract.Branch(), or(st.Branch, "(detached)"))
	s.printf("branch: %s at %s\nmode: %s", branch, shortOr(st.Head), s.Mode())
	switch s.mode {
	case modeRetry:
		s.printf(" (%s on %s)", english.Count(len(s.retry.attempts), "attempt", "attempts"), shortOr(s.retry.target.Base))
	case modeSecret:
		s.printf(" (%s)", english.Count(len(s.secret.transcript)/2, "secret turn", "secret turns"))
	}
	s.printf("\nmodel: %s\n", s.modelName())
	if last, err := s.tip(ctx); err == nil && last != nil && last.Kind == tract.KindError {
		s.printf("pending error: %s %s\n", last.Hash.Short(), firstLine(last.Text))
	}
	s.printf("context: %s, about %s\n", english.Count(st.Messages, "message", "messages"), english.Count(st.Tokens, "token", "tokens"))
	return nil
}

// modelName is the model turns ask, as /status and /model show it: the
// one /model chose, else the client's default when the client says
// (llm.Describer), with where it comes from.
func (s *Session) modelName() string {
	name := s.model
	if name == "" {
		if c, err := s.cfg.Client(""); err == nil {
			if d, ok := c.(llm.Describer); ok {
				name = d.DefaultModel()
			}
		}
	}
	switch {
	case name == "":
		return "(the client's default)"
	case s.modelOrigin != "":
		return name + " (from " + s.modelOrigin + ")"
	}
	return name
}
