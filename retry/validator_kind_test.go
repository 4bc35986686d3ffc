package retry_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

// upperKind is a kind of a program's own, "upper:WORD": WORD occurs in the
// answer in capitals.
func upperKind() retry.Kind {
	return retry.Kind{
		Name: "upper", Arg: "WORD", Summary: "WORD occurs in the answer in capitals",
		Build: func(s retry.Spec) (retry.Validator, error) {
			if s.Arg == "" {
				return nil, s.SyntaxError("upper needs a word, as in upper:NOTE")
			}
			word := strings.ToUpper(s.Arg)
			return retry.ValidatorFunc(s.Text, func(_ context.Context, answer string) (bool, string, error) {
				if strings.Contains(answer, word) {
					return true, "", nil
				}
				return false, "the answer does not say " + word, nil
			}), nil
		},
	}
}

const kindsWithUpper = "(valid validators: json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA, upper:WORD)"

// A kind added to a parser is parsed, and listed by its errors, with no
// edit of package retry.
func TestSpecParser_AddsAKind(t *testing.T) {
	p := retry.NewSpecParser(append(retry.Kinds(), upperKind())...)

	v, err := p.Parse("upper:note")
	require.NoError(t, err)
	assert.Equal(t, "upper:note", v.Name())
	ok, diagnosis, err := v.Validate(t.Context(), "a NOTE")
	require.NoError(t, err)
	assert.True(t, ok, diagnosis)
	ok, diagnosis, err = v.Validate(t.Context(), "a note")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "the answer does not say NOTE", diagnosis)

	all, err := p.ParseAll([]string{"json", "upper:id"})
	require.NoError(t, err)
	ok, diagnosis, err = all.Validate(t.Context(), `{"ID": 1}`)
	require.NoError(t, err)
	assert.True(t, ok, diagnosis)

	tests := []struct{ spec, reason string }{
		{"nope:x", `unknown kind "nope"`},
		{"upper", "upper needs a word, as in upper:NOTE"},
		{"maxlen:x", `maxlen needs a whole number of characters, 0 or more, not "x"`},
		{"json:x", "json takes no argument"},
		{"", "empty spec"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := p.Parse(tt.spec)
			var se *retry.SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.spec, se.Spec)
			assert.Equal(t, tt.reason+" "+kindsWithUpper, se.Reason, "the parser's kinds, the new one included")
		})
	}

	_, err = retry.ParseSpec("upper:note")
	require.ErrorContains(t, err, `unknown kind "upper"`, "ParseSpec parses the built-in kinds only")
	assert.NotContains(t, err.Error(), "upper:WORD")
}

// The zero parser knows no kind, and says so.
func TestSpecParser_Zero(t *testing.T) {
	var p retry.SpecParser
	_, err := p.Parse("json")
	assert.EqualError(t, err, `invalid validator "json": unknown kind "json" (no validator kind is known)`)
	assert.Empty(t, p.Kinds())
}

// A kind that takes no argument refuses one; the parser says so.
func TestSpecParser_KindWithoutArgument(t *testing.T) {
	yes := retry.Kind{Name: "yes", Summary: "always", Build: func(s retry.Spec) (retry.Validator, error) {
		return retry.ValidatorFunc(s.Text, func(context.Context, string) (bool, string, error) { return true, "", nil }), nil
	}}
	p := retry.NewSpecParser(yes)
	v, err := p.Parse("yes")
	require.NoError(t, err)
	assert.Equal(t, "yes", v.Name())
	_, err = p.Parse("yes:please")
	assert.EqualError(t, err, `invalid validator "yes:please": yes takes no argument (valid validators: yes)`)
	assert.Equal(t, []string{"yes"}, []string{yes.Usage()})
	assert.Equal(t, "yes", yes.Prefix())
}

// Build gets the spec and the parse options; its errors become a
// *SpecError of the spec.
func TestSpecParser_Build(t *testing.T) {
	var got retry.Spec
	boom := errors.New("boom")
	dir := t.TempDir()
	judge := func(context.Context, string) (string, error) { return "", nil }
	p := retry.NewSpecParser(
		retry.Kind{Name: "see", Arg: "X", Build: func(s retry.Spec) (retry.Validator, error) {
			got = s
			return retry.JSON(), nil
		}},
		retry.Kind{Name: "fail", Arg: "X", Build: func(s retry.Spec) (retry.Validator, error) { return nil, boom }},
		retry.Kind{Name: "file", Arg: "X", Build: func(s retry.Spec) (retry.Validator, error) {
			return nil, s.BuildError("cannot read "+s.Arg, boom)
		}},
		retry.Kind{Name: "none", Arg: "X", Build: func(retry.Spec) (retry.Validator, error) { return nil, nil }},
	)

	_, err := p.Parse("see:a:b", retry.WithBaseDir(dir), retry.WithCmdTimeout(time.Second), retry.WithJudge(judge))
	require.NoError(t, err)
	assert.Equal(t, "see:a:b", got.Text)
	assert.Equal(t, "a:b", got.Arg, "everything after the first colon")
	assert.Equal(t, dir, got.BaseDir)
	assert.Equal(t, time.Second, got.CmdTimeout)
	assert.NotNil(t, got.Judge)
	assert.Equal(t, filepath.Join(dir, "f.json"), got.Resolve("f.json"))

	_, err = p.Parse("see:x")
	require.NoError(t, err)
	assert.Equal(t, retry.DefaultCmdTimeout, got.CmdTimeout, "the default timeout")
	assert.Nil(t, got.Judge)

	_, err = p.Parse("fail:x")
	var se *retry.SpecError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, `invalid validator "fail:x": boom`)

	_, err = p.Parse("file:a.txt")
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, `invalid validator "file:a.txt": cannot read a.txt: boom`)

	_, err = p.Parse("none:x")
	assert.EqualError(t, err, `invalid validator "none:x": kind "none" built no validator`)
}

