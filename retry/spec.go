package retry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// SpecKinds returns what a spec of each built-in kind begins with, in
// order: "json", and the others with the colon their argument follows
// ("schema:", "regex:", …). Shell completion offers them; see [Kind.Prefix].
func SpecKinds() []string {
	kinds := Kinds()
	prefixes := make([]string, len(kinds))
	for i, k := range kinds {
		prefixes[i] = k.Prefix()
	}
	return prefixes
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
	Reason string // what is wrong, in words ("" when Err says it all)
	Err    error  // the underlying error, if any
}

// Error returns the SpecError message.
func (e *SpecError) Error() string {
	msg := fmt.Sprintf("invalid validator %q", e.Spec)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the error the SpecError wraps.
func (e *SpecError) Unwrap() error { return e.Err }

// SpecOption configures how a SpecParser, ParseSpec and ParseSpecs (and
// the validator constructors that take options) build validators; a
// Kind's Build reads the options in its Spec.
type SpecOption func(*specConfig)

type specConfig struct {
	baseDir    string
	cmdTimeout time.Duration
	judge      JudgeFunc
	fixJSON    bool
}

func newSpecConfig(opts []SpecOption) specConfig {
	cfg := specConfig{cmdTimeout: DefaultCmdTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// spec returns the Spec of text, with argument arg, that c configures,
// for a parser of kinds.
func (c specConfig) spec(text, arg string, kinds []Kind) Spec {
	return Spec{Text: text, Arg: arg, BaseDir: c.baseDir, CmdTimeout: c.cmdTimeout, Judge: c.judge, FixJSON: c.fixJSON, kinds: kinds}
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

// WithFixJSON makes the spec "json" build [FixJSON] instead of [JSON]: a
// validator that fixes an answer it can make JSON without changing any
// value (see [RepairJSON]) and rejects the others.
func WithFixJSON() SpecOption {
	return func(c *specConfig) { c.fixJSON = true }
}

// SpecParser builds validators from spec strings of its kinds. A spec is a
// kind's name, then, for a kind that takes an argument, a colon and the
// argument, which runs to the end of the string (so it may itself contain
// colons): "json", "maxlen:200", "regex:^a:b$". [ParseSpec] and
// [ParseSpecs] parse the built-in kinds; a program that has kinds of its
// own parses with NewSpecParser(append(Kinds(), mine...)...).
//
// Make one with NewSpecParser: the zero SpecParser knows no kind.
type SpecParser struct {
	kinds []Kind // in the order of help and errors; names unique
}

// NewSpecParser returns a parser of kinds, which help and errors list in
// the order given. It panics when a kind has no name, a name with a colon
// or white space, or no Build, or when two kinds share a name: those are
// mistakes of the program that declares them, found at its start, not
// errors of its user (as http.ServeMux.Handle panics on a pattern given
// twice).
func NewSpecParser(kinds ...Kind) *SpecParser {
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		if problem := checkKind(k); problem != "" {
			panic("retry.NewSpecParser: " + problem)
		}
		if seen[k.Name] {
			panic(fmt.Sprintf("retry.NewSpecParser: two kinds are named %q", k.Name))
		}
		seen[k.Name] = true
	}
	return &SpecParser{kinds: slices.Clone(kinds)}
}

// Kinds returns the parser's kinds, in order (a copy).
func (p *SpecParser) Kinds() []Kind { return slices.Clone(p.kinds) }

// Usages lists the parser's kinds as a spec error does, their usages
// joined by commas: "json, schema:PATH, regex:RE, …".
func (p *SpecParser) Usages() string { return kindList(p.kinds) }

// Parse builds the validator spec describes, with the options opts. The
// validator's Name is spec. Anything that would stop the validator from
// running is found here and reported as a *SpecError: an empty spec, an
// unknown kind (the error lists the parser's kinds), an argument given to
// a kind that takes none, and whatever the kind's Build refuses (for the
// built-in kinds: a missing argument, a bad number, a bad regular
// expression, a missing or invalid schema file, a command that cannot be
// found, an llm spec without [WithJudge]).
func (p *SpecParser) Parse(spec string, opts ...SpecOption) (Validator, error) {
	return p.parse(spec, newSpecConfig(opts))
}

// ParseAll parses every spec with Parse and combines the validators with
// [All], in the order given; it returns the first *SpecError. With no
// specs it returns a validator that always passes.
func (p *SpecParser) ParseAll(specs []string, opts ...SpecOption) (Validator, error) {
	cfg := newSpecConfig(opts)
	vs := make([]Validator, 0, len(specs))
	for _, spec := range specs {
		v, err := p.parse(spec, cfg)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return All(vs...), nil
}

func (p *SpecParser) parse(spec string, cfg specConfig) (Validator, error) {
	name, arg, hasArg := strings.Cut(spec, ":")
	kinds := p.kinds
	if kinds == nil {
		kinds = []Kind{} // the zero parser's: none, not the built-in ones
	}
	s := cfg.spec(spec, arg, kinds)
	i := slices.IndexFunc(p.kinds, func(k Kind) bool { return k.Name == name })
	switch {
	case spec == "":
		return nil, s.SyntaxError("empty spec")
	case !utf8.ValidString(spec):
		// Its diagnoses, which quote it, could not be committed: refused
		// before any model call, not after the first failed attempt.
		return nil, s.BuildError(fmt.Sprintf("not valid UTF-8 (byte %d)", invalidUTF8At(spec)), nil)
	case name == "":
		return nil, s.SyntaxError("missing kind before the colon")
	case i < 0:
		return nil, s.SyntaxError(fmt.Sprintf("unknown kind %q", name))
	}
	k := p.kinds[i]
	if k.Arg == "" && hasArg {
		return nil, s.SyntaxError(name + " takes no argument")
	}
	v, err := k.Build(s)
	se, isSpecErr := err.(*SpecError) // s.SyntaxError's or s.BuildError's, as is; not one it wraps
	switch {
	case isSpecErr:
		if se.Spec == "" {
			se.Spec = spec
		}
		return nil, se
	case err != nil:
		return nil, &SpecError{Spec: spec, Err: err}
	case v == nil:
		return nil, s.BuildError(fmt.Sprintf("kind %q built no validator", name), nil)
	}
	return v, nil
}

// ParseSpec builds the validator a spec string of a built-in kind
// describes (see [SpecParser.Parse] and the package documentation's
// table of kinds).
func ParseSpec(spec string, opts ...SpecOption) (Validator, error) {
	return NewSpecParser(Kinds()...).Parse(spec, opts...)
}

// ParseSpecs parses every spec with ParseSpec and combines the validators
// with [All], in the order given; it returns the first *SpecError. With no
// specs it returns a validator that always passes.
func ParseSpecs(specs []string, opts ...SpecOption) (Validator, error) {
	return NewSpecParser(Kinds()...).ParseAll(specs, opts...)
}

// invalidUTF8At returns the offset of the first byte of s that is not
// valid UTF-8, -1 when there is none.
func invalidUTF8At(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return -1
}
