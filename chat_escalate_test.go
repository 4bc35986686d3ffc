//go:build unix

package tract_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// answering returns an escalation hook that gives the answers in order
// (the last one from then on) and records what it was told.
func answering(seen *[]tract.Escalation, answers ...tract.Resolution) tract.ChatOption {
	return tract.OnEscalation(func(_ context.Context, e tract.Escalation) (tract.Resolution, error) {
		*seen = append(*seen, e)
		return answers[min(len(*seen), len(answers))-1], nil
	})
}

// escalationNotes returns the notes holding an escalation record, with
// their records.
func escalationNotes(t testing.TB, tr *tract.Tract) (notes []*tract.CommitInfo, recs []tract.EscalationRecord) {
	t.Helper()
	for _, c := range everyCommit(t, tr) {
		if r, ok := c.EscalationRecord(); ok {
			assert.Equal(t, tract.KindNote, c.Kind)
			notes, recs = append(notes, c), append(recs, r)
		}
	}
	return notes, recs
}

// retry after exhaustion runs a fresh round of MaxAttempts attempts: round
// 2 fails once more and then succeeds, which its own budget allows.
func TestChat_EscalationRetryRunsAFreshRound(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"), llmtest.Answer("no 3"), llmtest.Answer(chatValid))
	var seen []tract.Escalation
	var attempts []tract.Attempt

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveRetry}),
		tract.OnAttempt(func(a tract.Attempt) { attempts = append(attempts, a) }))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 4, res.Attempts)
	assert.True(t, res.Purified)

	require.Len(t, seen, 1)
	e := seen[0]
	assert.Equal(t, tract.EscalateMaxRetries, e.Reason)
	assert.Equal(t, chatTask, e.Task)
	assert.Equal(t, []int{1, 2, 2, 2}, []int{e.Round, e.Attempts, e.MaxAttempts, e.TotalAttempts})
	assert.Equal(t, "no 2", e.LastAnswer)
	require.Len(t, e.Failures, 2)
	assert.Equal(t, []int{1, 2}, []int{e.Failures[0].Attempt, e.Failures[1].Attempt})

	// Attempt numbers count on; each round may make MaxAttempts attempts.
	var numbers [][2]int
	for _, a := range attempts {
		numbers = append(numbers, [2]int{a.Number, a.Max})
	}
	assert.Equal(t, [][2]int{{1, 2}, {2, 2}, {3, 4}, {4, 4}}, numbers)
	r3, ok := failedAttempt(t, tr, 3).FailureRecord()
	require.True(t, ok)
	assert.Equal(t, 2, r3.Round, "a later round's failure records its round")
	r1, _ := failedAttempt(t, tr, 1).FailureRecord()
	assert.Zero(t, r1.Round)

	// Round 2 opens with the escalation note and the steering for the
	// last failure, on the attempts chain; the branch is clean.
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, chatSteering(chatJSONDiagnosis(t, "no 2")), reqs[2].LastMessage())
	_, recs := escalationNotes(t, tr)
	require.Len(t, recs, 1)
	assert.Equal(t, tract.EscalationRecord{Round: 1, Attempts: 2, Reason: tract.EscalateMaxRetries,
		Resolution: tract.ResolveRetry, Timestamp: recs[0].Timestamp}, recs[0])
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
}

// The first attempt of a later round may pass: the turn still purifies.
func TestChat_EscalationRetryFirstAttemptOfRoundPurifies(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no"), llmtest.Answer(chatValid))
	var seen []tract.Escalation
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		answering(&seen, tract.Resolution{Action: tract.ResolveRetry}))
	require.NoError(t, err)
	assert.True(t, res.Purified)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	p, ok := log[0].Provenance()
	require.True(t, ok)
	assert.Equal(t, 2, p.Attempts)
}

