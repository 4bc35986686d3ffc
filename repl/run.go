package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Run reads lines from in until its end or /exit and hands them to the
// session, with no prompt: the scriptable REPL. A line ending in "\"
// continues on the next (the "\" becomes a line break). Each line's error
// is printed to errOut as "error: …", followed by Config.Hint's advice,
// and the session goes on. Run returns
// nil at the end of in or /exit, the context's error when it ends, or the
// error of reading in.
func (s *Session) Run(ctx context.Context, in io.Reader, errOut io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var msg strings.Builder
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		line := sc.Text()
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			msg.WriteString(cont)
			msg.WriteString("\n")
			continue
		}
		msg.WriteString(line)
		err := s.Handle(ctx, msg.String())
		msg.Reset()
		if errors.Is(err, ErrExit) {
			return nil
		}
		if err != nil {
			s.printError(errOut, err)
		}
		if s.confirm != nil {
			// No prompt asks it here.
			s.printf("%s ", RewindQuestion)
		}
	}
	if msg.Len() > 0 {
		if err := s.Handle(ctx, strings.TrimSuffix(msg.String(), "\n")); err != nil && !errors.Is(err, ErrExit) {
			s.printError(errOut, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	return nil
}

// printError writes err to w as "error: …", and the advice Config.Hint
// gives for it on the next line.
func (s *Session) printError(w io.Writer, err error) {
	fmt.Fprintf(w, "error: %v\n", err)
	if s.cfg.Hint == nil {
		return
	}
	if h := s.cfg.Hint(err); h != "" {
		fmt.Fprintln(w, h)
	}
}
