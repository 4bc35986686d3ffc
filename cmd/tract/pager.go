package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// defaultPager is the pager when neither TRACT_PAGER nor PAGER names one:
// less, quitting at once when the output fits on one screen (-F), passing
// colours through (-R) and leaving the output on the screen (-X).
const defaultPager = "less -FRX"

// shellChars are the characters that make a pager command line a shell
// command (git's list but blanks, which only separate words, and '=',
// which makes one only in the first word, an assignment): without them
// it runs directly, its words the arguments, so that the process tract
// waits for, and stops on a second Ctrl-C, is the pager itself (a shell,
// dash for one, waits for its command rather than become it).
const shellChars = "|&;<>()$`\\\"'\n*?[#~%"

// pagerArgs returns the arguments of a pager command line that needs no
// shell (see shellChars), nil for one that does.
func pagerArgs(line string) []string {
	words := strings.Fields(line)
	if len(words) == 0 || strings.ContainsAny(line, shellChars) || strings.Contains(words[0], "=") {
		return nil
	}
	return words
}

// pagerCommand returns the pager command line: TRACT_PAGER, else PAGER,
// else less; named says whether the user named it. "cat" means no pager.
func (f *Factory) pagerCommand() (line string, named bool) {
	for _, env := range []string{"TRACT_PAGER", "PAGER"} {
		if v := strings.TrimSpace(f.Getenv(env)); v != "" {
			return v, true
		}
	}
	return defaultPager, false
}

// startPager sends standard output through the user's pager when it is a
// terminal and --no-pager was not given, and returns the function that
// ends the pager: it closes the pager's input and waits for the user to
// quit it. A pager that cannot start is reported on standard error and
// the output is written directly instead (silently when the pager is the
// default less: a system without less simply has no pager).
// paging reports whether the pager runs.
func (f *Factory) startPager() (stop func(), paging bool) {
	noop := func() {}
	line, named := f.pagerCommand()
	if f.NoPager || !f.IO.OutTTY || f.IO.OutFile == nil || line == "cat" {
		return noop, false
	}
	failed := func(err error) (func(), bool) {
		if named {
			fmt.Fprintf(f.IO.ErrOut, "tract: the pager %q could not start (%v); writing directly (set TRACT_PAGER, or pass --no-pager)\n", line, err)
		}
		return noop, false
	}
	var cmd *exec.Cmd
	if args := pagerArgs(line); args != nil {
		cmd = exec.Command(args[0], args[1:]...)
	} else {
		// Through the shell; its first word must at least exist, as a
		// shell that cannot find it would start and swallow the output.
		if first := strings.Fields(line)[0]; !strings.ContainsAny(first, shellChars+"=") {
			if _, err := exec.LookPath(first); err != nil {
				return failed(err)
			}
		}
		cmd = exec.Command("/bin/sh", "-c", line)
	}
	cmd.Env = os.Environ()
	if os.Getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if os.Getenv("LV") == "" {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	cmd.Stdout = f.IO.OutFile
	cmd.Stderr = f.IO.ErrOut
	in, err := cmd.StdinPipe()
	if err != nil {
		return failed(err)
	}
	if err := cmd.Start(); err != nil {
		return failed(err)
	}
	out := f.IO.Out
	flush(out) // anything written before goes first
	paged := bufio.NewWriterSize(in, 64<<10)
	f.IO.Out = paged
	// A second Ctrl-C exits at once: the pager is asked to quit (and so
	// to put the terminal back) first; one run through a shell is that
	// shell's descendant, asked too.
	forget := f.IO.Interrupts.onHardExit(func() {
		terminateDescendants(cmd.Process.Pid)
		_ = cmd.Process.Signal(syscall.SIGTERM)
	})
	return func() {
		defer forget()
		// The user may quit the pager before the end: a broken pipe then
		// is no error.
		_ = paged.Flush()
		_ = in.Close()
		_ = cmd.Wait()
		f.IO.Out = out
	}, true
}

// errPagedInterrupt is an interruption (Ctrl-C) while the pager ran: the
// user stopped the output, and the pager had the screen, so the command
// exits 130 with nothing more to say, as git does.
var errPagedInterrupt = errors.New("interrupted while paging")

// withPager runs fn with standard output through the pager (see
// startPager). The user quitting the pager early is no error of fn's.
// Ctrl-C while the pager runs is errPagedInterrupt.
func withPager(f *Factory, fn func() error) error {
	stop, paging := f.startPager()
	err := fn()
	stop()
	interrupted := errors.Is(err, context.Canceled) || f.Context != nil && f.Context.Err() != nil
	switch {
	case paging && interrupted:
		// Whichever came first, the cancellation or the pipe the pager
		// closed when the user quit it.
		return errPagedInterrupt
	case err != nil && isBrokenPipe(err):
		return nil
	}
	return err
}
