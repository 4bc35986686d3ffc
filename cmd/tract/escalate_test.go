package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

func TestNewCmdChat_EscalationFlags(t *testing.T) {
	cases := []struct {
		args    []string
		want    ChatOptions // only the escalation fields are compared
		wantErr string
	}{
		{args: []string{"x"}, want: ChatOptions{OnExhausted: "abort"}},
		{args: []string{"--on-exhausted", "skip", "x"}, want: ChatOptions{OnExhausted: "skip"}},
		{args: []string{"--on-exhausted", "retry", "-V", "json", "--fix", "trim it", "x"},
			want: ChatOptions{OnExhausted: "retry", Fix: "trim it", FixSet: true}},
		{args: []string{"--on-exhausted", "maybe", "x"}, wantErr: `--on-exhausted "maybe": give abort, skip, retry, ask, wait or exit`},
		{args: []string{"--on-exhausted", "wait", "-V", "json", "x"}, want: ChatOptions{OnExhausted: "wait"}},
		{args: []string{"--on-exhausted", "exit", "-V", "json", "x"}, want: ChatOptions{OnExhausted: "exit"}},
		{args: []string{"--on-exhausted", "wait", "--fix", "trim it", "x"}, wantErr: "--fix answers the first escalation here"},
		{args: []string{"--on-exhausted", "fix", "x"}, wantErr: `--on-exhausted "fix"`},
		// No terminal to ask on (the test's standard streams are not).
		{args: []string{"--on-exhausted", "ask", "x"}, wantErr: "--on-exhausted ask reads your answer from the terminal"},
		// Without a validator an empty answer still fails: a fix round helps.
		{args: []string{"--fix", "trim it", "x"}, want: ChatOptions{OnExhausted: "abort", Fix: "trim it", FixSet: true}},
		{args: []string{"-V", "json", "--fix", " ", "x"}, wantErr: "--fix needs an instruction"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parse(t, newCmdChat, tc.args...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.True(t, isUsage(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, ChatOptions{OnExhausted: got.OnExhausted, Fix: got.Fix, FixSet: got.FixSet})
		})
	}
}

func testEscalation() tract.Escalation {
	at := time.Date(2026, 1, 26, 14, 30, 0, 0, time.Local)
	return tract.Escalation{Task: "03-01:task-3", Reason: tract.EscalateMaxRetries, Round: 1, Attempts: 2, MaxAttempts: 2, TotalAttempts: 2,
		Failures: []tract.FailureRecord{
			{Attempt: 1, Timestamp: at, Type: retry.FailureVerification, Error: "2 tests failed", Details: "FAIL a\nFAIL b"},
			{Attempt: 2, Timestamp: at.Add(2 * time.Minute), Type: retry.FailureTimeout, Error: "timed out", Details: "command timed out after 30s",
				SuggestedFix: "make it faster"},
		}, LastAnswer: "the answer"}
}

// The terminal prompt prints the escalation and reads the answer, asking
// again after one it cannot read; the end of the input aborts.
func TestPromptEscalation(t *testing.T) {
	cases := []struct {
		name, input string
		want        tract.Resolution
		wantOut     string
	}{
		{"retry", "retry\n", tract.Resolution{Action: tract.ResolveRetry}, ""},
		{"fix", "fix: check for whitespace first\n", tract.Resolution{Action: tract.ResolveFix, Instruction: "check for whitespace first"}, ""},
		{"asks again", "maybe\nfix:\nskip\n", tract.Resolution{Action: tract.ResolveSkip},
			`"maybe" is no answer to an escalation: give retry, skip, abort or fix: INSTRUCTION` + "\nYour answer: \"fix\" needs an instruction\nYour answer: "},
		{"end of input", "", tract.Resolution{Action: tract.ResolveAbort}, "abort (end of input)"},
		{"last line without newline", "abort", tract.Resolution{Action: tract.ResolveAbort}, ""},
		{"bad last line", "nope", tract.Resolution{Action: tract.ResolveAbort}, "is no answer to an escalation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			hook := promptEscalation(bufio.NewReader(strings.NewReader(tc.input)), &out)
			got, err := hook(context.Background(), testEscalation())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Contains(t, out.String(), tc.wantOut)
		})
	}

	var out bytes.Buffer
	_, err := promptEscalation(bufio.NewReader(strings.NewReader("retry\n")), &out)(context.Background(), testEscalation())
	require.NoError(t, err)
	want := `
Task escalation required

Task:     03-01:task-3
Reason:   max_retries_exceeded
Attempts: 2 of 2 (round 1 of at most 5; 2 attempts in all)

Attempt history:
  ATTEMPT  TIME                 TYPE                 ERROR
  1        2026-01-26 14:30:00  verification_failed  2 tests failed
  2        2026-01-26 14:32:00  timeout              timed out

Last error details:
  command timed out after 30s
Suggested fix: make it faster

Options:
  retry              a fresh round of attempts
  skip               give the task up (a skip note is committed); exit 6
  abort              stop here; everything so far stays in the repository
  fix: INSTRUCTION   one more round, with INSTRUCTION as the model's first guidance
Your answer: `
	assert.Equal(t, want, out.String())
}

