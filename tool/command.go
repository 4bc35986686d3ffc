package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/internal/cmdrun"
	"github.com/tractdag/tract/llm"
)

// DefaultTimeout bounds one run of a Command tool unless Timeout says
// otherwise.
const DefaultTimeout = 30 * time.Second

// DefaultMaxOutput is how many bytes of a Command tool's standard output
// make its result unless MaxOutput says otherwise; the rest is cut, with a
// line saying how much.
const DefaultMaxOutput = 64 << 10

// maxStderr bounds how many bytes of a failed command's standard error its
// *CommandError quotes.
const maxStderr = 2000

// CommandOption configures a Command tool.
type CommandOption func(*commandConfig)

type commandConfig struct {
	timeout   time.Duration
	dir       string
	env       []string
	maxOutput int
}

// Timeout bounds one run of the command (default DefaultTimeout): a
// command still running then is killed with every process it started.
func Timeout(d time.Duration) CommandOption { return func(c *commandConfig) { c.timeout = d } }

// Dir runs the command in dir (default: the working directory); a relative
// argv[0] with a slash is found there too.
func Dir(dir string) CommandOption { return func(c *commandConfig) { c.dir = dir } }

// Env is the command's environment, "KEY=value" entries (default: this
// process's environment).
func Env(env []string) CommandOption { return func(c *commandConfig) { c.env = env } }

// MaxOutput bounds how many bytes of standard output make the result
// (default DefaultMaxOutput).
func MaxOutput(n int) CommandOption { return func(c *commandConfig) { c.maxOutput = n } }

// CommandError is a run of a Command tool that did not succeed: the
// command exited with a status other than 0, was killed, or timed out.
// Its text, which the turn sends to the model as the call's error, gives
// the status and the command's standard error.
type CommandError struct {
	// Argv is the command that ran.
	Argv []string
	// ExitCode is the command's exit status; -1 when it was killed or
	// timed out.
	ExitCode int
	// Timeout is the timeout the command ran out of (0 when it did not).
	Timeout time.Duration
	// Signal describes the signal that killed the command ("" when none
	// did).
	Signal string
	// Stderr is the command's standard error (or, when that is empty, its
	// standard output), trimmed and cut to 2000 bytes with a marker.
	Stderr string
}

// Error says how the command ended and quotes its output.
func (e *CommandError) Error() string {
	var status string
	switch {
	case e.Timeout > 0:
		status = fmt.Sprintf("timed out after %v", e.Timeout)
	case e.Signal != "":
		status = "was killed: " + e.Signal
	default:
		status = fmt.Sprintf("exited with status %d", e.ExitCode)
	}
	msg := "command " + filepath.Base(e.Argv[0]) + " " + status
	if e.Stderr == "" {
		return msg + " (no output)"
	}
	return msg + ": " + e.Stderr
}

// CheckName reports an error when name is not a tool name the providers
// accept: 1 to 64 letters, digits, "_" and "-".
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("tool name %q: a tool's name is 1 to 64 letters, digits, \"_\" and \"-\"", name)
	}
	return nil
}

// Command returns a tool that runs argv for each call, without a shell
// (argv is ["sh", "-c", "…"] when a shell is wanted): the call's arguments,
// a JSON object, are written on its standard input, and its standard
// output, with trailing white space trimmed and cut to MaxOutput bytes, is the
// result. A run that exits with a status other than 0, is killed or times
// out (Timeout) returns a *CommandError carrying the command's standard
// error; a timeout or a cancelled context kills the command with every
// process it started.
//
// Command checks def's name (CheckName), that def.Parameters, when set, is
// a JSON object, and that argv[0] is an executable (found in PATH, or at
// that path when it holds a slash), so that a misspelt command is an error
// now rather than on every call.
func Command(def llm.ToolDef, argv []string, opts ...CommandOption) (Tool, error) {
	cfg := commandConfig{timeout: DefaultTimeout, maxOutput: DefaultMaxOutput}
	for _, o := range opts {
		o(&cfg)
	}
	if err := CheckName(def.Name); err != nil {
		return Tool{}, err
	}
	switch {
	case len(argv) == 0 || argv[0] == "":
		return Tool{}, fmt.Errorf("tool %s: no command", def.Name)
	case cfg.timeout <= 0:
		return Tool{}, fmt.Errorf("tool %s: timeout %v, must be positive", def.Name, cfg.timeout)
	case cfg.maxOutput <= 0:
		return Tool{}, fmt.Errorf("tool %s: max output %d bytes, must be positive", def.Name, cfg.maxOutput)
	}
	if def.Parameters != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(def.Parameters, &obj); err != nil || obj == nil {
			return Tool{}, fmt.Errorf("tool %s: the parameters' schema is not a JSON object", def.Name)
		}
	}
	path := argv[0]
	if strings.Contains(path, "/") && !filepath.IsAbs(path) && cfg.dir != "" {
		path = filepath.Join(cfg.dir, path)
	}
	if _, err := exec.LookPath(path); err != nil {
		return Tool{}, fmt.Errorf("tool %s: command not found: %w", def.Name, err)
	}
	argv = append([]string(nil), argv...)
	c := &command{argv: argv, cfg: cfg}
	return Tool{Def: def, Run: c.run}, nil
}

type command struct {
	argv []string
	cfg  commandConfig
}

func (c *command) run(ctx context.Context, args json.RawMessage) (string, error) {
	runCtx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	cmd := cmdrun.Command(runCtx, c.argv[0], c.argv[1:]...)
	cmd.Dir = c.cfg.dir
	cmd.Env = c.cfg.env
	cmd.Stdin = strings.NewReader(string(args))
	stdout := &cmdrun.Head{Limit: c.cfg.maxOutput}
	stderr := &cmdrun.Head{Limit: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	err := cmd.Run()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	failed := func() *CommandError {
		out := stderr
		if len(strings.TrimSpace(string(out.Bytes()))) == 0 {
			out = &cmdrun.Head{Limit: maxStderr}
			_, _ = out.Write(stdout.Bytes())
		}
		return &CommandError{Argv: c.argv, ExitCode: -1, Stderr: quote(out, "output")}
	}
	var exitErr *exec.ExitError
	switch {
	case runCtx.Err() != nil:
		e := failed()
		e.Timeout = c.cfg.timeout
		return "", e
	case err == nil:
		return quote(stdout, "output"), nil
	case errors.As(err, &exitErr) && exitErr.Exited():
		e := failed()
		e.ExitCode = exitErr.ExitCode()
		return "", e
	case errors.As(err, &exitErr):
		e := failed()
		e.Signal = exitErr.String()
		return "", e
	}
	return "", fmt.Errorf("run %s: %w", c.argv[0], err)
}

// quote is the text of out: valid UTF-8, trailing white space trimmed,
// with a line saying how many bytes were cut.
func quote(out *cmdrun.Head, what string) string {
	text := strings.ToValidUTF8(strings.TrimRight(string(out.Bytes()), " \t\r\n"), string(utf8.RuneError))
	if out.Dropped() > 0 {
		text += fmt.Sprintf("\n[… %d more bytes of %s not shown]", out.Dropped(), what)
	}
	return text
}
