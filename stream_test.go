package tract_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// Each attempt's answer streams under its number, before the attempt's
// verdict; OnDelta given as well receives every piece too.
func TestChat_OnAttemptDeltaNumbersEachAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("not json at all"))
	srv.When("failed validation", llmtest.Answer(`{"a": 1, "b": 2}`))

	var events []string
	texts := map[int]*strings.Builder{}
	var plain strings.Builder
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(3),
		tract.OnDelta(func(d string) { plain.WriteString(d) }),
		tract.OnAttemptDelta(func(d tract.AttemptDelta) {
			if texts[d.Attempt] == nil {
				texts[d.Attempt] = &strings.Builder{}
				events = append(events, fmt.Sprintf("start %d/%d", d.Attempt, d.Max))
			}
			texts[d.Attempt].WriteString(d.Text)
		}),
		tract.OnAttempt(func(a tract.Attempt) { events = append(events, fmt.Sprintf("verdict %d %v", a.Number, a.OK)) }))
	require.NoError(t, err)
	assert.Equal(t, []string{"start 1/3", "verdict 1 false", "start 2/3", "verdict 2 true"}, events)
	require.Len(t, texts, 2)
	assert.Equal(t, "not json at all", texts[1].String())
	assert.Equal(t, res.Text, texts[2].String())
	assert.Equal(t, `not json at all{"a": 1, "b": 2}`, plain.String())
	for _, r := range srv.Requests() {
		assert.True(t, r.Stream, "every attempt asks for a stream")
	}
}

// Without OnDelta and OnAttemptDelta nothing is streamed.
func TestChat_NoStreamWithoutDeltaCallbacks(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("an answer"))
	_, err := tr.Chat(context.Background(), chatQuestion)
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 1)
	assert.False(t, srv.Requests()[0].Stream)
}
