package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/repl"
)

// replRun is 'tract chat --interactive': the REPL over standard input.
// Each line's failure is printed and the REPL goes on, so it ends without
// an error unless reading its input fails or it is interrupted.
func replRun(cmd *cobra.Command, opts *ChatOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	// A client that cannot be built is a failure of each send, recorded
	// as an error commit, not a reason to refuse the REPL.
	client, clientErr := newClient(f, opts.Model)
	var judge llm.Client
	if clientErr == nil {
		judge = client
	}
	validator, err := parseValidators(f, opts.Validate, judge, opts.Model)
	if err != nil {
		return err
	}
	copts := []tract.ChatOption{
		tract.MaxAttempts(opts.MaxAttempts),
		tract.Purify(opts.Purify),
		tract.RetryPrompt(opts.RetryPrompt),
		tract.OnAttempt(progress(f.IO.ErrOut, len(opts.Validate) > 0)),
		tract.Feedback(opts.Feedback), tract.RetryContextStrategy(opts.RetryContext),
	}
	if validator != nil {
		copts = append(copts, tract.Validate(validator))
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
	key := f.Getenv(llm.EnvAPIKey)
	out := flushingWriter{f.IO.Out}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		s := repl.New(repl.Config{
			Tract: t, Model: opts.Model, Provider: "openai", System: opts.System,
			ChatOptions: copts, Out: out,
			Stream: len(opts.Validate) == 0 && f.IO.OutTTY && !opts.NoStream,
			Client: func() (llm.Client, error) {
				if clientErr != nil {
					return nil, clientErr
				}
				return client, nil
			},
			Redact: func(s string) string {
				if key == "" {
					return s
				}
				return strings.ReplaceAll(s, key, "[REDACTED]")
			},
		})
		return s.Run(ctx, f.IO.In, f.IO.ErrOut)
	})
}

// flushingWriter flushes what it wraps after each write, so a reply shows
// before the next line is read.
type flushingWriter struct{ w io.Writer }

func (w flushingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	flush(w.w)
	return n, err
}
