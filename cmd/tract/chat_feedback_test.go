package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

func TestNewCmdChat_FeedbackFlags(t *testing.T) {
	got, err := parse(t, newCmdChat, "x")
	require.NoError(t, err)
	assert.Equal(t, retry.FeedbackPlain, got.Feedback)
	assert.Equal(t, tract.ContextConversation, got.RetryContext)
	assert.False(t, got.Analyze)

	got, err = parse(t, newCmdChat, "--feedback", "xml", "--retry-context", "fresh", "--analyze", "x")
	require.NoError(t, err)
	assert.Equal(t, retry.FeedbackXML, got.Feedback)
	assert.Equal(t, tract.ContextFresh, got.RetryContext)
	assert.True(t, got.Analyze)

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--feedback", "json"}, `--feedback: unknown feedback format "json": use plain or xml`},
		{[]string{"--feedback", ""}, `--feedback: unknown feedback format "": use plain or xml`},
		{[]string{"--retry-context", "stale"}, `--retry-context: unknown retry context strategy "stale": use conversation or fresh`},
	}
	for _, tt := range tests {
		_, err := parse(t, newCmdChat, append(tt.args, "x")...)
		assert.Equal(t, exitUsage, exitCode(err), "%q", tt.args)
		assert.EqualError(t, err, tt.want)
	}
}
