package retry

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Regex returns the validator of the spec "regex:RE": the regular expression
// pattern (Go syntax, see regexp/syntax) must match somewhere in the answer;
// anchor it with ^ and $ to match the whole answer. A pattern that does not
// compile is a *SpecError.
func Regex(pattern string) (Validator, error) {
	return newRegex(newSpec("regex:"+pattern, pattern, nil))
}

// regexKind is the kind "regex:RE".
func regexKind() Kind {
	return Kind{Name: "regex", Arg: "RE", Summary: "RE (Go syntax) matches the answer", Build: newRegex}
}

type regexValidator struct {
	name string
	re   *regexp.Regexp
}

func newRegex(s Spec) (Validator, error) {
	if s.Arg == "" {
		return nil, s.SyntaxError("regex needs a pattern, as in regex:^[A-Z]")
	}
	re, err := regexp.Compile(s.Arg)
	if err != nil {
		return nil, s.BuildError("bad regular expression", err)
	}
	return &regexValidator{name: s.Text, re: re}, nil
}

func (v *regexValidator) Name() string { return v.name }

func (v *regexValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	if v.re.MatchString(answer) {
		return true, "", nil
	}
	return false, "answer does not match the regular expression " + v.re.String(), nil
}

// Contains returns the validator of the spec "contains:TEXT": text must occur
// in the answer, case and white space included.
func Contains(text string) Validator {
	return &containsValidator{name: "contains:" + text, text: text}
}

// containsKind is the kind "contains:TEXT".
func containsKind() Kind {
	return Kind{
		Name: "contains", Arg: "TEXT", Summary: "TEXT occurs in the answer",
		Build: func(s Spec) (Validator, error) {
			if s.Arg == "" {
				return nil, s.SyntaxError("contains needs the text to look for, as in contains:Summary")
			}
			return &containsValidator{name: s.Text, text: s.Arg}, nil
		},
	}
}

type containsValidator struct {
	name, text string
}

func (v *containsValidator) Name() string { return v.name }

func (v *containsValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	if strings.Contains(answer, v.text) {
		return true, "", nil
	}
	return false, fmt.Sprintf("answer does not contain %q", v.text), nil
}

// MaxLen returns the validator of the spec "maxlen:N": the answer must be at
// most n characters (Unicode code points, not bytes) long.
func MaxLen(n int) Validator {
	return &lengthValidator{name: "maxlen:" + strconv.Itoa(n), bound: n, isMax: true}
}

// MinLen returns the validator of the spec "minlen:N": the answer must be at
// least n characters (Unicode code points, not bytes) long.
func MinLen(n int) Validator {
	return &lengthValidator{name: "minlen:" + strconv.Itoa(n), bound: n}
}

// maxLenKind is the kind "maxlen:N".
func maxLenKind() Kind {
	return Kind{Name: "maxlen", Arg: "N", Summary: "at most N characters (not bytes)", Build: lengthBuilder(true)}
}

// minLenKind is the kind "minlen:N".
func minLenKind() Kind {
	return Kind{Name: "minlen", Arg: "N", Summary: "at least N characters", Build: lengthBuilder(false)}
}

// lengthBuilder builds the validators of maxlen (isMax) or minlen specs.
func lengthBuilder(isMax bool) func(Spec) (Validator, error) {
	kind := "minlen"
	if isMax {
		kind = "maxlen"
	}
	return func(s Spec) (Validator, error) {
		if s.Arg == "" {
			return nil, s.SyntaxError(kind + " needs a number of characters, as in " + kind + ":200")
		}
		n, err := strconv.Atoi(strings.TrimSpace(s.Arg))
		if err != nil || n < 0 {
			return nil, s.SyntaxError(fmt.Sprintf("%s needs a whole number of characters, 0 or more, not %q", kind, s.Arg))
		}
		return &lengthValidator{name: s.Text, bound: n, isMax: isMax}, nil
	}
}

type lengthValidator struct {
	name  string
	bound int
	isMax bool
}

func (v *lengthValidator) Name() string { return v.name }

func (v *lengthValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	n := utf8.RuneCountInString(answer)
	switch {
	case v.isMax && n > v.bound:
		return false, fmt.Sprintf("answer is %d %s, more than the maximum of %d", n, characters(n), v.bound), nil
	case !v.isMax && n < v.bound:
		return false, fmt.Sprintf("answer is %d %s, fewer than the minimum of %d", n, characters(n), v.bound), nil
	}
	return true, "", nil
}

func characters(n int) string {
	if n == 1 {
		return "character"
	}
	return "characters"
}
