package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// ImportOptions are the inputs of 'tract import'.
type ImportOptions struct {
	Factory *Factory
	File    string
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch string
	// MaxInput is the value of --max-input, and MaxInputSet whether it
	// was given.
	MaxInput    string
	MaxInputSet bool
	JSON        bool
}

// importRecord is what 'tract import --json' prints.
type importRecord struct {
	// Messages is the number of commits appended.
	Messages int `json:"messages"`
	// Branch is the branch they were appended to.
	Branch string `json:"branch"`
	// Tip is where the branch points now.
	Tip tract.Hash `json:"tip"`
}

func newCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "import [FILE | -]",
		Short: "Append a conversation: OpenAI messages as a JSON array or JSON lines",
		Long: `Append messages to the current branch: all or none. The input is a JSON
array of {"role","content"} objects (the OpenAI "messages" format, as 'tract
compile --json' prints) or one such object per line. Each object may also
carry "kind" (default message) and "meta" (a JSON object).

The input is read as a stream, so memory stays bounded whatever its size.
A large input is written in batches, one transaction each, and the branch
moves once, when the last one lands; an import that fails or is
interrupted leaves the branch where it was.

Limits: the text of a message may hold up to --max-message-size (default
16MiB), its metadata 1MiB, and its JSON (a line, or an array element) 4
times the message size and 1MiB; the whole input may hold up to --max-input
(default 4GiB). Input over a limit, or text that is not valid UTF-8, is
refused with its message and line, and nothing is imported.`,
		Example: `  tract compile --json | tract --db other.db import`,
		Args:    maxArgs(1, "one file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			opts.MaxInputSet = cmd.Flags().Changed("max-input")
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd, opts)
		},
	}
	addBranchFlag(cmd, &opts.Branch)
	cmd.Flags().StringVar(&opts.MaxInput, "max-input", "",
		"the most input to read: bytes, or a size such as 512MiB or 16GiB (default $TRACT_MAX_INPUT, else 4GiB)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the number of messages imported, the branch and its new tip as JSON")
	return cmd
}

func importRun(cmd *cobra.Command, opts *ImportOptions) error {
	f := opts.Factory
	maxInput, err := f.size("--max-input", opts.MaxInput, opts.MaxInputSet, "TRACT_MAX_INPUT")
	if err != nil {
		return err
	}
	var r io.Reader = f.IO.In
	if opts.File != "" && opts.File != "-" {
		fh, err := os.Open(opts.File)
		if errors.Is(err, fs.ErrNotExist) {
			return &notFoundError{err}
		}
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		// A malformed input is the user's to fix: a usage error.
		var bad error
		limits := t.Limits()
		if maxInput > 0 {
			limits.InputSize = maxInput
		}
		msgs := func(yield func(tract.ImportMessage, error) bool) {
			for m, err := range tract.ReadMessages(r, tract.ReadLimits(limits)) {
				if err != nil {
					bad = err
				}
				if !yield(m, err) {
					return
				}
			}
		}
		res, err := t.ImportSeq(cmd.Context(), msgs)
		if err != nil {
			if bad != nil && errors.Is(err, bad) {
				return &usageError{err}
			}
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Imported %s; %s is now at %s\n", english.Count(res.Messages, "message", "messages"), position(t), res.Tip.Short())
		if !opts.JSON {
			return nil
		}
		branch := t.Branch()
		if branch == "" {
			if branch, _, err = t.Head(cmd.Context()); err != nil {
				return err
			}
		}
		return writeJSON(f.IO.Out, importRecord{Messages: res.Messages, Branch: branch, Tip: res.Tip})
	})
}
