package retry

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// Kind is one kind of validator that a spec string names: the word before
// the spec's first colon. Each built-in kind is declared in the file of its
// validator, and [Kinds] lists them; a [SpecParser] made with more kinds
// parses those too. Errors, tract's help and shell completion are
// generated from a parser's kinds, and the package documentation's table
// from Kinds, so a program's kind needs its declaration and nothing else
// (docs/validators.md's and docs/retry.md's tables of the built-in kinds are
// checked against Kinds by tests).
type Kind struct {
	// Name is what a spec of this kind begins with ("json", "maxlen"):
	// not empty, with no colon and no white space.
	Name string
	// Arg names the kind's argument in help and errors ("PATH", "N").
	// Empty for a kind that takes no argument: a colon after its name is
	// then an error.
	Arg string
	// Summary says in one line, in terms of Arg, when an answer passes
	// ("at most N characters").
	Summary string
	// Build builds the validator of one spec of this kind. The
	// validator's Name must be s.Text. It reports a spec it cannot build
	// with s.SyntaxError (the argument is wrong as written: missing, not
	// a number) or s.BuildError (the validator could not run: a file
	// that is missing, a command not found); any other error is reported
	// as a *SpecError that wraps it. Build runs before any model call:
	// it should find there everything that would stop the validator
	// from running.
	Build func(s Spec) (Validator, error)
}

// Usage returns how a spec of the kind is written: its name, then a colon
// and its argument's placeholder when it takes one ("json", "maxlen:N").
func (k Kind) Usage() string {
	if k.Arg == "" {
		return k.Name
	}
	return k.Name + ":" + k.Arg
}

// Prefix returns what every spec of the kind begins with: its name, and
// the colon its argument follows when it takes one ("json", "maxlen:").
// Shell completion offers it.
func (k Kind) Prefix() string {
	if k.Arg == "" {
		return k.Name
	}
	return k.Name + ":"
}

// Kinds returns the built-in validator kinds, in the order help and
// errors list them. The slice is new on every call: appending to it, as in
// NewSpecParser(append(Kinds(), mine)...), changes nothing else.
func Kinds() []Kind {
	return []Kind{
		jsonKind(),
		schemaKind(),
		regexKind(),
		containsKind(),
		maxLenKind(),
		minLenKind(),
		commandKind(),
		judgeKind(),
	}
}

// Spec is one spec string as a [Kind]'s Build receives it: its text, its
// argument and the options it is parsed with.
type Spec struct {
	// Text is the spec as written, which the validator's Name returns.
	Text string
	// Arg is everything after the first colon, colons included ("" when
	// there is none).
	Arg string
	// BaseDir is the directory of [WithBaseDir] ("": the working
	// directory).
	BaseDir string
	// CmdTimeout bounds one run of a command ([WithCmdTimeout]).
	CmdTimeout time.Duration
	// Judge is the model of [WithJudge] (nil: none).
	Judge JudgeFunc
	// FixJSON says the validators built should fix the JSON they can
	// ([WithFixJSON]): the json kind builds [FixJSON].
	FixJSON bool

	// kinds are the parser's kinds, which a syntax error lists (nil: the
	// built-in ones, for a Spec not made by a parser).
	kinds []Kind
}

// newSpec returns the Spec of text, with argument arg, that opts
// configure, as the built-in kinds' constructors (Regex, Command, …)
// build it.
func newSpec(text, arg string, opts []SpecOption) Spec {
	return newSpecConfig(opts).spec(text, arg, nil)
}

// Resolve returns path made absolute: a relative path is taken relative to
// BaseDir, or the working directory.
func (s Spec) Resolve(path string) string {
	if !filepath.IsAbs(path) && s.BaseDir != "" {
		path = filepath.Join(s.BaseDir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// SyntaxError returns the *SpecError for a spec whose argument is wrong as
// written (missing, not a number): reason says what is wrong, and the
// error lists the kinds the parser knows.
func (s Spec) SyntaxError(reason string) *SpecError {
	kinds := s.kinds
	switch {
	case kinds == nil:
		kinds = Kinds()
	case len(kinds) == 0:
		return &SpecError{Spec: s.Text, Reason: reason + " (no validator kind is known)"}
	}
	return &SpecError{Spec: s.Text, Reason: reason + " (valid validators: " + kindList(kinds) + ")"}
}

// BuildError returns the *SpecError for a spec whose validator could not
// run (a file that is missing, a command that does not exist): reason says
// what is wrong, and err, when not nil, why.
func (s Spec) BuildError(reason string, err error) *SpecError {
	return &SpecError{Spec: s.Text, Reason: reason, Err: err}
}

// kindList lists kinds as an error says them: "json, schema:PATH, …".
func kindList(kinds []Kind) string {
	usages := make([]string, len(kinds))
	for i, k := range kinds {
		usages[i] = k.Usage()
	}
	return strings.Join(usages, ", ")
}

// checkKind returns what makes k unusable in a parser, or "".
func checkKind(k Kind) string {
	switch {
	case k.Name == "":
		return "a kind has no name"
	case strings.Contains(k.Name, ":") || strings.ContainsFunc(k.Name, unicode.IsSpace):
		return fmt.Sprintf("kind name %q holds a colon or white space", k.Name)
	case strings.ContainsFunc(k.Arg, unicode.IsSpace):
		return fmt.Sprintf("kind %q: argument placeholder %q holds white space", k.Name, k.Arg)
	case strings.Contains(k.Summary, "\n"):
		return fmt.Sprintf("kind %q: its summary is more than one line", k.Name)
	case k.Build == nil:
		return fmt.Sprintf("kind %q has no Build function", k.Name)
	}
	return ""
}