// skip ends the turn as without a hook, commits a skip note on the branch
// and returns a *SkippedError that still reaches the exhaustion.
func TestChat_EscalationSkipCommitsASkipNote(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
	var seen []tract.Escalation

	_, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveSkip}))
	require.ErrorIs(t, err, tract.ErrSkipped)
	assert.NotErrorIs(t, err, tract.ErrAborted)
	var skipped *tract.SkippedError
	require.ErrorAs(t, err, &skipped)
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex, "the exhaustion is reachable")
	assert.Equal(t, "no 2", ex.LastResult)
	assert.Equal(t, chatTask, skipped.Task)
	assert.Equal(t, tract.EscalateMaxRetries, skipped.Reason)
	assert.True(t, strings.HasPrefix(err.Error(), `chat: skipped task "03-01:task-3" (max_retries_exceeded): all 2 attempts failed`), err.Error())

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error", "system note"}, chatShape(log))
	assert.Equal(t, skipped.Note, log[0].Hash)
	assert.Equal(t, chatTask, log[0].Task())
	rec, ok := log[0].EscalationRecord()
	require.True(t, ok)
	assert.Equal(t, tract.ResolveSkip, rec.Resolution)
	assert.Equal(t, tract.EscalateMaxRetries, rec.Reason)
	assert.False(t, rec.Timestamp.IsZero())
	assert.Equal(t, "skipped: max_retries_exceeded after 2 attempts", log[0].Text)
	assert.Len(t, srv.Requests(), 2)
}

// abort ends the turn as without a hook (the attempts and the error commit
// stay), records the answer in the error commit, and returns an
// *AbortedError; without purify, which writes no error commit, a note
// records it.
func TestChat_EscalationAbortKeepsPartialState(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
	var seen []tract.Escalation

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveAbort}))
	require.ErrorIs(t, err, tract.ErrAborted)
	var aborted *tract.AbortedError
	require.ErrorAs(t, err, &aborted)
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Len(t, seen, 1)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	rec, ok := log[0].EscalationRecord()
	require.True(t, ok, "the error commit records the answer")
	assert.Equal(t, tract.ResolveAbort, rec.Resolution)
	assert.Equal(t, tract.EscalateMaxRetries, rec.Reason)
	assert.Len(t, chatLogAll(t, tr).Orphans, 1, "the failed attempts stay in the repository")
	evs, err := tr.Events(context.Background(), tract.EventFilter{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evs), 3)
	assert.Equal(t, tract.EventUserResponse, evs[len(evs)-2].Event)
	assert.Equal(t, "aborted", evs[len(evs)-1].Resolution)

	t.Run("without purify", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
		_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2), tract.Purify(false),
			answering(&seen, tract.Resolution{Action: tract.ResolveAbort}))
		require.ErrorIs(t, err, tract.ErrAborted)
		log := chatLog(t, tr)
		assert.Equal(t, "aborted: max_retries_exceeded after 2 attempts", log[0].Text)
		_, recs := escalationNotes(t, tr)
		require.Len(t, recs, 1)
		assert.Equal(t, tract.ResolveAbort, recs[0].Resolution)
	})
}

// fix runs one more round whose steering starts with the instruction,
// marked as the user's intervention; the model's next request carries it.
func TestChat_EscalationFixInjectsTheInstruction(t *testing.T) {
	const instruction = `Answer with the object {"name": "Ada"} and nothing else.`
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
	srv.When(instruction, llmtest.Answer(chatValid))
	var seen []tract.Escalation

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveFix, Instruction: instruction}))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	require.Len(t, seen, 1)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	want := "USER INTERVENTION (high priority). After automated recovery failed, the user gave this instruction; treat it as authoritative:\n" +
		instruction + "\n\n" + chatSteering(chatJSONDiagnosis(t, "no 2"))
	assert.Equal(t, want, reqs[2].LastMessage())
	for _, m := range reqs[1].Messages {
		assert.NotContains(t, m.Content, instruction, "no intervention before the fix")
	}
	_, recs := escalationNotes(t, tr)
	require.Len(t, recs, 1)
	assert.Equal(t, tract.ResolveFix, recs[0].Resolution)
	assert.Equal(t, instruction, recs[0].Instruction)
}

