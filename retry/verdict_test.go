//go:build unix

package retry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

func TestCheck_VerdictOfEachKind(t *testing.T) {
	judge := func(reply string) retry.JudgeFunc {
		return func(context.Context, string) (string, error) { return reply, nil }
	}
	mustCmd := func(command string, opts ...retry.SpecOption) retry.Validator {
		v, err := retry.Command(command, opts...)
		require.NoError(t, err)
		return v
	}
	plain := retry.ValidatorFunc("plain", func(context.Context, string) (bool, string, error) { return false, "", nil })
	tests := []struct {
		name   string
		v      retry.Validator
		answer string
		want   retry.Verdict
	}{
		{"pass", retry.JSON(), `{}`, retry.Verdict{OK: true}},
		{"json rejection", retry.JSON(), `{`, retry.Verdict{Type: retry.FailureVerification,
			Diagnosis: "invalid JSON at line 1, column 2: unexpected end of JSON input"}},
		{"plain validator without diagnosis", plain, "x", retry.Verdict{Type: retry.FailureVerification, Diagnosis: "validation failed"}},
		{"judge rejection", retry.Judge("is polite", judge(`{"pass": false, "reason": "rude"}`)), "Go away.",
			retry.Verdict{Type: retry.FailureRejected, Diagnosis: "rude"}},
		{"command exits 1", mustCmd("echo building; echo 'FAIL x_test.go:3' >&2; exit 1"), "", retry.Verdict{
			Type:      retry.FailureVerification,
			Diagnosis: "command exited with status 1:\nbuilding\nFAIL x_test.go:3",
			Summary:   "echo building; echo 'FAIL x_test.go:3' >&2; exit 1 exited with status 1: FAIL x_test.go:3",
			Command:   "echo building; echo 'FAIL x_test.go:3' >&2; exit 1", ExitCode: 1, Output: "building\nFAIL x_test.go:3",
		}},
		{"command exits 77: blocked", mustCmd("echo 'no network'; exit 77"), "", retry.Verdict{
			Type:      retry.FailureVerification,
			Diagnosis: "command exited with status 77:\nno network",
			Summary:   "echo 'no network'; exit 77 exited with status 77: no network",
			Blocked:   "echo 'no network'; exit 77 exited with status 77, which means blocked: no network",
			Command:   "echo 'no network'; exit 77", ExitCode: 77, Output: "no network",
		}},
		// Long enough for the echo to run on a loaded machine.
		{"command times out", mustCmd("echo waiting; exec sleep 5", retry.WithCmdTimeout(500*time.Millisecond)), "", retry.Verdict{
			Type:      retry.FailureTimeout,
			Diagnosis: "command timed out after 500ms:\nwaiting",
			Summary:   "echo waiting; exec sleep 5 timed out after 500ms: waiting",
			Command:   "echo waiting; exec sleep 5", ExitCode: -1, Output: "waiting",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := retry.Check(t.Context(), tt.v, tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			ok, diagnosis, err := tt.v.Validate(t.Context(), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want.OK, ok, "Validate agrees with Check")
			if tt.name != "plain validator without diagnosis" { // Check fills in the diagnosis Validate left empty
				assert.Equal(t, tt.want.Diagnosis, diagnosis)
			}
		})
	}
}

// A command's Output holds only the last lines of what it printed.
func TestCheck_CommandOutputIsTheLastLines(t *testing.T) {
	v, err := retry.Command("seq 1 5000; exit 2")
	require.NoError(t, err)
	vd, err := retry.Check(t.Context(), v, "")
	require.NoError(t, err)
	assert.Equal(t, "4991\n4992\n4993\n4994\n4995\n4996\n4997\n4998\n4999\n5000", vd.Output)
	assert.True(t, strings.HasPrefix(vd.Diagnosis, "command exited with status 2:\n1\n2\n"), "the diagnosis keeps the start")
}

func TestCheckerFunc_SuggestsAndBlocks(t *testing.T) {
	v := retry.CheckerFunc("needs-file", func(_ context.Context, answer string) (retry.Verdict, error) {
		switch answer {
		case "blocked":
			return retry.Verdict{Blocked: "the input file is missing"}, nil
		case "bad":
			return retry.Verdict{Diagnosis: "no title", SuggestedFix: "start with a # title"}, nil
		}
		return retry.Verdict{OK: true}, nil
	})
	vd, err := retry.Check(t.Context(), v, "blocked")
	require.NoError(t, err)
	assert.Equal(t, retry.Verdict{Type: retry.FailureVerification, Diagnosis: "the input file is missing", Blocked: "the input file is missing"}, vd,
		"a blocked verdict is a rejection, its reason the diagnosis when none is given")

	ok, diagnosis, err := v.Validate(t.Context(), "bad")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "no title", diagnosis)
	vd, err = retry.Check(t.Context(), v, "fine")
	require.NoError(t, err)
	assert.True(t, vd.OK)

	boom := errors.New("boom")
	broken := retry.CheckerFunc("broken", func(context.Context, string) (retry.Verdict, error) { return retry.Verdict{OK: true}, boom })
	_, err = retry.Check(t.Context(), broken, "x")
	assert.ErrorIs(t, err, boom)
}

func TestAll_CombinesVerdicts(t *testing.T) {
	blocker := retry.CheckerFunc("env", func(context.Context, string) (retry.Verdict, error) {
		return retry.Verdict{Diagnosis: "no compiler", Blocked: "no compiler installed", SuggestedFix: "install go"}, nil
	})
	cmd, err := retry.Command("echo nope; exit 3")
	require.NoError(t, err)
	judge := retry.Judge("is short", func(context.Context, string) (string, error) {
		return `{"pass": false, "reason": "too long"}`, nil
	})

	vd, err := retry.Check(t.Context(), retry.All(judge, cmd, blocker, retry.JSON()), `{}`)
	require.NoError(t, err)
	assert.Equal(t, retry.Verdict{
		Type:         retry.FailureRejected, // the first failing validator's
		Diagnosis:    "llm:is short: too long\ncmd:echo nope; exit 3: command exited with status 3:\nnope\nenv: no compiler",
		SuggestedFix: "env: install go",
		Blocked:      "env: no compiler installed",
		Command:      "echo nope; exit 3", ExitCode: 3, Output: "nope",
	}, vd)

	vd, err = retry.Check(t.Context(), retry.All(retry.JSON(), cmd), `{}`)
	require.NoError(t, err)
	assert.Equal(t, "echo nope; exit 3 exited with status 3: nope", vd.Summary, "a lone failure keeps its summary")
}