// Scripted answers: --fix once, then --on-exhausted, for an exhaustion
// and for a model server that stayed unavailable (no fix: the model was
// not reached); a failure retrying cannot fix is aborted.
func TestScriptedEscalation(t *testing.T) {
	var out bytes.Buffer
	hook := scriptedEscalation(&out, "trim it", tract.ResolveRetry, nil)
	e := testEscalation()
	var got []string
	answer := func(reason tract.EscalationReason) {
		e.Reason = reason
		r, err := hook(context.Background(), e)
		require.NoError(t, err)
		got = append(got, r.String())
	}
	answer(tract.EscalateTransport)
	for range 3 {
		answer(tract.EscalateMaxRetries)
	}
	answer(tract.EscalateBlocked)
	answer(tract.EscalateTransport)
	assert.Equal(t, []string{"retry", "fix: trim it", "retry", "retry", "abort", "retry"}, got)
	assert.Contains(t, out.String(), "escalated: max_retries_exceeded after 2 of 2 attempts (round 1); answer: fix: trim it\n")
	assert.Contains(t, out.String(), "escalated: transport after 2 of 2 attempts (round 1); answer: retry\n")

	r, _ := scriptedEscalation(&out, "", tract.ResolveSkip, nil)(context.Background(), testEscalation())
	assert.Equal(t, tract.Resolution{Action: tract.ResolveSkip}, r)
}

// A one-shot chat never waits for keyboard input unless asked to: on a
// terminal too, the hook answers --on-exhausted (abort by default); only
// --on-exhausted ask reads the answer, after a --fix round.
func TestEscalationHook_WhoAnswers(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	f.IO.InTTY, f.IO.ErrTTY = true, true
	f.IO.In = strings.NewReader("skip\n")
	for _, opts := range []*ChatOptions{{OnExhausted: "abort"}, {OnExhausted: "retry"}} {
		r, err := escalationHook(f, opts)(context.Background(), testEscalation())
		require.NoError(t, err)
		assert.Equal(t, tract.ResolutionAction(opts.OnExhausted), r.Action, "not read from the terminal")
	}
	hook := escalationHook(f, &ChatOptions{OnExhausted: "ask", Fix: "trim it", FixSet: true})
	r, err := hook(context.Background(), testEscalation())
	require.NoError(t, err)
	assert.Equal(t, tract.ResolveFix, r.Action, "--fix first")
	r, err = hook(context.Background(), testEscalation())
	require.NoError(t, err)
	assert.Equal(t, tract.ResolveSkip, r.Action, "then read from the terminal")
}

// --resume finishes a turn: it takes no message, and refuses what would
// start or change one.
func TestNewCmdChat_Resume(t *testing.T) {
	got, err := parse(t, newCmdChat, "--resume", "k3x9qa")
	require.NoError(t, err)
	assert.Equal(t, "k3x9qa", got.Resume)
	assert.False(t, got.Interactive, "no message, yet no REPL")
	for _, args := range [][]string{
		{"--resume", "k3x9qa", "hello"},
		{"--resume", "k3x9qa", "--retry-last"},
		{"--resume", "k3x9qa", "--new"},
		{"--resume", "k3x9qa", "-s", "be terse"},
		{"--resume", "k3x9qa", "--branch", "other"},
		{"--resume", "k3x9qa", "--task", "other"},
	} {
		_, err := parse(t, newCmdChat, args...)
		require.Error(t, err, "%v", args)
		assert.True(t, isUsage(err), "%v: %v", args, err)
		assert.Contains(t, err.Error(), "--resume")
	}
}

// 'tract escalation answer' reads the answer as one word, "fix TEXT" or
// "fix: TEXT", and --by.
func TestNewCmdEscalationAnswer(t *testing.T) {
	cases := []struct {
		args    []string
		want    tract.Resolution
		wantErr string
	}{
		{args: []string{"k3x9qa", "retry"}, want: tract.Resolution{Action: tract.ResolveRetry}},
		{args: []string{"k3x9qa", "fix", "use", "integers"}, want: tract.Resolution{Action: tract.ResolveFix, Instruction: "use integers"}},
		{args: []string{"k3x9qa", "fix: use integers", "--by", "bob"}, want: tract.Resolution{Action: tract.ResolveFix, Instruction: "use integers", By: "bob"}},
		{args: []string{"k3x9qa", "fix"}, wantErr: `"fix" needs an instruction`},
		{args: []string{"k3x9qa", "maybe"}, wantErr: "no answer to an escalation"},
		{args: []string{"k3x9qa"}, wantErr: "takes an escalation ID and an answer"},
		{args: []string{"k3x9qa", "skip", "--by", " "}, wantErr: "--by needs a name"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, _, _ := testFactory(t, nil)
			var got *EscalationOptions
			cmd := newCmdEscalation(f, func(o *EscalationOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"answer"}, tc.args...))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.True(t, isUsage(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "k3x9qa", got.ID)
			assert.Equal(t, tc.want, got.Answer)
		})
	}
}
