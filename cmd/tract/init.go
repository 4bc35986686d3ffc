package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// InitOptions are the inputs of 'tract init'.
type InitOptions struct {
	Factory *Factory
}

func newCmdInit(f *Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{Factory: f}
	return &cobra.Command{
		Use:   "init",
		Short: "Create an empty repository (.tract/tract.db, or --db PATH)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
}

func initRun(opts *InitOptions) error {
	f := opts.Factory
	path, err := f.RepoPath(true)
	if err != nil {
		return err
	}
	topts, err := f.options()
	if err != nil {
		return err
	}
	t, err := tract.Init(path, topts...)
	if errors.Is(err, tract.ErrExists) {
		fmt.Fprintf(f.IO.ErrOut, "Repository already exists in %s; nothing changed\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	if err := t.Close(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Initialized empty tract repository in %s\n", path)
	return nil
}
