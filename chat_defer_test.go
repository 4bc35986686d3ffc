package tract_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/loopback"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// written is what a turn that writes nothing leaves as it was: every
// commit, and the reflogs of HEAD and of what was kept off a branch.
type written struct {
	all            *tract.History
	head, stranded []tract.ReflogEntry
}

func stateOf(t *testing.T, tr *tract.Tract) written {
	t.Helper()
	ctx := context.Background()
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	head, err := tr.Reflog(ctx, "HEAD")
	require.NoError(t, err)
	stranded, err := tr.Reflog(ctx, "STRANDED")
	require.NoError(t, err)
	return written{all, head, stranded}
}

// With DeferStart, a first model call that shows the setup to be wrong
// writes nothing: no message, no error commit, no ref move. The error is
// an *UnsentError whose llm error says which setup problem it is.
func TestChat_DeferStartSetupFailureWritesNothing(t *testing.T) {
	cases := []struct {
		name     string
		reply    llmtest.Reply
		want     llm.SetupProblem
		escalate bool // wrapped in an *EscalationError, as without DeferStart
	}{
		{"401", llmtest.Unauthorized(), llm.SetupAuth, true},
		{"404", llmtest.Reply{Status: http.StatusNotFound, Body: "404 page not found", ContentType: "text/plain"}, llm.SetupEndpoint, false},
		{"HTML page", llmtest.HTML(), llm.SetupNotAPI, false},
		{"unknown model", llmtest.Reply{Status: http.StatusNotFound, Body: `{"error": "model \"x\" not found, try pulling it first"}`}, llm.SetupModel, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			_, err := tr.Commit(context.Background(), tract.KindMessage, tract.RoleUser, "earlier")
			require.NoError(t, err)
			srv.Reply(llmtest.Answer("earlier answer"))
			_, err = tr.Generate(context.Background())
			require.NoError(t, err)
			before := stateOf(t, tr)
			srv.Otherwise(tc.reply)

			res, err := tr.Chat(context.Background(), "hello", tract.DeferStart(), tract.SystemPrompt("Be brief."),
				tract.Validate(retry.JSON()), tract.OnEscalation(func(context.Context, tract.Escalation) (tract.Resolution, error) {
					t.Error("no escalation for a turn that never started")
					return tract.Resolution{Action: tract.ResolveAbort}, nil
				}))
			var unsent *tract.UnsentError
			require.ErrorAs(t, err, &unsent)
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.want, apiErr.Setup)
			assert.Equal(t, tc.escalate, errors.As(err, new(*tract.EscalationError)))
			require.NotNil(t, res)
			assert.True(t, res.User.IsZero())
			assert.True(t, res.Commit.IsZero())
			assert.Equal(t, before, stateOf(t, tr))
			reqs := srv.Requests()
			require.NotEmpty(t, reqs)
			assert.Equal(t, []llm.Message{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "earlier answer"},
				{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello"}}, reqs[len(reqs)-1].Messages)
		})
	}
}

// A refused connection is a setup failure too, after one retry.
func TestChat_DeferStartRefusedConnectionWritesNothing(t *testing.T) {
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	defer release()
	c, err := llm.NewOpenAI(llm.WithModel(chatModel), llm.WithBaseURL("http://"+addr+"/v1"), llm.WithSleep(chatNoSleep))
	require.NoError(t, err)
	tr := newChatTract(t, c)
	before := stateOf(t, tr)

	_, err = tr.Chat(context.Background(), "hello", tract.DeferStart())
	var te *llm.TransportError
	require.ErrorAs(t, err, &te)
	assert.ErrorAs(t, err, new(*tract.UnsentError))
	assert.Equal(t, 2, te.Attempts)
	assert.Equal(t, before, stateOf(t, tr))
}

// A failure after the model was reached keeps the shape of every failed
// turn: the message and an error commit; a success is the usual turn,
// with purify after retries.
func TestChat_DeferStartAfterTheModelWasReached(t *testing.T) {
	t.Run("server error", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Otherwise(llmtest.Error(500, "on fire"))
		res, err := tr.Chat(context.Background(), "hello", tract.DeferStart())
		require.Error(t, err)
		assert.False(t, errors.As(err, new(*tract.UnsentError)))
		log, lerr := tr.Log(context.Background())
		require.NoError(t, lerr)
		require.Len(t, log, 2)
		assert.Equal(t, tract.KindError, log[0].Kind)
		assert.Equal(t, "hello", log[1].Text)
		assert.Equal(t, log[1].Hash, res.User)
		assert.Equal(t, log[0].Hash, res.Commit)
	})
	t.Run("purified after a retry", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer("not json"), llmtest.Answer(`{"ok": true}`))
		res, err := tr.Chat(context.Background(), "hello", tract.DeferStart(), tract.SystemPrompt("S"), tract.Validate(retry.JSON()))
		require.NoError(t, err)
		assert.True(t, res.Purified)
		log, err := tr.Log(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []string{`{"ok": true}`, "hello", "S"}, texts(log))
		assert.Equal(t, log[1].Hash, res.User)
		compiled, err := tr.Compile(context.Background(), tract.CompileAt(res.User.String()))
		require.NoError(t, err)
		assert.Equal(t, compiled, srv.Requests()[0].Messages, "the first call sent what the branch now holds")
	})
}

