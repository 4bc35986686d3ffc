package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/tractdag/tract"
)

// IOStreams are a command's input and outputs. Results go to Out, progress
// and diagnostics to ErrOut, so 'tract ... | jq' works.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY, OutTTY and ErrTTY say whether each stream is a terminal.
	InTTY, OutTTY, ErrTTY bool
	// Color enables ANSI colour on Out (terminal and no NO_COLOR).
	Color bool
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func systemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY: isTerminal(os.Stdin), OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr),
	}
}

// Factory holds what every command needs: streams, environment and the way
// to open the repository. Tests build one with fakes.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	Getwd  func() (string, error)
	// DBFlag is the value of the global --db flag.
	DBFlag string
	// LockTimeout bounds the wait for another process's lock.
	LockTimeout time.Duration
	// Clock, when set, replaces time.Now for commits (tests).
	Clock func() time.Time
}

func newFactory(io *IOStreams, getenv func(string) string) *Factory {
	f := &Factory{IO: io, Getenv: getenv, Getwd: os.Getwd, LockTimeout: 5 * time.Second}
	io.Color = io.OutTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return f
}

// RepoPath returns the repository path: --db, else TRACT_DB, else the
// nearest .tract/tract.db. With forInit it returns where init should
// create one instead of searching.
func (f *Factory) RepoPath(forInit bool) (string, error) {
	if f.DBFlag != "" {
		return f.DBFlag, nil
	}
	if p := f.Getenv("TRACT_DB"); p != "" {
		return p, nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	if forInit {
		return filepath.Join(wd, tract.DefaultDir, tract.DefaultFile), nil
	}
	return tract.FindRepository(wd)
}

func (f *Factory) options() []tract.Option {
	opts := []tract.Option{tract.WithLockTimeout(f.LockTimeout)}
	if f.Clock != nil {
		opts = append(opts, tract.WithClock(f.Clock))
	}
	if d := f.Getenv("TRACT_LOCK_TIMEOUT"); d != "" {
		if v, err := time.ParseDuration(d); err == nil {
			opts = append(opts, tract.WithLockTimeout(v))
		}
	}
	return opts
}

// Open opens the repository for a command.
func (f *Factory) Open() (*tract.Tract, error) {
	p, err := f.RepoPath(false)
	if err != nil {
		return nil, err
	}
	return tract.Open(p, f.options()...)
}

// readText returns text from a -m value, or from stdin when the value is
// empty or "-". It refuses to wait on a terminal with nothing typed.
func readText(f *Factory, value string, set bool) (string, error) {
	if set && value != "-" {
		return value, nil
	}
	if f.IO.InTTY && !set {
		return "", usageErrorf("no text: pass -m TEXT, or pipe the text on standard input")
	}
	b, err := io.ReadAll(f.IO.In)
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// usageError marks an error as the user's invocation being wrong (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
