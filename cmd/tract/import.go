package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

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
	// Format is "messages" (the default) or "openai": one conversation a
	// line, each imported onto a branch of its own named Name-N.
	Format string
	Name   string
	JSON   bool
}

// importRecord is what 'tract import --json' prints.
type importRecord struct {
	// Messages is the number of commits appended.
	Messages int `json:"messages"`
	// Branch is the branch they were appended to.
	Branch string `json:"branch"`
	// Tip is where the branch points now: zero (64 zeros in JSON, as
	// everywhere a commit may be missing) when nothing was imported onto a
	// branch with no commits.
	Tip tract.Hash `json:"tip"`
}

// conversationsRecord is what 'tract import --format openai --json'
// prints.
type conversationsRecord struct {
	// Conversations is the number of lines imported, each a conversation.
	Conversations int `json:"conversations"`
	// Messages is the number of commits appended in all.
	Messages int `json:"messages"`
	// Branches are the new branches, one for each conversation, in the
	// order of the input.
	Branches []conversationBranch `json:"branches"`
}

// conversationBranch is a branch an import of conversations made.
type conversationBranch struct {
	Name string     `json:"name"`
	Tip  tract.Hash `json:"tip"`
}

func newCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "import [FILE | -]",
		Short: "Append a conversation: OpenAI messages, JSON or JSON lines",
		Long: `Append OpenAI messages to the current branch, all or none: a JSON array or
one message per line, every message shape (parts, images, tool calls), each
optionally with tract's "kind" and "meta". The input is read as a stream in
bounded memory. --format openai reads fine-tuning JSONL instead, each
conversation onto a new branch NAME-N.`,
		Example: `  tract compile --json | tract --db other.db import
  tract export --all -o sft.jsonl
  tract --db copy.db import --format openai --name sft sft.jsonl`,
		Args: maxArgs(1, "one file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			opts.MaxInputSet = cmd.Flags().Changed("max-input")
			switch {
			case opts.Format != "messages" && opts.Format != "openai":
				return usageErrorf("--format %q: use messages or openai", opts.Format)
			case opts.Format == "openai" && opts.Branch != "":
				return usageErrorf("--format openai puts each conversation on a new branch (see --name), not on --branch %s", opts.Branch)
			case opts.Format != "openai" && cmd.Flags().Changed("name"):
				return usageErrorf("--name names the branches of --format openai")
			}
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd, opts)
		},
	}
	addBranchFlag(cmd, &opts.Branch)
	cmd.Flags().StringVar(&opts.MaxInput, "max-input", "",
		"read at most `SIZE` (default $TRACT_MAX_INPUT, else 4GiB)")
	cmd.Flags().StringVar(&opts.Format, "format", "messages", "messages, or openai (JSONL)")
	setValueName(cmd.Flags(), "format", "FORMAT")
	cmd.Flags().StringVar(&opts.Name, "name", "import", "branches `NAME`-1, NAME-2 (openai)")
	addJSONFlag(cmd, &opts.JSON, "print the count, the branch and its tip as JSON", "import", "import --format openai")
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
	if opts.Format == "openai" {
		return importConversations(cmd, opts, r, maxInput)
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
		line := f.progressLine("import")
		var read atomic.Int64 // bytes read so far (the reports come from another goroutine)
		size := inputSize(r)
		if line != nil {
			r = &countingReader{r: r, n: &read}
		}
		importOpts := []tract.ImportOption{tract.ImportProgress(line.importProgress(&read, size))}
		small, err := boundedImport(cmd.Context(), t)
		if err != nil {
			return err
		}
		if small {
			importOpts = append(importOpts, tract.ImportBatch(0, importBatchBytes))
			if f.IO.ImportMemory != nil {
				importOpts = append(importOpts, tract.ImportBounded(func() { f.IO.ImportMemory(f.Getenv) }))
			}
		}
		res, err := t.ImportSeq(cmd.Context(), msgs, importOpts...)
		line.clear()
		if err != nil {
			if bad != nil && errors.Is(err, bad) {
				return &usageError{err}
			}
			return err
		}
		branch := t.Branch()
		if branch == "" {
			if branch, _, err = t.Head(cmd.Context()); err != nil {
				return err
			}
		}
		switch {
		case res.Messages > 0:
			fmt.Fprintf(f.IO.ErrOut, "Imported %s; %s is now at %s\n", english.Count(res.Messages, "message", "messages"), position(t), res.Tip.Short())
		case res.Tip.IsZero():
			fmt.Fprintf(f.IO.ErrOut, "Imported nothing (no messages in the input); branch %s still has no commits\n", branch)
		default:
			fmt.Fprintf(f.IO.ErrOut, "Imported nothing (no messages in the input); %s is still at %s\n", position(t), res.Tip.Short())
		}
		if !opts.JSON {
			return nil
		}
		return writeJSON(f.IO.Out, importRecord{Messages: res.Messages, Branch: branch, Tip: res.Tip})
	})
}

// importConversations imports r in the openai format.
func importConversations(cmd *cobra.Command, opts *ImportOptions, r io.Reader, maxInput int64) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		var bad error // a malformed input is the user's to fix: a usage error
		limits := t.Limits()
		if maxInput > 0 {
			limits.InputSize = maxInput
		}
		messages := 0
		convs := func(yield func(tract.Conversation, error) bool) {
			for c, err := range tract.ReadConversations(r, tract.ReadLimits(limits)) {
				if err != nil {
					bad = err
				}
				messages += len(c.Messages)
				if !yield(c, err) {
					return
				}
			}
		}
		bs, err := t.ImportConversations(cmd.Context(), opts.Name, convs)
		if errors.Is(err, tract.ErrBranchExists) {
			return &hintedError{err, "Name the branches after another prefix with --name NAME, or delete the branch first\n" +
				"with 'tract branch -d NAME'."}
		}
		if err != nil {
			if bad != nil && errors.Is(err, bad) || errors.Is(err, tract.ErrNoConversations) || errors.Is(err, tract.ErrInvalidBranchName) {
				return &usageError{err}
			}
			return err
		}
		onto := "branch " + bs[0].Name
		if len(bs) > 1 {
			onto = "branches " + bs[0].Name + " … " + bs[len(bs)-1].Name
		}
		fmt.Fprintf(f.IO.ErrOut, "Imported %s (%s) onto %s\n", english.Count(len(bs), "conversation", "conversations"),
			english.Count(messages, "message", "messages"), onto)
		if !opts.JSON {
			return nil
		}
		rec := conversationsRecord{Conversations: len(bs), Messages: messages, Branches: make([]conversationBranch, len(bs))}
		for i, b := range bs {
			rec.Branches[i] = conversationBranch{Name: b.Name, Tip: b.Hash}
		}
		return writeJSON(f.IO.Out, rec)
	})
}
