package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// ImportOptions are the inputs of 'tract import'.
type ImportOptions struct {
	Factory *Factory
	File    string
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch string
}

func newCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "import [FILE | -]",
		Short: "Append a conversation (OpenAI messages as a JSON array or JSON lines) in one transaction",
		Long: `Append messages to the current branch in one transaction: all or none. The
input is a JSON array of {"role","content"} objects (the OpenAI "messages"
format, as 'tract compile --json' prints) or one such object per line. Each
object may also carry "kind" (default message) and "meta" (a JSON object).`,
		Example: `  tract compile --json | tract --db other.db import`,
		Args:    maxArgs(1, "one file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd, opts)
		},
	}
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

func importRun(cmd *cobra.Command, opts *ImportOptions) error {
	f := opts.Factory
	var r io.Reader = f.IO.In
	if opts.File != "" && opts.File != "-" {
		fh, err := os.Open(opts.File)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	msgs, err := decodeMessages(r)
	if err != nil {
		return err
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		tip, err := t.Import(cmd.Context(), msgs)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Imported %s; %s is now at %s\n", plural(len(msgs), "message", "messages"), position(t), tip.Short())
		return nil
	})
}

// decodeMessages reads a JSON array or JSON lines of messages.
func decodeMessages(r io.Reader) ([]tract.ImportMessage, error) {
	br := bufio.NewReader(r)
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	var msgs []tract.ImportMessage
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &msgs); err != nil {
			return nil, usageErrorf("input is not a JSON array of messages: %v", err)
		}
		return msgs, nil
	}
	d := json.NewDecoder(bytes.NewReader(trimmed))
	for i := 1; d.More(); i++ {
		var m tract.ImportMessage
		if err := d.Decode(&m); err != nil {
			return nil, usageErrorf("message %d is not a JSON object with role and content: %v", i, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}
