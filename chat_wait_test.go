//go:build unix

package tract_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// fastWait has a waiting turn look for its answer every millisecond.
var fastWait = tract.PollInterval(time.Millisecond, 5*time.Millisecond)

// pendingEscalation waits until tr lists one escalation, and returns it.
func pendingEscalation(t *testing.T, tr *tract.Tract) tract.PendingEscalation {
	t.Helper()
	var es []tract.PendingEscalation
	require.Eventually(t, func() bool {
		var err error
		es, err = tr.Escalations(context.Background())
		require.NoError(t, err)
		return len(es) > 0
	}, 10*time.Second, time.Millisecond)
	require.Len(t, es, 1)
	return es[0]
}

// A turn whose escalation waits goes on as soon as another caller answers
// it: the fix reaches the next attempt, the branch ends accepted, the
// escalation note records who answered, and the escalation's ref is gone.
func TestChat_EscalateWaitAnsweredFromElsewhere(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
	srv.When("use integers", llmtest.Answer(chatValid))

	type outcome struct {
		res *tract.ChatResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()),
			tract.MaxAttempts(2), tract.EscalateWait(fastWait))
		done <- outcome{res, err}
	}()

	e := pendingEscalation(t, tr)
	assert.Equal(t, "pending", string(e.State))
	assert.Equal(t, chatTask, e.Task)
	assert.Equal(t, "main", e.Branch)
	assert.Equal(t, tract.EscalateMaxRetries, e.Reason)
	assert.Equal(t, []int{1, 2, 2, 2}, []int{e.Round, e.Attempts, e.MaxAttempts, e.TotalAttempts})
	require.Len(t, e.Failures, 2)
	assert.Equal(t, "no 2", e.LastAnswer)
	assert.Contains(t, e.Question, "max_retries_exceeded after 2 of 2 attempts")
	assert.Equal(t, []string{"json"}, e.Waiting.Validators)
	_, head, err := tr.Head(context.Background())
	require.NoError(t, err)
	assert.Equal(t, head, e.Tip, "the branch stays at the last attempt while the escalation waits")

	answered, err := tr.AnswerEscalation(context.Background(), e.ID, tract.Resolution{Action: tract.ResolveFix, Instruction: "use integers", By: "bob"})
	require.NoError(t, err)
	require.NotNil(t, answered.Answer)
	assert.Equal(t, "bob", answered.Answer.By)

	out := <-done
	require.NoError(t, out.err)
	assert.Equal(t, chatValid, out.res.Text)
	assert.True(t, out.res.Purified)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, reqs[2].LastMessage(), "USER INTERVENTION (high priority)")
	assert.Contains(t, reqs[2].LastMessage(), "use integers")

	_, recs := escalationNotes(t, tr)
	require.Len(t, recs, 1)
	assert.Equal(t, e.ID, recs[0].ID)
	assert.Equal(t, "bob", recs[0].By)
	assert.Equal(t, answered.Answer.At, recs[0].Timestamp, "the record's time is the answer's")

	es, err := tr.Escalations(context.Background())
	require.NoError(t, err)
	assert.Empty(t, es, "the turn took the answer up")
	_, err = tr.EscalationByID(context.Background(), e.ID)
	var taken *tract.EscalationTakenUpError
	require.ErrorAs(t, err, &taken)

	// A late answer is refused, naming the one the turn went on with.
	_, err = tr.AnswerEscalation(context.Background(), e.ID, tract.Resolution{Action: tract.ResolveSkip})
	var dup *tract.AnsweredError
	require.ErrorAs(t, err, &dup)
	assert.True(t, dup.TakenUp)
	assert.ErrorIs(t, err, tract.ErrAnswered)
	assert.Contains(t, err.Error(), `"fix: use integers" by bob`)

	ev, err := tr.Events(context.Background(), tract.EventFilter{})
	require.NoError(t, err)
	var responses []tract.Event
	for _, x := range ev {
		if x.Event == "user_response" {
			responses = append(responses, x)
		}
	}
	require.Len(t, responses, 1)
	assert.Equal(t, "bob", responses[0].AnsweredBy)
	assert.Equal(t, e.ID, responses[0].EscalationID)
	st, err := tr.Stats(context.Background(), tract.StatsFilter{})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"bob": 1}, st.AnsweredBy)
}

