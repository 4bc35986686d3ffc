package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// InitOptions are the inputs of 'tract init'.
type InitOptions struct {
	Factory *Factory
	JSON    bool
}

// initRecord is what 'tract init --json' prints.
type initRecord struct {
	// Path is the repository file.
	Path string `json:"path"`
	// Created is false when a repository was there already.
	Created bool `json:"created"`
}

func newCmdInit(f *Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{Factory: f}
	cmd := &cobra.Command{
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
	addJSONFlag(cmd, &opts.JSON, "print the repository's path and whether it was created as JSON", "init")
	return cmd
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
		fmt.Fprintf(f.IO.ErrOut, "Repository already exists in %s; nothing changed\n", f.shownPath(path))
		return initReport(opts, f.shownPath(path), false)
	}
	if errors.Is(err, tract.ErrNotRepository) && !errors.Is(err, tract.ErrCorrupt) {
		return &hintedError{err, initNotRepositoryHint(path)}
	}
	if err != nil {
		return err
	}
	if err := t.Close(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Initialized empty tract repository in %s\n", f.shownPath(path))
	return initReport(opts, f.shownPath(path), true)
}

// shownPath is how init names the repository: a file by its absolute
// path, as git does, whatever --db said; a URL without its password.
func (f *Factory) shownPath(path string) string {
	if tract.IsDatabaseURL(path) || filepath.IsAbs(path) {
		return tract.Redact(path)
	}
	wd, err := f.Getwd()
	if err != nil {
		return path
	}
	return filepath.Join(wd, path)
}

// initReport prints the --json record, when asked for.
func initReport(opts *InitOptions, path string, created bool) error {
	if !opts.JSON {
		return nil
	}
	return writeJSON(opts.Factory.IO.Out, initRecord{Path: path, Created: created})
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// dirHint says that path, given where a repository file was wanted, is a
// directory, and what to give instead (flag names the flag, "" for none).
func dirHint(path, flag string) string {
	return fmt.Sprintf("%s is a directory: give the path of a file in it, for example %s%s.",
		path, flag, filepath.Join(path, tract.DefaultFile))
}

// initNotRepositoryHint says what to do when init is given a path that
// is a directory, or a file that is not a tract repository.
func initNotRepositoryHint(path string) string {
	if isDir(path) {
		return dirHint(path, "--db ")
	}
	return fmt.Sprintf("%s is a file that is not a tract repository; init leaves it alone. Choose another\n"+
		"path for the new repository (--db PATH or TRACT_DB).", path)
}
