package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

// IOStreams are a command's input and outputs. Results go to Out, progress
// and diagnostics to ErrOut, so 'tract ... | jq' works.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY, OutTTY and ErrTTY say whether each stream is a terminal.
	InTTY, OutTTY, ErrTTY bool
	// InPiped says standard input is a pipe or a regular file: text
	// piped or redirected in, which 'tract chat MESSAGE' puts before
	// MESSAGE. A terminal, /dev/null or another device is not.
	InPiped bool
	// Color enables ANSI colour on Out (terminal and no NO_COLOR).
	Color bool
	// OutFile is the file Out writes to, when it is one: a pager writes
	// there directly.
	OutFile *os.File
	// Interrupts exits at once on a second Ctrl-C, restoring what the
	// command registered with it; nil (a test's run) leaves the second
	// Ctrl-C to the command.
	Interrupts *interrupts
	// OneTurn, when set, is called by a command that runs one turn and
	// exits ('tract chat' without the REPL): main sets it to
	// oneTurnMemory, which leaves the heap to grow without collections
	// up to a bound; nil (a test's run) leaves the collector alone.
	OneTurn func(getenv func(string) string)
	// ImportMemory, when set, is called by 'tract import' into a
	// repository file once the import finds its memory bounded (see
	// tract.ImportBounded): main sets it to importMemory, which bounds
	// the heap; nil (a test's run) leaves the collector alone.
	ImportMemory func(getenv func(string) string)
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func systemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, OutFile: os.Stdout,
		InTTY: isTerminal(os.Stdin), OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr),
		InPiped: isPipeOrFile(os.Stdin),
	}
}

// isPipeOrFile reports whether f is a pipe (a FIFO) or a regular file:
// data a shell piped or redirected in, not a terminal or a device such
// as /dev/null, which a program that gives tract no input often passes.
func isPipeOrFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && (fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular())
}

// Factory holds what every command needs: streams, environment and the way
// to open the repository. Tests build one with fakes.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	Getwd  func() (string, error)
	// DBFlag is the value of the global --db flag.
	DBFlag string
	// LockTimeout bounds each transaction's wait for another process's
	// lock: the --lock-timeout flag, else TRACT_LOCK_TIMEOUT, else 5s.
	LockTimeout time.Duration
	// LockTimeoutSet says whether --lock-timeout was given.
	LockTimeoutSet bool
	// MaxMessageSize is the value of the global --max-message-size flag,
	// and MaxMessageSizeSet whether it was given (see Factory.limits).
	MaxMessageSize    string
	MaxMessageSizeSet bool
	// NoColor is the global --no-color flag: no ANSI colour on any
	// stream, as with NO_COLOR.
	NoColor bool
	// NoPager is the global --no-pager flag.
	NoPager bool
	// Clock, when set, replaces time.Now for commits (tests).
	Clock func() time.Time
	// Quiet is the global --quiet flag: no progress lines.
	Quiet bool
	// Context is the command's context (nil: none), which the repository
	// is opened with: a database stops waiting on its server when it is
	// cancelled (Ctrl-C).
	Context context.Context
	// wait, when set, is the line that shows a model call under way on
	// standard error (see waitLine): chat sets it, and every client
	// newClient builds then shows it.
	wait *waitLine
	// Validators parses --validate specs (nil: a parser of retry's
	// built-in kinds). Its kinds are what help, completion and errors
	// list: a program, or a test, with kinds of its own sets it.
	Validators *retry.SpecParser
}

func newFactory(io *IOStreams, getenv func(string) string) *Factory {
	f := &Factory{IO: io, Getenv: getenv, Getwd: os.Getwd, LockTimeout: 5 * time.Second}
	io.Color = io.OutTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return f
}

