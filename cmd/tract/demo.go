package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/demo"
)

// DemoOptions are the inputs of 'tract demo'.
type DemoOptions struct {
	Factory *Factory
	// Keep keeps the temporary repository instead of removing it.
	Keep bool
}

func newCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "demo [--keep | --db PATH]",
		Short: "Watch validated generation work, offline",
		Long: `Run tract's main job in a throwaway repository against a scripted model,
with no network, no API key and no repository of yours: a task validated as
JSON whose first answer fails and is steered, a compress, and a task
validated by a command; then 'tract log --all --graph', 'tract stats', and
how to use a real model. --keep keeps the repository, --db PATH creates it
at PATH.`,
		Example: `  tract demo
  tract demo --keep
  tract --db /tmp/demo.db demo && tract --db /tmp/demo.db show HEAD`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the temporary repository and print where it is")
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) (retErr error) {
	f := opts.Factory
	// Each line shows as it is written, not when the demo ends. On a
	// terminal the lines that quote texts (a question, an answer, a
	// diagnosis) are cut to its width; the narration fits 80 columns.
	var out io.Writer = flushingWriter{f.IO.Out}
	if width := f.outWidth(); width > 0 {
		fw := newFitWriter(out, width)
		out = fw
		defer func() { retErr = errors.Join(retErr, fw.flushLine()) }()
	}
	path, keep := f.DBFlag, opts.Keep || f.DBFlag != ""
	if path != "" {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			return usageErrorf("--db %s: the demo creates a new repository, and something exists there: name a path that does not exist yet", path)
		}
	} else {
		dir, err := os.MkdirTemp("", "tract-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if !keep {
			defer func() { retErr = errors.Join(retErr, os.RemoveAll(dir)) }()
		}
		path = filepath.Join(dir, tract.DefaultFile)
	}
	topts, err := f.options()
	if err != nil {
		return err
	}
	t, err := tract.Init(path, topts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "tract demo: validated generation in a throwaway repository,\n  %s\n", path)
	_, err = demo.Run(ctx, t, out)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nThe branch runs down the left. Beside it: the failed attempt and its steering,")
	fmt.Fprintln(out, "which purify moved off the branch, and the turn that compress replaced by its")
	fmt.Fprintln(out, "summary.")
	for _, args := range [][]string{{"log", "--all", "--graph"}, {"stats"}} {
		fmt.Fprintf(out, "\n$ tract %s\n", strings.Join(args, " "))
		if err := runSubcommand(ctx, f, out, path, args); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	if keep {
		fmt.Fprintf(out, "The repository is kept at %s: look around with\n", path)
		fmt.Fprintf(out, "  tract --db %s show HEAD\n  tract --db %s log --all\n\n", path, path)
	} else {
		fmt.Fprintln(out, "The repository was temporary and is removed (keep it with 'tract demo --keep').")
	}
	fmt.Fprint(out, realModelHelp)
	return nil
}

// realModelHelp ends the demo: how to do the same with a real model.
const realModelHelp = `That model was scripted. To use a real one, name a server and a model:
  export OPENAI_BASE_URL=http://localhost:11434/v1  # Ollama, vLLM, llama.cpp...
  export OPENAI_API_KEY=sk-...                      # or OpenAI itself
  export ANTHROPIC_API_KEY=sk-ant-...               # or Anthropic
  export TRACT_MODEL=llama3.2                       # or: tract config set model
  tract init
  tract chat --validate json "Describe Ada Lovelace as a JSON object"
`

// runSubcommand runs 'tract --db path args...' with f's streams, its
// standard output written to out, as the user would type it, but with no
// pager: the demo goes on by itself.
func runSubcommand(ctx context.Context, f *Factory, out io.Writer, path string, args []string) error {
	streams := *f.IO
	streams.Out = out
	sub := &Factory{IO: &streams, Getenv: f.Getenv, Getwd: f.Getwd, LockTimeout: f.LockTimeout, Clock: f.Clock,
		Validators: f.Validators}
	root := newRootCmd(sub)
	root.SetArgs(append([]string{"--db", path, "--no-pager"}, args...))
	return root.ExecuteContext(ctx)
}
