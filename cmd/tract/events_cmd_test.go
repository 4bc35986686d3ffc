package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewCmdEvents_Flags(t *testing.T) {
	got, err := parse(t, newCmdEvents)
	require.NoError(t, err)
	assert.Equal(t, "jsonl", got.Format)
	assert.True(t, got.Since.IsZero())

	got, err = parse(t, newCmdEvents, "--task", "03-01:task-3", "--since", "2026-01-26T14:00:00Z", "--format", "text")
	require.NoError(t, err)
	assert.Equal(t, "03-01:task-3", got.Task)
	assert.Equal(t, "text", got.Format)
	assert.Equal(t, time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC), got.Since.UTC())

	for _, args := range [][]string{
		{"--format", "xml"}, {"--since", "yesterday"}, {"--since", "-1h"}, {"--task", ""}, {"extra"},
	} {
		_, err = parse(t, newCmdEvents, args...)
		assert.Equal(t, exitUsage, exitCode(err), "%v", args)
	}
}

func TestNewCmdStats_Flags(t *testing.T) {
	before := time.Now()
	got, err := parse(t, newCmdStats, "--task", "03-01:", "--since", "7d", "--json")
	require.NoError(t, err)
	assert.Equal(t, "03-01:", got.TaskPrefix)
	assert.True(t, got.JSON)
	assert.WithinDuration(t, before.Add(-7*24*time.Hour), got.Since, time.Minute)

	_, err = parse(t, newCmdStats, "--since", "5x")
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestNewCmdChat_EventsFlag(t *testing.T) {
	got, err := parse(t, newCmdChat, "--events", "run.jsonl", "x")
	require.NoError(t, err)
	assert.Equal(t, "run.jsonl", got.Events)
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                          {},
		"now":                       now,
		"90m":                       now.Add(-90 * time.Minute),
		"2d":                        now.Add(-48 * time.Hour),
		"2026-01-01T00:00:00+01:00": time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%q: %v", in, got)
	}
	for _, in := range []string{"soon", "2026-01-01", "-5m", "1y"} {
		_, err := parseSince(in, now)
		assert.Equal(t, exitUsage, exitCode(err), in)
		assert.ErrorContains(t, err, "--since")
	}
}