// movingClient answers after another writer moved the branch.
type movingClient struct {
	tr *tract.Tract
}

func (c movingClient) Complete(ctx context.Context, _ llm.Request) (*llm.Response, error) {
	if _, err := c.tr.Commit(ctx, tract.KindNote, tract.RoleSystem, "another writer"); err != nil {
		return nil, err
	}
	return &llm.Response{Content: "the answer"}, nil
}

// A branch moved while the model answered keeps the message and the
// answer off it, and says so with a *ConflictError naming the answer.
func TestChat_DeferStartBranchMovedMeanwhile(t *testing.T) {
	tr := newChatTract(t, nil)
	res, err := tr.Chat(context.Background(), "hello", tract.DeferStart(), tract.UseClient(movingClient{tr}))
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, "answer", conflict.What)
	log, lerr := tr.Log(context.Background())
	require.NoError(t, lerr)
	assert.Equal(t, []string{"another writer"}, texts(log))
	kept, err := tr.Show(context.Background(), conflict.Kept.String())
	require.NoError(t, err)
	assert.Equal(t, "the answer", kept.Text)
	assert.Equal(t, []tract.Hash{res.User}, kept.Parents)
	user, err := tr.Show(context.Background(), res.User.String())
	require.NoError(t, err)
	assert.Equal(t, "hello", user.Text)
}

// RetryLast with DeferStart leaves the failed turn as it was when the
// setup is wrong, and moves back to the message once the model answers.
func TestRetryLast_DeferStart(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Error(500, "on fire"), llmtest.Error(500, "on fire"), llmtest.Error(500, "on fire"),
		llmtest.Error(500, "on fire"), llmtest.Error(500, "on fire"))
	_, err := tr.Chat(context.Background(), "hello")
	require.Error(t, err)
	before := stateOf(t, tr)

	srv.Reply(llmtest.Unauthorized())
	_, err = tr.RetryLast(context.Background(), tract.DeferStart())
	require.ErrorAs(t, err, new(*tract.UnsentError))
	assert.Equal(t, before, stateOf(t, tr))

	srv.Reply(llmtest.Answer("at last"))
	res, err := tr.RetryLast(context.Background(), tract.DeferStart())
	require.NoError(t, err)
	log, err := tr.Log(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"at last", "hello"}, texts(log))
	assert.Equal(t, log[1].Hash, res.User)
}

// The message is on the branch as soon as the server starts answering:
// another reader sees the turn while its answer streams.
func TestChat_DeferStartShowsTheMessageWhileTheAnswerStreams(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("one two three"))
	var seen []string
	_, err := tr.Chat(context.Background(), "hello", tract.DeferStart(), tract.OnDelta(func(string) {
		if seen == nil {
			log, err := tr.Log(context.Background())
			require.NoError(t, err)
			seen = texts(log)
		}
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"hello"}, seen)
}

// NewConversation moves HEAD to the new branch with the message: with
// DeferStart, not at all when the setup is wrong. A branch that exists is
// refused before the model is called.
func TestChat_NewConversation(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	_, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, "on main")
	require.NoError(t, err)
	before := stateOf(t, tr)

	srv.Reply(llmtest.Unauthorized())
	_, err = tr.Chat(ctx, "hello", tract.DeferStart(), tract.NewConversation("fresh"))
	require.ErrorAs(t, err, new(*tract.UnsentError))
	assert.Equal(t, before, stateOf(t, tr))
	branch, _, err := tr.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main", branch)

	for _, deferred := range []bool{true, false} {
		name := fmt.Sprintf("fresh-%v", deferred)
		opts := []tract.ChatOption{tract.NewConversation(name), tract.SystemPrompt("S")}
		if deferred {
			opts = append(opts, tract.DeferStart())
		}
		srv.Reply(llmtest.Answer("hi"))
		_, err = tr.Chat(ctx, "hello", opts...)
		require.NoError(t, err)
		branch, _, err = tr.Head(ctx)
		require.NoError(t, err)
		assert.Equal(t, name, branch)
		log, err := tr.Log(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"hi", "hello", "S"}, texts(log), "no history")
	}

	n := len(srv.Requests())
	_, err = tr.Chat(ctx, "again", tract.DeferStart(), tract.NewConversation("main"))
	require.ErrorIs(t, err, tract.ErrBranchExists)
	assert.Len(t, srv.Requests(), n, "refused before the model is called")
}