// validators returns the parser of --validate specs: Validators, else
// one of retry's built-in kinds.
func (f *Factory) validators() *retry.SpecParser {
	if f.Validators == nil {
		return retry.NewSpecParser(retry.Kinds()...)
	}
	return f.Validators
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

func (f *Factory) options() ([]tract.Option, error) {
	timeout, err := f.lockTimeout()
	if err != nil {
		return nil, err
	}
	limits, err := f.limits()
	if err != nil {
		return nil, err
	}
	opts := []tract.Option{tract.WithLockTimeout(timeout), tract.WithLimits(limits), tract.WithIndexProgress(f.indexNote())}
	if f.Context != nil {
		opts = append(opts, tract.WithContext(f.Context))
	}
	if f.Clock != nil {
		opts = append(opts, tract.WithClock(f.Clock))
	}
	return opts, nil
}

// lockTimeout returns --lock-timeout, else TRACT_LOCK_TIMEOUT, else the
// default. A value that is not a duration of 0 or more is a usage error:
// ignoring it would wait for a time the user did not ask for.
func (f *Factory) lockTimeout() (time.Duration, error) {
	if f.LockTimeoutSet {
		if f.LockTimeout < 0 {
			return 0, usageErrorf("--lock-timeout %s: the wait cannot be negative (0 means do not wait)", f.LockTimeout)
		}
		return f.LockTimeout, nil
	}
	s := f.Getenv("TRACT_LOCK_TIMEOUT")
	if s == "" {
		return f.LockTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, envErrorf("TRACT_LOCK_TIMEOUT", "10s", "--lock-timeout",
			"TRACT_LOCK_TIMEOUT=%q is not a lock timeout: give a duration such as 10s, 1m or 500ms (0 means do not wait)", s)
	}
	return d, nil
}

// limits returns the size limits of the command line: the message size
// of --max-message-size, else TRACT_MAX_MESSAGE_SIZE, else tract's
// default.
func (f *Factory) limits() (tract.Limits, error) {
	n, err := f.size("--max-message-size", f.MaxMessageSize, f.MaxMessageSizeSet, "TRACT_MAX_MESSAGE_SIZE")
	return tract.Limits{MessageSize: n}, err
}

// size returns the size a flag's value gives when the flag was set, else
// the one the environment variable env gives, else 0 (tract's default).
// A value that is not a size is a usage error: ignoring it would apply a
// limit the user did not ask for.
func (f *Factory) size(flag, value string, set bool, env string) (int64, error) {
	if set {
		n, err := parseSize(value)
		if err != nil {
			return 0, usageErrorf("%s %v", flag, err)
		}
		return n, nil
	}
	if v := f.Getenv(env); v != "" {
		n, err := parseSize(v)
		if err != nil {
			example := "64MiB"
			if env == "TRACT_MAX_INPUT" {
				example = "16GiB"
			}
			return 0, envErrorf(env, example, flag, "%s=%v", env, err)
		}
		return n, nil
	}
	return 0, nil
}

// Open opens the repository for a command, with extra options after the
// command line's and the environment's (tract.WithReadOnly, say).
func (f *Factory) Open(extra ...tract.Option) (*tract.Tract, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	p, err := f.RepoPath(false)
	if err != nil {
		return nil, err
	}
	return tract.Open(p, append(opts, extra...)...)
}

// readText returns text from a -m value, or from stdin when the value is
// empty or "-". It refuses to wait on a terminal with nothing typed, and
// reads no more of stdin than the message size limit allows (and a final
// newline, which it drops).
func readText(f *Factory, value string, set bool) (string, error) {
	if set && value != "-" {
		return value, nil
	}
	if f.IO.InTTY && !set {
		return "", usageErrorf("no text: pass -m TEXT, or pipe the text on standard input")
	}
	limits, err := f.limits()
	if err != nil {
		return "", err
	}
	limit := limits.MessageSize
	if limit == 0 {
		limit = tract.DefaultMaxMessageSize
	}
	b, err := io.ReadAll(io.LimitReader(f.IO.In, limit+2))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	text := strings.TrimSuffix(string(b), "\n")
	if n := int64(len(text)); n > limit {
		tooLarge := &tract.TooLargeError{What: "standard input", Size: n, Limit: limit, Which: tract.LimitMessageSize}
		if int64(len(b)) == limit+2 {
			tooLarge.Size, tooLarge.More = limit, true // there may be more: it was not read
		}
		return "", tooLarge
	}
	return text, nil
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

// envError is a usage error (exit 2) in an environment variable: the
// command line is not what is wrong, so no "Run 'tract X --help'" follows
// it; its hint says how to set the variable right or unset it.
type envError struct {
	err error
	// Name is the variable, Example a value it takes, and Flag the flag
	// that overrides it for one command ("" when none does).
	Name, Example, Flag string
}

func (e *envError) Error() string { return e.err.Error() }
func (e *envError) Unwrap() error { return e.err }

// hint says how to fix the variable.
func (e *envError) hint() string {
	h := fmt.Sprintf("%s comes from your environment: fix it (export %s=%s) or unset it (unset %s)",
		e.Name, e.Name, e.Example, e.Name)
	if e.Flag != "" {
		h += fmt.Sprintf(";\n%s overrides it for one command", e.Flag)
	}
	return h + "."
}

func envErrorf(name, example, flag, format string, args ...any) error {
	return &envError{err: fmt.Errorf(format, args...), Name: name, Example: example, Flag: flag}
}

// notFoundError marks an error as something the command line named not
// existing, such as an input file (exit 8, like an unknown revision).
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// hintedError is an error with the hint its command gives for it, where
// the hint of its class (errorHint) does not fit the command: 'tract
// init' is not told to run 'tract init'.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }
