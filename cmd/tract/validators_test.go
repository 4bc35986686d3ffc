package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// throwawayKind is a validator kind of the test's own, "throwaway:ARG":
// the answer ends with ARG.
func throwawayKind() retry.Kind {
	return retry.Kind{
		Name: "throwaway", Arg: "ARG", Summary: "the answer ends with ARG",
		Build: func(s retry.Spec) (retry.Validator, error) {
			if s.Arg == "" {
				return nil, s.SyntaxError("throwaway needs an ending, as in throwaway:done")
			}
			return retry.ValidatorFunc(s.Text, func(_ context.Context, answer string) (bool, string, error) {
				if strings.HasSuffix(answer, s.Arg) {
					return true, "", nil
				}
				return false, "the answer does not end with " + s.Arg, nil
			}), nil
		},
	}
}

// A validator kind added to the Factory's parser, with no other edit,
// is listed by chat's and compress's help, completed after --validate,
// parsed and run by chat, and listed by the error for an unknown kind.
func TestValidators_AThrowawayKindReachesTheCommandLine(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("not yet"), llmtest.Answer("all done"))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-test", "TRACT_MODEL": "m"}
	f, out, errOut := testFactory(t, env)
	f.Validators = retry.NewSpecParser(append(retry.Kinds(), throwawayKind())...)
	db := filepath.Join(t.TempDir(), "t.db")
	exec := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		root := newRootCmd(f)
		root.SetArgs(append([]string{"--db", db}, args...))
		cmd, err := root.ExecuteContextC(context.Background())
		if err != nil {
			return printError(f, cmd, err)
		}
		return exitOK
	}

	require.Equal(t, exitOK, exec("chat", "--help"))
	assert.Regexp(t, `--validate SPEC +check each answer with SPEC \(repeatable\): json, .*, llm:CRITERIA, throwaway:ARG\n`, out.String())
	require.Equal(t, exitOK, exec("compress", "--help"))
	assert.Regexp(t, `--validate SPEC +check each summary with SPEC \(repeatable\): json, .*, throwaway:ARG\n`, out.String())

	require.Equal(t, exitOK, exec("__complete", "chat", "--validate", "thr"))
	assert.Equal(t, "throwaway:\tthe answer ends with ARG\n:6\n", out.String(), "the kind, with no space after its colon and no file names")
	require.Equal(t, exitOK, exec("__complete", "compress", "--validate", ""))
	assert.Contains(t, out.String(), "throwaway:\t")

	require.Equal(t, exitOK, exec("init"))
	require.Equal(t, exitOK, exec("chat", "--validate", "throwaway:done", "--validate", "minlen:3", "Finish the job"), errOut.String())
	assert.Equal(t, "all done\n", out.String())
	assert.Contains(t, errOut.String(), "attempt 1/3: failed: throwaway:done: the answer does not end with done")

	assert.Equal(t, exitUsage, exec("chat", "--validate", "nope:x", "hi"))
	assert.Contains(t, errOut.String(), `invalid validator "nope:x": unknown kind "nope" (valid validators: json, schema:PATH, `+
		`regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA, throwaway:ARG)`)
	assert.Equal(t, exitUsage, exec("chat", "--validate", "throwaway", "hi"))
	assert.Contains(t, errOut.String(), `invalid validator "throwaway": throwaway needs an ending, as in throwaway:done (valid validators: `)
}

// Without a parser of its own, a Factory parses, lists and completes
// retry's built-in kinds.
func TestValidators_BuiltInByDefault(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	f.Validators = nil
	var prefixes []string
	for _, k := range f.validators().Kinds() {
		prefixes = append(prefixes, k.Prefix())
	}
	assert.Equal(t, retry.SpecKinds(), prefixes)
	assert.Equal(t, "json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA", f.validators().Usages())
	got, dir := validators(f)(nil, nil, "j")
	assert.Equal(t, []string{"json\tthe whole answer is JSON"}, got)
	assert.Equal(t, cobra.ShellCompDirectiveNoFileComp, dir, "json takes no argument: a space may follow it")
}