// A kind a parser cannot use is the program's mistake, reported when the
// parser is made.
func TestNewSpecParser_RefusesBadKinds(t *testing.T) {
	build := func(retry.Spec) (retry.Validator, error) { return retry.JSON(), nil }
	tests := []struct {
		name  string
		kinds []retry.Kind
		panic string
	}{
		{"no name", []retry.Kind{{Build: build}}, "retry.NewSpecParser: a kind has no name"},
		{"colon", []retry.Kind{{Name: "a:b", Build: build}}, `retry.NewSpecParser: kind name "a:b" holds a colon or white space`},
		{"space", []retry.Kind{{Name: "a b", Build: build}}, `retry.NewSpecParser: kind name "a b" holds a colon or white space`},
		{"spaced placeholder", []retry.Kind{{Name: "a", Arg: "A B", Build: build}}, `retry.NewSpecParser: kind "a": argument placeholder "A B" holds white space`},
		{"two-line summary", []retry.Kind{{Name: "a", Summary: "x\ny", Build: build}}, `retry.NewSpecParser: kind "a": its summary is more than one line`},
		{"no build", []retry.Kind{{Name: "a"}}, `retry.NewSpecParser: kind "a" has no Build function`},
		{"twice", append(retry.Kinds(), retry.Kind{Name: "json", Build: build}), `retry.NewSpecParser: two kinds are named "json"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tt.panic, func() { retry.NewSpecParser(tt.kinds...) })
		})
	}
}

// The built-in kinds: each named once, summarised, and the order
// SpecKinds and the errors use; Kinds returns a new slice every time.
func TestKinds(t *testing.T) {
	kinds := retry.Kinds()
	var usages, prefixes []string
	seen := map[string]bool{}
	for _, k := range kinds {
		assert.False(t, seen[k.Name], "%q twice", k.Name)
		seen[k.Name] = true
		assert.NotEmpty(t, k.Summary, k.Name)
		assert.NotNil(t, k.Build, k.Name)
		if k.Arg != "" {
			assert.Contains(t, k.Summary, k.Arg, "%s's summary says what its argument is for", k.Name)
		}
		usages = append(usages, k.Usage())
		prefixes = append(prefixes, k.Prefix())
	}
	assert.Equal(t, []string{"json", "schema:PATH", "regex:RE", "contains:TEXT", "maxlen:N", "minlen:N", "cmd:COMMAND", "llm:CRITERIA"}, usages)
	assert.Equal(t, retry.SpecKinds(), prefixes)

	kinds[0].Name = "changed"
	assert.Equal(t, "json", retry.Kinds()[0].Name, "a caller's change to the slice stays there")
	p := retry.NewSpecParser(retry.Kinds()...)
	pk := p.Kinds()
	pk[0].Name = "changed"
	assert.Equal(t, "json", p.Kinds()[0].Name)
}

// A program's own kind, parsed beside the built-in ones.
func ExampleNewSpecParser() {
	ticket := retry.Kind{
		Name: "ticket", Arg: "PROJECT", Summary: "the answer names a PROJECT-123 ticket",
		Build: func(s retry.Spec) (retry.Validator, error) {
			if s.Arg == "" {
				return nil, s.SyntaxError("ticket needs a project key, as in ticket:OPS")
			}
			re := regexp.MustCompile(`\b` + regexp.QuoteMeta(s.Arg) + `-[0-9]+\b`)
			return retry.ValidatorFunc(s.Text, func(_ context.Context, answer string) (bool, string, error) {
				if re.MatchString(answer) {
					return true, "", nil
				}
				return false, "the answer names no " + s.Arg + " ticket, such as " + s.Arg + "-123", nil
			}), nil
		},
	}
	p := retry.NewSpecParser(append(retry.Kinds(), ticket)...)
	v, err := p.ParseAll([]string{"ticket:OPS", "maxlen:40"})
	if err != nil {
		panic(err)
	}
	ok, _, _ := v.Validate(context.Background(), "Fixed in OPS-12.")
	fmt.Println(ok)
	_, diagnosis, _ := v.Validate(context.Background(), "Fixed.")
	fmt.Println(diagnosis)

	_, err = p.Parse("tiket:OPS")
	fmt.Println(err)
	// Output:
	// true
	// ticket:OPS: the answer names no OPS ticket, such as OPS-123
	// invalid validator "tiket:OPS": unknown kind "tiket" (valid validators: json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA, ticket:PROJECT)
}
