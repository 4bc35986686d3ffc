//go:build unix

package tract_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// A compress replays the commits after its range onto the new chain:
// the turns among them are the same turns, counted once by Stats and
// Events, as before the compress.
func TestStats_CompressReplayedTurnsCountOnce(t *testing.T) {
	var seen []tract.Escalation
	cases := []struct {
		name     string
		answers  []string
		opts     []tract.ChatOption
		attempts int
		noTask   bool
	}{
		{"accepted at once", []string{chatValid}, nil, 1, false},
		{"accepted after a retry, purified", []string{chatInvalid, chatValid}, nil, 2, false},
		{"accepted after a retry, attempts kept on the branch", []string{chatInvalid, chatValid}, []tract.ChatOption{tract.Purify(false)}, 2, false},
		{"exhausted, attempts kept on the branch", []string{chatInvalid, chatInvalid},
			[]tract.ChatOption{tract.Purify(false), tract.MaxAttempts(2)}, 2, false},
		{"without a task, accepted after a retry", []string{chatInvalid, chatValid}, nil, 2, true},
		{"fresh retry context", []string{chatInvalid, chatValid}, []tract.ChatOption{tract.RetryContextStrategy(tract.ContextFresh)}, 2, false},
		{"skipped", []string{chatInvalid, chatInvalid},
			[]tract.ChatOption{tract.MaxAttempts(2), answering(&seen, tract.Resolution{Action: tract.ResolveSkip})}, 2, false},
		{"aborted", []string{chatInvalid, chatInvalid},
			[]tract.ChatOption{tract.MaxAttempts(2), answering(&seen, tract.Resolution{Action: tract.ResolveAbort})}, 2, false},
		{"two rounds", []string{chatInvalid, chatInvalid, chatValid},
			[]tract.ChatOption{tract.MaxAttempts(2), answering(&seen, tract.Resolution{Action: tract.ResolveRetry})}, 3, false},
		{"with a provenance note", []string{chatInvalid, chatValid}, []tract.ChatOption{tract.ProvenanceNote()}, 2, false},
	}
	// Which of two copies Stats keeps depends on their hashes: each case
	// runs with several questions, so that both orders occur.
	for _, tc := range cases {
		for v := range 6 {
			t.Run(fmt.Sprintf("%s/question %d", tc.name, v), func(t *testing.T) {
				ctx := context.Background()
				tr, srv := newChatServerTract(t)
				var hs []tract.Hash
				for _, text := range []string{"one", "two", "three", "four"} {
					h, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, text)
					require.NoError(t, err)
					hs = append(hs, h)
				}
				for _, a := range tc.answers {
					srv.Reply(llmtest.Answer(a))
				}
				opts := append([]tract.ChatOption{tract.Validate(retry.JSON())}, tc.opts...)
				if !tc.noTask {
					opts = append(opts, tract.Task("t1"))
				}
				_, _ = tr.Chat(ctx, fmt.Sprintf("%s (%d)", chatQuestion, v), opts...)
				before, err := tr.Stats(ctx, tract.StatsFilter{})
				require.NoError(t, err)
				require.Equal(t, 1, before.TotalTasks)
				require.Equal(t, tc.attempts, before.Attempts)
				eventsBefore, err := tr.Events(ctx, tract.EventFilter{})
				require.NoError(t, err)

				res, err := tr.CompressRange(ctx, hs[1].String(), hs[2].String(), tract.Summaries("two and three"))
				require.NoError(t, err)
				require.Positive(t, res.Replayed, "the turn's commits are replayed")

				after, err := tr.Stats(ctx, tract.StatsFilter{})
				require.NoError(t, err)
				assert.Equal(t, before.Tasks, after.Tasks)
				assert.Equal(t, before.Attempts, after.Attempts)
				assert.Equal(t, before.TokensAccepted, after.TokensAccepted)
				assert.Equal(t, before.TokensFailed, after.TokensFailed)
				eventsAfter, err := tr.Events(ctx, tract.EventFilter{})
				require.NoError(t, err)
				assert.Len(t, eventsAfter, len(eventsBefore))
			})
		}
	}
}
