package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract/llm"
)

// ModelsOptions are the inputs of 'tract models'.
type ModelsOptions struct {
	Factory    *Factory
	ModelFlags ModelFlags
	JSON       bool
}

func newCmdModels(f *Factory, runF func(*ModelsOptions) error) *cobra.Command {
	opts := &ModelsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models the provider offers",
		Long: `List the models of the server 'tract chat' talks to (OpenAI-compatible, or
Anthropic with --provider anthropic or a claude-* model), one id per line,
or with --json the server's full records; no repository is needed.`,
		Example: `  tract models
  tract models --provider anthropic
  OPENAI_BASE_URL=http://localhost:11434/v1 tract models
  tract models --json | jq '.[].id'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.ModelFlags.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return modelsRun(cmd, opts)
		},
	}
	addModelFlags(cmd, &opts.ModelFlags, true)
	addJSONFlag(cmd, &opts.JSON, "print the server's model records as a JSON array", "models")
	return cmd
}

func modelsRun(cmd *cobra.Command, opts *ModelsOptions) error {
	f := opts.Factory
	client, err := newClient(f, "", opts.ModelFlags, llm.ModelOptional())
	if err != nil {
		return err
	}
	models, err := client.ListModels(cmd.Context())
	if err != nil {
		return permanentModelError(err)
	}
	if opts.JSON {
		if models == nil {
			models = []llm.ModelInfo{} // [] rather than null
		}
		return writeJSON(f.IO.Out, models)
	}
	for _, m := range models {
		if _, err := fmt.Fprintln(f.IO.Out, m.ID); err != nil {
			return err
		}
	}
	return nil
}

// refusedError is a model server's refusal that retrying cannot fix (a
// 401, 403 or another 4xx): exit 7, as for 'tract chat'.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// permanentModelError marks err as a refusal when the server refused the
// key or the request.
func permanentModelError(err error) error {
	var apiErr *llm.APIError
	var bad *llm.BadResponseError
	if errors.As(err, &apiErr) && !errors.As(err, &bad) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 &&
		apiErr.StatusCode != http.StatusTooManyRequests && apiErr.StatusCode != http.StatusRequestTimeout {
		return &refusedError{err}
	}
	return err
}
