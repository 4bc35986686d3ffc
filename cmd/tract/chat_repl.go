package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/repl"
)

// replRun is 'tract chat --interactive', or 'tract chat' on a terminal:
// the REPL over standard input. With standard input and output terminals
// it has prompts, line editing and Ctrl-C (see terminalREPL); otherwise it
// reads lines with no prompt, for scripts. Each line's failure is printed
// and the REPL goes on, so it ends without an error unless reading its
// input fails or it is interrupted.
func replRun(cmd *cobra.Command, opts *ChatOptions) (retErr error) {
	f := opts.Factory
	ctx := cmd.Context()
	fd, onTerminal := terminalFd(f)
	if onTerminal && f.IO.ErrTTY {
		// Raw mode: standard error needs its own "\r\n". Copies, so
		// that the caller's Factory is not changed.
		streams, cf := *f.IO, *f
		streams.ErrOut, cf.IO = crlfWriter{f.IO.ErrOut}, &streams
		f = &cf
	}
	// Without a client nothing typed could be sent: refuse before a line
	// is read or anything recorded, as one-shot chat does (exit 2, and
	// the error says what to set). A model /model chooses later whose
	// client cannot be built fails its sends instead.
	f.wait = newWaitLine(f) // "waiting for MODEL… 3.2s" on a terminal
	client, err := newClient(f, opts.Model, opts.ModelFlags)
	if err != nil {
		return err
	}
	clients := map[string]llm.Remote{} // those of the models /model chose
	validator, err := parseValidators(f, opts.Validate, opts.CmdTimeout, withoutWaitLine(client), opts.Model, opts.specOptions()...)
	if err != nil {
		return err
	}
	if opts.System, err = f.setting("system", opts.System); err != nil {
		return err
	}
	schema, err := opts.ModelFlags.schema(f, opts.Validate)
	if err != nil {
		return err
	}
	copts := []tract.ChatOption{
		tract.MaxAttempts(opts.MaxAttempts),
		tract.Purify(opts.Purify),
		tract.RetryPrompt(opts.RetryPrompt),
		tract.OnAttempt(progress(f.IO.ErrOut, f.IO.ErrTTY, len(opts.Validate) > 0)),
		tract.Feedback(opts.Feedback), tract.RetryContextStrategy(opts.RetryContext),
	}
	if validator != nil {
		copts = append(copts, tract.Validate(validator), tract.Structured(schema))
	}
	// Each tool's run is a line of the transcript (run.show is set below,
	// with the session's output).
	run := &toolRun{terminal: f.IO.OutTTY}
	tools, err := buildTools(f, &opts.ToolFlags, opts.CmdTimeout, run)
	if err != nil {
		return err
	}
	if len(tools) > 0 {
		copts = append(copts, tract.Tools(tools...), tract.MaxToolSteps(opts.ToolFlags.MaxSteps))
	}
	if opts.TaskSet {
		copts = append(copts, tract.Task(opts.Task))
	}
	if opts.Provenance {
		copts = append(copts, tract.ProvenanceNote())
	}
	if opts.Temperature != nil {
		copts = append(copts, tract.Temperature(*opts.Temperature))
	}
	if opts.Events != "" {
		// Every turn's events, as one-shot chat appends its turn's.
		log, err := openEventLog(opts.Events)
		if err != nil {
			return err
		}
		defer func() { retErr = errors.Join(retErr, log.close()) }()
		copts = append(copts, tract.OnEvent(log.write))
	}
	provider := client.Provider()
	_, origin, err := f.settingFrom("model", opts.Model)
	if err != nil {
		return err
	}
	out := flushingWriter{f.IO.Out}
	if opts.ToolFlags.Approve && !onTerminal {
		// The answers would be read from the lines the session reads.
		return usageErrorf("--approve-tools in the interactive chat asks at the terminal, but standard output is not one: " +
			"leave it out to run the tools you name without asking")
	}
	var tr *terminalREPL
	// width is the terminal's, as it is resized: one-line views (/log)
	// are cut to it.
	var lineWidth atomic.Int64
	if onTerminal {
		restore, width, height, err := openTerminal(fd)
		if err != nil {
			return err
		}
		defer func() { _ = restore() }() // on the way out, nothing better to do with its error
		// A second Ctrl-C exits at once: the terminal is put back first.
		defer f.IO.Interrupts.onHardExit(func() {
			_ = restore()
			if f.IO.OutFile != nil {
				_, _ = f.IO.OutFile.WriteString(bracketedPasteOff)
			}
		})()
		lineWidth.Store(int64(cmp.Or(width, defaultWidth)))
		tr = newTerminalREPL(ctx, f.IO.In, out, f.IO.ErrOut, width, height, f.IO.Color)
		tr.errTerminal = f.IO.ErrTTY
		tr.hardExit = f.IO.Interrupts.hardExit
		if len(opts.Validate) > 0 && f.IO.ErrTTY && !opts.NoStream {
			// Each attempt streams on standard error; the accepted answer
			// is then printed by the session, as without a stream.
			tr.attempts = newAttemptStream(f, f.IO.ErrOut, true)
			tr.attempts.resize(width, height)
			copts = append(copts, tr.attempts.options()...)
		}
		followResize(ctx, fd, func(w, h int) {
			lineWidth.Store(int64(w))
			_ = tr.term.SetSize(w, h) // a repaint that fails leaves the old width: nothing better to do
			if tr.attempts != nil {
				tr.attempts.resize(w, h)
			}
		})
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		if opts.New {
			if err := startConversation(ctx, f, t); err != nil {
				return err
			}
		}
		var sessionOut io.Writer = out
		if tr != nil {
			sessionOut = tr.term // the line editor writes "\r\n" in raw mode
		}
		// Answers, streamed or not, and all the session prints reach a
		// terminal through the screen sanitiser.
		lines := &lineTracker{w: newScreenWriter(sessionOut, f.IO.OutTTY)}
		sessionOut = lines
		run.show = sessionOut
		run.before = lines.endLine // after a streamed text
		if tr != nil {
			run.width = func() int { return int(lineWidth.Load()) }
			if opts.ToolFlags.Approve {
				run.ask = tr.askTool(sessionOut)
			}
		}
		s := repl.New(repl.Config{
			Tract: t, Model: opts.Model, ModelOrigin: origin, Provider: provider, System: opts.System,
			ChatOptions: copts, Out: sessionOut,
			Stream: len(opts.Validate) == 0 && f.IO.OutTTY && !opts.NoStream,
			Client: func(model string) (llm.Client, error) {
				if model == opts.Model {
					return client, nil
				}
				// /model chose another: its client, of the provider the
				// flags, the settings or its name choose.
				if c, ok := clients[model]; ok {
					return c, nil
				}
				c, err := newClient(f, model, opts.ModelFlags)
				if err != nil {
					return nil, err
				}
				clients[model] = c
				return c, nil
			},
			Redact: func(s string) string { return redactKeys(f, s) },
			Hint:   replHint,
			FitLine: func(s string) string {
				if tr == nil {
					return s
				}
				return fitLine(s, int(lineWidth.Load()))
			},
		})
		if tr != nil {
			branch, _, err := t.Head(ctx)
			if err != nil {
				return err
			}
			if branch == "" {
				branch = "a detached HEAD"
			}
			fmt.Fprintf(sessionOut, "tract chat on %s: /help lists the commands; Ctrl-C cancels an answer, Ctrl-D leaves\n", branch)
			return tr.run(ctx, s)
		}
		return s.Run(ctx, f.IO.In, newScreenWriter(f.IO.ErrOut, f.IO.ErrTTY))
	})
}

// terminalFd returns standard input's file descriptor when standard input
// and output are both terminals: the REPL then runs on the terminal.
func terminalFd(f *Factory) (int, bool) {
	in, ok := f.IO.In.(interface{ Fd() uintptr })
	if !ok || !f.IO.InTTY || !f.IO.OutTTY {
		return 0, false
	}
	return int(in.Fd()), true
}

// flushingWriter flushes what it wraps after each write, so a reply shows
// before the next line is read.
type flushingWriter struct{ w io.Writer }

func (w flushingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	flush(w.w)
	return n, err
}