// Failures retrying cannot fix reach the hook too, with their reason.
func TestChat_EscalationOfNonRetryableFailures(t *testing.T) {
	t.Run("blocked validator, skipped", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer("an answer"))
		blocked := retry.CheckerFunc("env", func(context.Context, string) (retry.Verdict, error) {
			return retry.Verdict{Blocked: "the test database is down"}, nil
		})
		var seen []tract.Escalation
		_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(blocked), answering(&seen, tract.Resolution{Action: tract.ResolveSkip}))
		require.ErrorIs(t, err, tract.ErrSkipped)
		var esc *tract.EscalationError
		require.ErrorAs(t, err, &esc)
		require.Len(t, seen, 1)
		assert.Equal(t, tract.EscalateBlocked, seen[0].Reason)
		assert.Equal(t, 1, seen[0].Attempts)
		assert.Equal(t, "an answer", seen[0].LastAnswer)
	})
	t.Run("401, retried", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Unauthorized(), llmtest.Answer(chatValid))
		var seen []tract.Escalation
		res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), answering(&seen, tract.Resolution{Action: tract.ResolveRetry}))
		require.NoError(t, err)
		require.Len(t, seen, 1)
		e := seen[0]
		assert.Equal(t, tract.EscalateAuth, e.Reason)
		require.Len(t, e.Failures, 1)
		assert.Equal(t, tract.EscalateAuth, e.Failures[0].Escalation)
		assert.Equal(t, 1, e.Failures[0].Attempt)
		assert.Empty(t, e.LastAnswer)
		assert.Equal(t, 2, res.Attempts, "the failed call was attempt 1")
		assert.True(t, res.Purified)
		assert.Len(t, srv.Requests(), 2)
		r, ok := failedAttempt(t, tr, 1).FailureRecord()
		require.True(t, ok, "the failed call is recorded on the attempts chain")
		assert.Equal(t, tract.EscalateAuth, r.Escalation)
	})
}

// A hook that always answers retry is asked MaxRounds-1 times; the last
// round then ends the turn as without a hook.
func TestChat_EscalationRoundsAreBounded(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Answer("never JSON"))
	var seen []tract.Escalation
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveRetry}))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.NotErrorIs(t, err, tract.ErrAborted)
	assert.Len(t, seen, tract.MaxRounds-1)
	assert.Equal(t, tract.MaxRounds-1, seen[len(seen)-1].Round)
	assert.Len(t, srv.Requests(), 2*tract.MaxRounds)
	assert.Equal(t, 2*tract.MaxRounds, res.Attempts)
	assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
	// The error counts every round's attempts, not the last round's.
	assert.Equal(t, 2*tract.MaxRounds, ex.Attempts)
	assert.Equal(t, tract.MaxRounds, ex.Rounds)
	assert.Len(t, ex.History, 2*tract.MaxRounds)
	assert.True(t, strings.HasPrefix(err.Error(), "chat: all 10 attempts failed, in 5 rounds; last diagnosis: "), err.Error())
}

// A skip after several rounds says the turn's attempts, not the last
// round's.
func TestChat_EscalationSkipAfterRoundsCountsEveryAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Answer("never JSON"))
	var seen []tract.Escalation
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveRetry}, tract.Resolution{Action: tract.ResolveRetry}, tract.Resolution{Action: tract.ResolveSkip}))
	require.ErrorIs(t, err, tract.ErrSkipped)
	assert.True(t, strings.HasPrefix(err.Error(), "chat: skipped (max_retries_exceeded): all 6 attempts failed, in 3 rounds; last diagnosis: "), err.Error())
	assert.Equal(t, "skipped: max_retries_exceeded after 6 attempts", chatLog(t, tr)[0].Text)
}

