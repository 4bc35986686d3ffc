package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/tractdag/tract/internal/cmdrun"
)

// DefaultCmdTimeout bounds one run of a "cmd:" validator unless
// [WithCmdTimeout] says otherwise.
const DefaultCmdTimeout = 30 * time.Second

// maxCmdOutput bounds how many bytes of a command's output a diagnosis
// quotes.
const maxCmdOutput = 2000

// maxCmdTail bounds how many bytes of the end of a command's output are
// kept for a verdict's Output, which holds at most cmdOutputLines lines.
const (
	maxCmdTail     = 4096
	cmdOutputLines = 10
)

// cmdWaitDelay bounds how long a run waits for the command's output pipe to
// close after the command has been killed.
const cmdWaitDelay = cmdrun.WaitDelay

// Command returns the validator of the spec "cmd:COMMAND": command runs as
// `sh -c COMMAND` with the answer on its standard input, in the directory
// given by [WithBaseDir] (or the working directory), and the answer passes
// when it exits with status 0 within the timeout ([WithCmdTimeout], default
// [DefaultCmdTimeout]).
//
// The diagnosis is the command's standard output and standard error,
// interleaved as written, trimmed of trailing white space and cut to 2000
// bytes with a marker, after a line giving the exit status, for example
//
//	command exited with status 1:
//	answer.go:3:1: expected declaration
//
// A command still running at the timeout is killed together with every
// process it started (its process group) and the diagnosis says it timed
// out. A command that exits with status [BlockedExitCode] (77) rejects the
// answer and reports it blocked: its [Verdict] says retrying cannot fix it.
//
// Command checks that the first word of command names a shell builtin or an
// executable (found in PATH, or at that path when it contains a slash), so
// that a misspelt command is a *SpecError now rather than a diagnosis on
// every attempt. Commands that start with a quote, a variable or another
// shell construct are not checked.
func Command(command string, opts ...SpecOption) (Validator, error) {
	return newCommand(newSpec("cmd:"+command, command, opts))
}

// commandKind is the kind "cmd:COMMAND".
func commandKind() Kind {
	return Kind{
		Name: "cmd", Arg: "COMMAND", Summary: "sh -c COMMAND, answer on stdin, exits 0 (77: blocked)",
		Build: newCommand,
	}
}

type cmdValidator struct {
	name    string
	command string
	dir     string
	timeout time.Duration
}

func newCommand(s Spec) (Validator, error) {
	if strings.TrimSpace(s.Arg) == "" {
		return nil, s.SyntaxError("cmd needs a command, as in cmd:gofmt -l")
	}
	if s.CmdTimeout <= 0 {
		return nil, s.BuildError(fmt.Sprintf("command timeout is %v, must be positive", s.CmdTimeout), nil)
	}
	if err := checkCommand(s.Arg, s); err != nil {
		return nil, s.BuildError("command not found", err)
	}
	return &cmdValidator{name: s.Text, command: s.Arg, dir: s.BaseDir, timeout: s.CmdTimeout}, nil
}

// shellWords are the POSIX shell's reserved words and the builtins of the
// common shells, which exec.LookPath cannot find.
var shellWords = map[string]bool{
	"!": true, "{": true, "case": true, "for": true, "if": true, "until": true, "while": true,
	":": true, ".": true, "[": true, "alias": true, "break": true, "cd": true, "command": true,
	"continue": true, "echo": true, "eval": true, "exec": true, "exit": true, "export": true,
	"false": true, "getopts": true, "hash": true, "kill": true, "local": true, "printf": true,
	"pwd": true, "read": true, "readonly": true, "return": true, "set": true, "shift": true,
	"source": true, "test": true, "times": true, "trap": true, "true": true, "type": true,
	"ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
}

// checkCommand reports an error when the first word of command (after any
// NAME=value assignments) is neither a shell word nor an executable.
func checkCommand(command string, s Spec) error {
	var first string
	for _, w := range strings.Fields(command) {
		if name, _, ok := strings.Cut(w, "="); ok && isShellName(name) {
			continue
		}
		first = w
		break
	}
	if first == "" || shellWords[first] || strings.ContainsAny(first, "'\"`$\\(){}<>|;&*?[~") {
		return nil
	}
	if strings.Contains(first, "/") {
		first = s.Resolve(first)
	}
	if _, err := exec.LookPath(first); err != nil {
		return err
	}
	return nil
}

func isShellName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func (v *cmdValidator) Name() string { return v.name }

func (v *cmdValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	vd, err := Check(ctx, v, answer)
	return vd.OK, vd.Diagnosis, err
}

// Check runs the command on answer. A rejection's verdict names the
// command, its exit status and the last lines of its output; a timeout is
// of type FailureTimeout, and exit status [BlockedExitCode] is blocked.
func (v *cmdValidator) Check(ctx context.Context, answer string) (Verdict, error) {
	runCtx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()

	cmd := cmdrun.Command(runCtx, "sh", "-c", v.command)
	cmd.Dir = v.dir
	cmd.Stdin = strings.NewReader(answer)
	out := &cmdrun.Head{Limit: maxCmdOutput}
	tail := &cmdrun.Tail{Limit: maxCmdTail}
	w := io.MultiWriter(out, tail)
	cmd.Stdout, cmd.Stderr = w, w // one writer: exec gives both the same pipe

	err := cmd.Run()
	if ctx.Err() != nil {
		return Verdict{}, ctx.Err()
	}
	rejected := func(status string, code int) Verdict {
		summary := v.command + " " + status
		if last := lastLine(tail.String()); last != "" {
			summary += ": " + last
		}
		return Verdict{Diagnosis: withOutput("command "+status, out), Type: FailureVerification,
			Summary: summary, Command: v.command, ExitCode: code, Output: tail.LastLines(cmdOutputLines)}
	}
	var exitErr *exec.ExitError
	switch {
	case runCtx.Err() != nil:
		vd := rejected(fmt.Sprintf("timed out after %v", v.timeout), -1)
		vd.Type = FailureTimeout
		return vd, nil
	case err == nil:
		return Verdict{OK: true}, nil
	case errors.As(err, &exitErr) && exitErr.Exited():
		vd := rejected(fmt.Sprintf("exited with status %d", exitErr.ExitCode()), exitErr.ExitCode())
		if vd.ExitCode == BlockedExitCode {
			vd.Blocked = fmt.Sprintf("%s exited with status %d, which means blocked", v.command, BlockedExitCode)
			if last := lastLine(tail.String()); last != "" {
				vd.Blocked += ": " + last
			}
		}
		return vd, nil
	case errors.As(err, &exitErr):
		return rejected("was killed: "+exitErr.String(), -1), nil
	}
	return Verdict{}, fmt.Errorf("run sh: %w", err)
}

// withOutput appends a command's output to the first line of a diagnosis.
func withOutput(status string, out *cmdrun.Head) string {
	text := strings.TrimRight(string(out.Bytes()), " \t\r\n")
	if out.Dropped() > 0 {
		text += fmt.Sprintf("\n[… %d more bytes of output not shown]", out.Dropped())
	}
	if text == "" {
		return status + " (no output)"
	}
	return status + ":\n" + text
}

// lastLine returns the last line of text that is not blank, trimmed.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, " \t\r\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