// Of two answers given at once, one wins; the other is refused naming it.
func TestAnswerEscalation_OneAnswerWins(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"))
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		tract.EscalateWait(tract.ExitWhenEscalated()))
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)
	require.ErrorIs(t, err, tract.ErrWaiting)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, ans := range []tract.Resolution{{Action: tract.ResolveRetry, By: "a"}, {Action: tract.ResolveSkip, By: "b"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = tr.AnswerEscalation(context.Background(), waiting.ID, ans)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		var dup *tract.AnsweredError
		require.ErrorAs(t, err, &dup)
		assert.False(t, dup.TakenUp)
	}
	assert.Equal(t, 1, won, "exactly one answer wins: %v", errs)
	e, err := tr.EscalationByID(context.Background(), waiting.ID)
	require.NoError(t, err)
	assert.Equal(t, "answered", string(e.State))
}

// A turn that exits while its escalation waits leaves the branch at its
// last attempt; ResumeEscalation, given the answer, finishes it there as
// the waiting process would have.
func TestResumeEscalation_FinishesTheTurn(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"), llmtest.Answer(chatValid))
	opts := []tract.ChatOption{tract.Task(chatTask), tract.Validate(retry.JSON()), tract.MaxAttempts(2)}
	_, err := tr.Chat(context.Background(), chatQuestion, append(opts, tract.EscalateWait(tract.ExitWhenEscalated()))...)
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)
	assert.Equal(t, chatTask, waiting.Task)

	// Without an answer, a resume that does not wait says so.
	_, err = tr.ResumeEscalation(context.Background(), waiting.ID, append(opts, tract.EscalateWait(tract.ExitWhenEscalated()))...)
	require.ErrorIs(t, err, tract.ErrWaiting)

	_, err = tr.AnswerEscalation(context.Background(), waiting.ID, tract.Resolution{Action: tract.ResolveRetry})
	require.NoError(t, err)
	res, err := tr.ResumeEscalation(context.Background(), waiting.ID, opts...)
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 3, res.Attempts)
	assert.True(t, res.Purified)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))

	_, recs := escalationNotes(t, tr)
	require.Len(t, recs, 1)
	assert.Equal(t, tract.ResolveRetry, recs[0].Resolution)
	assert.NotEmpty(t, recs[0].By, "an answer without By records this user and host")

	_, err = tr.ResumeEscalation(context.Background(), waiting.ID, opts...)
	var taken *tract.EscalationTakenUpError
	require.ErrorAs(t, err, &taken)
}

// A resume waits for the answer when none was given yet; a cancelled wait
// leaves the escalation pending.
func TestResumeEscalation_WaitsForTheAnswer(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"))
	opts := []tract.ChatOption{tract.Validate(retry.JSON()), tract.MaxAttempts(1)}
	_, err := tr.Chat(context.Background(), chatQuestion, append(opts, tract.EscalateWait(tract.ExitWhenEscalated()))...)
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = tr.ResumeEscalation(ctx, waiting.ID, append(opts, tract.EscalateWait(fastWait))...)
	require.ErrorIs(t, err, tract.ErrWaiting)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	e, err := tr.EscalationByID(context.Background(), waiting.ID)
	require.NoError(t, err)
	assert.Equal(t, "pending", string(e.State))

	go func() {
		time.Sleep(5 * time.Millisecond)
		_, _ = tr.AnswerEscalation(context.Background(), waiting.ID, tract.Resolution{Action: tract.ResolveSkip})
	}()
	_, err = tr.ResumeEscalation(context.Background(), waiting.ID, append(opts, tract.EscalateWait(fastWait))...)
	require.ErrorIs(t, err, tract.ErrSkipped)
}