// A model server that stays unavailable through the client's retries
// escalates to a hook as "transport", like exhaustion: the failure record
// and the events say so, and the hook's answer decides. Without a hook it
// is a failed model call, as before.
func TestChat_EscalationOfAnUnavailableServer(t *testing.T) {
	ctx := context.Background()
	t.Run("skipped", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Otherwise(llmtest.Error(503, "Service Unavailable"))
		var seen []tract.Escalation
		_, err := tr.Chat(ctx, chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()), answering(&seen, tract.Resolution{Action: tract.ResolveSkip}))
		require.ErrorIs(t, err, tract.ErrSkipped)
		var server *llm.ServerError
		require.ErrorAs(t, err, &server, "the server's error is reachable")
		var esc *tract.EscalationError
		assert.False(t, errors.As(err, &esc), "not a failure retrying cannot fix")
		require.Len(t, seen, 1)
		assert.Equal(t, tract.EscalateTransport, seen[0].Reason)
		assert.Equal(t, 1, seen[0].Attempts)
		require.Len(t, seen[0].Failures, 1)
		assert.Equal(t, tract.EscalateTransport, seen[0].Failures[0].Escalation)

		log := chatLog(t, tr)
		require.Equal(t, []string{"user message", "assistant error", "system note"}, chatShape(log))
		r, ok := log[1].FailureRecord()
		require.True(t, ok)
		assert.Equal(t, tract.EscalateTransport, r.Escalation)
		evs, err := tr.Events(ctx, tract.EventFilter{})
		require.NoError(t, err)
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, string(e.Event)+" "+string(e.Reason)+e.Response+e.Resolution)
		}
		assert.Equal(t, []string{"attempt ", "escalated transport", "user_response skip", "resolved skipped"}, kinds)
	})
	t.Run("retried when it is back", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Otherwise(llmtest.Error(502, "Bad Gateway"))
		hook := tract.OnEscalation(func(_ context.Context, e tract.Escalation) (tract.Resolution, error) {
			assert.Equal(t, tract.EscalateTransport, e.Reason)
			srv.Otherwise(llmtest.Answer(chatValid)) // the server is back
			return tract.Resolution{Action: tract.ResolveRetry}, nil
		})
		res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), hook)
		require.NoError(t, err)
		assert.Equal(t, chatValid, res.Text)
		assert.Equal(t, 2, res.Attempts, "the failed call was attempt 1")
		assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
	})
	t.Run("no hook", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Otherwise(llmtest.Error(503, "Service Unavailable"))
		_, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
		var server *llm.ServerError
		require.ErrorAs(t, err, &server)
		assert.NotErrorIs(t, err, tract.ErrAborted)
		log := chatLog(t, tr)
		require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
		r, ok := log[0].FailureRecord()
		require.True(t, ok)
		assert.Empty(t, r.Escalation)
		evs, err := tr.Events(ctx, tract.EventFilter{})
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		assert.Equal(t, "failed", evs[len(evs)-1].Resolution)
	})
}

// A hook that fails, or gives no valid answer, ends the turn as abort
// would, its error joined to the turn's.
func TestChat_EscalationHookErrorEndsTheTurn(t *testing.T) {
	boom := errors.New("the operator went home")
	tests := []struct {
		name string
		hook tract.EscalationFunc
		want string
	}{
		{"error", func(context.Context, tract.Escalation) (tract.Resolution, error) { return tract.Resolution{}, boom },
			"\nescalation hook: the operator went home"},
		{"fix without instruction", func(context.Context, tract.Escalation) (tract.Resolution, error) {
			return tract.Resolution{Action: tract.ResolveFix}, nil
		}, "\nescalation hook: \"fix\" needs an instruction"},
		{"unknown action", func(context.Context, tract.Escalation) (tract.Resolution, error) {
			return tract.Resolution{Action: "later"}, nil
		}, "\nescalation hook: unknown resolution \"later\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer("no"))
			// The hook's error follows the turn's on a line of its own.
			_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(1), tract.OnEscalation(tt.hook))
			var ex *retry.ExhaustedError
			require.ErrorAs(t, err, &ex)
			assert.ErrorContains(t, err, tt.want)
			assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
		})
	}
}

func TestParseResolution(t *testing.T) {
	tests := []struct {
		in   string
		want tract.Resolution
		err  string
	}{
		{"retry", tract.Resolution{Action: tract.ResolveRetry}, ""},
		{"  Skip\n", tract.Resolution{Action: tract.ResolveSkip}, ""},
		{"ABORT", tract.Resolution{Action: tract.ResolveAbort}, ""},
		{"fix: trim the input: then parse", tract.Resolution{Action: tract.ResolveFix, Instruction: "trim the input: then parse"}, ""},
		{"fix:", tract.Resolution{}, `"fix" needs an instruction`},
		{"fix", tract.Resolution{}, `"fix" needs an instruction`},
		{"maybe", tract.Resolution{}, `"maybe" is no answer to an escalation`},
		{"retry: now", tract.Resolution{}, `"retry: now" is no answer`},
		{"", tract.Resolution{}, `"" is no answer`},
	}
	for _, tt := range tests {
		got, err := tract.ParseResolution(tt.in)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got)
		round, err := tract.ParseResolution(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, round, "String reads back")
	}
}
