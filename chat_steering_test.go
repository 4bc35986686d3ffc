package tract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// ChatResult.Steering names the steering commits a turn wrote, one after
// each failed attempt, with either retry context; a first-attempt success
// has none, as an empty list.
func TestChat_ResultNamesSteeringCommits(t *testing.T) {
	ctx := context.Background()
	for _, strategy := range []tract.ContextStrategy{tract.ContextConversation, tract.ContextFresh} {
		t.Run(string(strategy), func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer(chatInvalid), llmtest.Answer(chatValid))
			res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.RetryContextStrategy(strategy))
			require.NoError(t, err)
			require.Len(t, res.Steering, 2)
			for i, h := range res.Steering {
				c, err := tr.Show(ctx, h.String())
				require.NoError(t, err)
				assert.Equal(t, tract.KindSteering, c.Kind, "steering %d", i)
				assert.Equal(t, tract.RoleUser, c.Role)
			}
		})
	}

	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatValid))
	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.NotNil(t, res.Steering)
	assert.Empty(t, res.Steering)
	assert.NotNil(t, res.History)
}
