package retry

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// validKinds lists the spec kinds for error messages.
const validKinds = "json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA"

// SpecKinds returns the kinds of spec ParseSpec accepts, as a spec begins
// with them: "json", and the others with the colon their argument follows
// ("schema:", "regex:", …). Shell completion offers them.
func SpecKinds() []string {
	return []string{"json", "schema:", "regex:", "contains:", "maxlen:", "minlen:", "cmd:", "llm:"}
}

// ErrNoJudge is wrapped by the *SpecError of an "llm:" spec parsed
// without a judge (see WithJudge).
var ErrNoJudge = errors.New("none is configured")

// SpecError reports a validator that cannot be built: a spec string that
// does not parse, or one whose validator could not run (a bad regular
// expression, a schema file that is missing or not a schema, a command that
// does not exist, an llm validator without a judge). It is a configuration
// error, reported before any model call.
type SpecError struct {
	Spec   string // the spec string as given
	Reason string // what is wrong, in words
	Err    error  // the underlying error, if any
}

// Error returns the SpecError message.
func (e *SpecError) Error() string {
	msg := fmt.Sprintf("invalid validator %q: %s", e.Spec, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the error the SpecError wraps.
func (e *SpecError) Unwrap() error { return e.Err }

// syntaxError is a SpecError about the spec string itself; its message
// lists the valid kinds.
func syntaxError(spec, reason string) *SpecError {
	return &SpecError{Spec: spec, Reason: reason + " (valid validators: " + validKinds + ")"}
}

// SpecOption configures how ParseSpec and ParseSpecs (and the validator
// constructors that take options) build validators.
type SpecOption func(*specConfig)

type specConfig struct {
	baseDir    string
	cmdTimeout time.Duration
	judge      JudgeFunc
}

func newSpecConfig(opts []SpecOption) specConfig {
	cfg := specConfig{cmdTimeout: DefaultCmdTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// resolve makes a relative path relative to the base directory, and
// absolute.
func (c specConfig) resolve(path string) string {
	if !filepath.IsAbs(path) && c.baseDir != "" {
		path = filepath.Join(c.baseDir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// WithBaseDir resolves relative schema paths and runs "cmd:" commands in dir
// instead of the working directory.
func WithBaseDir(dir string) SpecOption {
	return func(c *specConfig) { c.baseDir = dir }
}

// WithCmdTimeout sets how long a "cmd:" validator's command may run
// (default [DefaultCmdTimeout]).
func WithCmdTimeout(d time.Duration) SpecOption {
	return func(c *specConfig) { c.cmdTimeout = d }
}

// WithJudge sets the model that "llm:" validators ask. Without it an "llm:"
// spec is a *SpecError.
func WithJudge(judge JudgeFunc) SpecOption {
	return func(c *specConfig) { c.judge = judge }
}

// ParseSpec builds the validator a spec string describes. A spec is a kind,
// then for every kind but json a colon and an argument that runs to the end
// of the string (so it may itself contain colons):
//
//	json             the whole answer is JSON                    [JSON]
//	schema:PATH      JSON satisfying the JSON Schema in PATH     [Schema]
//	regex:RE         RE (Go syntax) matches the answer           [Regex]
//	contains:TEXT    TEXT occurs in the answer                   [Contains]
//	maxlen:N         at most N characters                        [MaxLen]
//	minlen:N         at least N characters                       [MinLen]
//	cmd:COMMAND      sh -c COMMAND, fed the answer, exits 0      [Command]
//	llm:CRITERIA     a judge model finds that CRITERIA holds     [Judge]
//
// The validator's Name is spec. Anything that would stop the validator from
// running is found here and reported as a *SpecError: an unknown kind, a
// missing argument, a bad number, a bad regular expression, a missing or
// invalid schema file, a command that cannot be found, an llm spec without
// [WithJudge].
func ParseSpec(spec string, opts ...SpecOption) (Validator, error) {
	return parseSpec(spec, newSpecConfig(opts))
}

// ParseSpecs parses every spec with ParseSpec and combines the validators
// with [All], in the order given; it returns the first *SpecError. With no
// specs it returns a validator that always passes.
func ParseSpecs(specs []string, opts ...SpecOption) (Validator, error) {
	cfg := newSpecConfig(opts)
	vs := make([]Validator, 0, len(specs))
	for _, spec := range specs {
		v, err := parseSpec(spec, cfg)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return All(vs...), nil
}

func parseSpec(spec string, cfg specConfig) (Validator, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch kind {
	case "json":
		if hasArg {
			return nil, syntaxError(spec, "json takes no argument")
		}
		return JSON(), nil
	case "schema":
		return newSchema(spec, arg, cfg)
	case "regex":
		return newRegex(spec, arg)
	case "contains":
		if arg == "" {
			return nil, syntaxError(spec, "contains needs the text to look for, as in contains:Summary")
		}
		return Contains(arg), nil
	case "maxlen", "minlen":
		n, err := parseLength(spec, kind, arg, hasArg)
		if err != nil {
			return nil, err
		}
		return &lengthValidator{name: spec, bound: n, isMax: kind == "maxlen"}, nil
	case "cmd":
		return newCommand(spec, arg, cfg)
	case "llm":
		return newJudge(spec, arg, cfg)
	case "":
		if spec == "" {
			return nil, syntaxError(spec, "empty spec")
		}
		return nil, syntaxError(spec, "missing kind before the colon")
	}
	return nil, syntaxError(spec, fmt.Sprintf("unknown kind %q", kind))
}

func parseLength(spec, kind, arg string, hasArg bool) (int, error) {
	if !hasArg || arg == "" {
		return 0, syntaxError(spec, kind+" needs a number of characters, as in "+kind+":200")
	}
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || n < 0 {
		return 0, syntaxError(spec, fmt.Sprintf("%s needs a whole number of characters, 0 or more, not %q", kind, arg))
	}
	return n, nil
}