// gc keeps a pending escalation, and the attempts under it, however old.
func TestGC_KeepsPendingEscalations(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"))
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		tract.EscalateWait(tract.ExitWhenEscalated()))
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)
	// Another conversation moves HEAD away; the attempt is reachable
	// only from the escalation's ref.
	_, err = tr.SwitchOrphan(context.Background(), "other")
	require.NoError(t, err)
	_, err = tr.GC(context.Background(), tract.GCExpiry(0))
	require.NoError(t, err)
	e, err := tr.EscalationByID(context.Background(), waiting.ID)
	require.NoError(t, err)
	_, err = tr.Show(context.Background(), e.Tip.String())
	require.NoError(t, err, "the turn's last attempt survives gc")
}

// Bad ids and answers are refused with what was wrong.
func TestAnswerEscalation_Refusals(t *testing.T) {
	tr, _ := newChatServerTract(t)
	_, err := tr.AnswerEscalation(context.Background(), "nosuch", tract.Resolution{Action: tract.ResolveRetry})
	require.ErrorIs(t, err, tract.ErrEscalationNotFound)
	_, err = tr.AnswerEscalation(context.Background(), "a/b", tract.Resolution{Action: tract.ResolveRetry})
	require.Error(t, err)
	assert.False(t, errors.Is(err, tract.ErrEscalationNotFound))
	_, err = tr.AnswerEscalation(context.Background(), "abc", tract.Resolution{Action: tract.ResolveFix})
	require.ErrorContains(t, err, "needs an instruction")
}

// A round ended by a model server that stayed unavailable waits too; the
// resumed turn writes the failed call's error commit and asks again, and
// with the fresh retry context purifies as the waiting process would.
func TestResumeEscalation_AfterAnUnavailableServer(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Error(503, "Service Unavailable"))
	opts := []tract.ChatOption{tract.Validate(retry.JSON()), tract.RetryContextStrategy(tract.ContextFresh)}
	_, err := tr.Chat(ctx, chatQuestion, append(opts, tract.EscalateWait(tract.ExitWhenEscalated()))...)
	var waiting *tract.WaitingError
	require.ErrorAs(t, err, &waiting)
	assert.Equal(t, tract.EscalateTransport, waiting.Reason)
	assert.Equal(t, []string{"user message"}, chatShape(chatLog(t, tr)), "nothing of the failed call yet")

	e, err := tr.EscalationByID(ctx, waiting.ID)
	require.NoError(t, err)
	assert.True(t, e.Waiting.ModelFailed)
	_, err = tr.AnswerEscalation(ctx, waiting.ID, tract.Resolution{Action: tract.ResolveRetry, By: "ops"})
	require.NoError(t, err)
	srv.Otherwise(llmtest.Answer(chatValid)) // the server is back
	res, err := tr.ResumeEscalation(ctx, waiting.ID, opts...)
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 2, res.Attempts, "the failed call was attempt 1")
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))

	evs, err := tr.Events(ctx, tract.EventFilter{})
	require.NoError(t, err)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Event)+" "+string(e.Reason)+e.Response+e.Resolution+e.AnsweredBy)
	}
	assert.Equal(t, []string{"attempt ", "escalated transport", "user_response retryops", "attempt ", "resolved success"}, kinds)
}

// A skip given in the repository ends the turn as a hook's skip: the
// skip note records who answered, the call is a *SkippedError.
func TestEscalateWait_Skip(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no"))
	done := make(chan error, 1)
	go func() {
		_, err := tr.Chat(ctx, chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()), tract.MaxAttempts(1), tract.EscalateWait(fastWait))
		done <- err
	}()
	e := pendingEscalation(t, tr)
	_, err := tr.AnswerEscalation(ctx, e.ID, tract.Resolution{Action: tract.ResolveSkip, By: "ann"})
	require.NoError(t, err)
	require.ErrorIs(t, <-done, tract.ErrSkipped)
	notes, recs := escalationNotes(t, tr)
	require.Len(t, recs, 1)
	assert.Equal(t, tract.ResolveSkip, recs[0].Resolution)
	assert.Equal(t, "ann", recs[0].By)
	assert.Equal(t, notes[0].Hash, chatLog(t, tr)[0].Hash, "the skip note ends the branch")
	es, err := tr.Escalations(ctx)
	require.NoError(t, err)
	assert.Empty(t, es)
}
