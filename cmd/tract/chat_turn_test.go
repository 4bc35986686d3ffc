package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
)

// --retry-last takes no message, reads no standard input and opens no
// REPL, even on a terminal; what it cannot be given with is a usage error.
func TestNewCmdChat_RetryLast(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	f.IO.InTTY = true
	var got *ChatOptions
	cmd := newCmdChat(f, func(o *ChatOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--retry-last", "-V", "json"})
	require.NoError(t, cmd.Execute())
	assert.True(t, got.RetryLast)
	assert.False(t, got.Interactive)
	assert.False(t, got.FromStdin)

	got, err := parse(t, newCmdChat, "--retry-last")
	require.NoError(t, err)
	assert.True(t, got.RetryLast)

	for _, args := range [][]string{
		{"--retry-last", "x"},
		{"--retry-last", "-"},
		{"--retry-last", "-i"},
		{"--retry-last", "--system", "Be terse."},
	} {
		_, err := parse(t, newCmdChat, args...)
		assert.Equal(t, exitUsage, exitCode(err), "%q", args)
		assert.ErrorContains(t, err, "--retry-last", "%q", args)
	}
}

// The way out of a failed turn names the message, what follows it, and
// the commands for the branch acted on.
func TestRecovery(t *testing.T) {
	user, err := dag.ParseHash("1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef")
	require.NoError(t, err)
	cause := errors.New("chat: down")
	assert.Empty(t, recovery(cause))

	cases := []struct {
		turn   tract.Turn
		branch string
		want   string
	}{
		{tract.Turn{User: user, Commits: 1}, "",
			"The branch now ends in your message 12345678 with no answer (nothing after it); a new message would follow it,\n" +
				"so the model would see two user messages in a row. Either send it again: tract chat --retry-last\n" +
				"or take it off the branch (it stays in 'tract log --all'): tract reset --soft HEAD~1"},
		{tract.Turn{User: user, Commits: 3, Errors: 2}, "side",
			"The branch now ends in your message 12345678 with no answer (2 error commits after it); a new message would follow it,\n" +
				"so the model would see two user messages in a row. Either send it again: tract chat --branch side --retry-last\n" +
				"or take it off the branch (it stays in 'tract log --all'): tract reset --soft --branch side HEAD~3"},
	}
	for _, tc := range cases {
		err := &failedTurnError{err: cause, turn: &tc.turn, branch: tc.branch}
		assert.Equal(t, tc.want, recovery(err))
		assert.ErrorIs(t, err, cause)
		assert.Equal(t, cause.Error(), err.Error())
	}
}

// The way out of a failed turn sends the message again with the flags
// that turn needs: its validators and its tools.
func TestRetryLastCommand_CarriesValidatorsAndTools(t *testing.T) {
	opts := &ChatOptions{Validate: []string{"json"}, ToolFlags: ToolFlags{
		Tools: []string{"lookup=./lookup --db 'a b.db'"}, Schemas: []string{"lookup=lookup.json"}, Approve: true,
	}}
	assert.Equal(t, `tract chat --retry-last --validate json --tool 'lookup=./lookup --db '\''a b.db'\''' --tool-schema lookup=lookup.json --approve-tools`,
		retryLastCommand("", againFlags(opts)))
	assert.Equal(t, "tract chat --retry-last", retryLastCommand("", againFlags(&ChatOptions{})))
}
