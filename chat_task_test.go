//go:build unix

package tract_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

const chatTask = "03-01:task-3"

// everyCommit lists every commit of the repository, orphans included.
func everyCommit(t testing.TB, tr *tract.Tract) []*tract.CommitInfo {
	t.Helper()
	all := chatLogAll(t, tr)
	cs := append([]*tract.CommitInfo{}, all.Commits...)
	for _, o := range all.Orphans {
		cs = append(cs, o.Commits...)
	}
	return cs
}

// failedAttempt returns the commit that recorded the failure of attempt n
// (a rejected answer, or the error commit of a failed model call).
func failedAttempt(t testing.TB, tr *tract.Tract, n int) *tract.CommitInfo {
	t.Helper()
	for _, c := range everyCommit(t, tr) {
		if r, ok := c.FailureRecord(); ok && r.Attempt == n {
			return c
		}
	}
	require.Failf(t, "no failure record", "attempt %d", n)
	return nil
}

func mustSpec(t testing.TB, spec string, opts ...retry.SpecOption) retry.Validator {
	t.Helper()
	v, err := retry.ParseSpec(spec, opts...)
	require.NoError(t, err)
	return v
}

// Every commit a retried turn writes carries its task id: the system
// prompt and user message, the attempts and the steering (now orphans),
// the purified answer and the provenance note.
func TestChat_TaskOnEveryCommitOfARetriedTurn(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("failed validation", llmtest.Answer(chatValid))

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.SystemPrompt("Answer in JSON."),
		tract.Validate(retry.JSON()), tract.ProvenanceNote())
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts)

	cs := everyCommit(t, tr)
	require.Len(t, cs, 7, "system, user, answer, steering, answer, clean answer, note")
	for _, c := range cs {
		assert.Equal(t, chatTask, c.Task(), "%s %s %q", c.Role, c.Kind, c.Text)
	}
}

// A task id the turn refuses fails the call before anything is written or
// asked.
func TestChat_BadTaskIDRefusedWithNothingWritten(t *testing.T) {
	tests := []struct {
		name, id, want string
	}{
		{"empty", "", `task id "" is empty`},
		{"blank", "  ", "is only white space"},
		{"two lines", "task-1\ntask-2", "is more than one line"},
		{"carriage return", "task-1\r", "is more than one line"},
		{"control character", "task\x00", "contains a control character"},
		{"invalid UTF-8", "task-\xff", "is not valid UTF-8"},
		{"too long", strings.Repeat("t", tract.MaxTaskIDLen+1), "is 201 bytes, more than the maximum of 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			for name, call := range map[string]func() error{
				"Chat": func() error {
					_, err := tr.Chat(context.Background(), chatQuestion, tract.Task(tt.id))
					return err
				},
				"Generate": func() error {
					_, err := tr.Generate(context.Background(), tract.Task(tt.id))
					return err
				},
			} {
				err := call()
				var te *tract.TaskIDError
				require.ErrorAs(t, err, &te, name)
				assert.Equal(t, tt.id, te.ID)
				assert.ErrorContains(t, err, tt.want, name)
			}
			assert.Empty(t, everyCommit(t, tr))
			assert.Empty(t, srv.Requests())
		})
	}
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("fine"))
	_, err := tr.Chat(context.Background(), "hi", tract.Task(strings.Repeat("é", tract.MaxTaskIDLen/2)))
	assert.NoError(t, err, "200 bytes is allowed")
}

func TestChat_FailureRecordOfEachType(t *testing.T) {
	ok := func(code int) *int { return &code }
	tests := []struct {
		name      string
		validator func(t *testing.T, client llm.Client) retry.Validator
		script    func(srv *llmtest.Server)
		want      tract.FailureRecord // Timestamp is not compared
	}{
		{
			name:      "json rejection",
			validator: func(*testing.T, llm.Client) retry.Validator { return retry.JSON() },
			script: func(srv *llmtest.Server) {
				srv.Reply(llmtest.Answer("not json"), llmtest.Answer(chatValid))
			},
			want: tract.FailureRecord{Attempt: 1, Type: retry.FailureVerification,
				Error:   "invalid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')",
				Details: "invalid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')"},
		},
		{
			name: "cmd rejection",
			validator: func(t *testing.T, _ llm.Client) retry.Validator {
				return mustSpec(t, "cmd:grep -q ok || { echo checking; echo 'FAIL: no ok'; exit 3; }")
			},
			script: func(srv *llmtest.Server) { srv.Reply(llmtest.Answer("nope"), llmtest.Answer("ok")) },
			want: tract.FailureRecord{Attempt: 1, Type: retry.FailureVerification,
				Error:   "grep -q ok || { echo checking; echo 'FAIL: no ok'; exit 3; } exited with status 3: FAIL: no ok",
				Details: "command exited with status 3:\nchecking\nFAIL: no ok",
				Command: "grep -q ok || { echo checking; echo 'FAIL: no ok'; exit 3; }", ExitCode: ok(3),
				OutputSummary: "checking\nFAIL: no ok"},
		},
		{
			name: "cmd timeout",
			// The accepted answer's check must finish within the timeout
			// too, on a loaded machine: the timeout is not made shorter.
			validator: func(t *testing.T, _ llm.Client) retry.Validator {
				return mustSpec(t, "cmd:grep -q ok || exec sleep 5", retry.WithCmdTimeout(500*time.Millisecond))
			},
			script: func(srv *llmtest.Server) { srv.Reply(llmtest.Answer("nope"), llmtest.Answer("ok")) },
			want: tract.FailureRecord{Attempt: 1, Type: retry.FailureTimeout,
				Error:   "grep -q ok || exec sleep 5 timed out after 500ms",
				Details: "command timed out after 500ms (no output)",
				Command: "grep -q ok || exec sleep 5"},
		},
		{
			name: "llm judge rejection",
			validator: func(t *testing.T, client llm.Client) retry.Validator {
				return mustSpec(t, "llm:is polite", retry.WithJudge(tract.Judge(client, "")))
			},
			script: func(srv *llmtest.Server) {
				srv.When("<answer>\nGo away.\n</answer>", llmtest.Answer(`{"pass": false, "reason": "rude"}`))
				srv.When("<answer>\nHello.\n</answer>", llmtest.Answer(`{"pass": true, "reason": "polite"}`))
				srv.Reply(llmtest.Answer("Go away."), llmtest.Answer("Hello."))
			},
			want: tract.FailureRecord{Attempt: 1, Type: retry.FailureRejected, Error: "rude", Details: "rude"},
		},
		{
			name:      "empty answer",
			validator: func(*testing.T, llm.Client) retry.Validator { return retry.JSON() },
			script:    func(srv *llmtest.Server) { srv.Reply(llmtest.Answer(""), llmtest.Answer(chatValid)) },
			want: tract.FailureRecord{Attempt: 1, Type: retry.FailureExecution,
				Error: "the answer is empty", Details: "the answer is empty"},
		},
		{
			name:      "model failure on attempt 2",
			validator: func(*testing.T, llm.Client) retry.Validator { return retry.JSON() },
			script: func(srv *llmtest.Server) {
				srv.Reply(llmtest.Answer("not json"), llmtest.Error(500, "the server is on fire"))
			},
			want: tract.FailureRecord{Attempt: 2, Type: retry.FailureExecution,
				Error:   "model server error (HTTP 500): the server is on fire",
				Details: "model server error (HTTP 500): the server is on fire"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			client := newChatClient(t, srv, llm.WithMaxRetries(0))
			tr := newChatTract(t, client)
			tt.script(srv)

			_, _ = tr.Chat(context.Background(), "Answer.", tract.Task(chatTask), tract.Validate(tt.validator(t, client)))

			c := failedAttempt(t, tr, tt.want.Attempt)
			got, ok := c.FailureRecord()
			require.True(t, ok)
			assert.False(t, got.Timestamp.IsZero())
			assert.False(t, got.Timestamp.After(c.Time), "the failure is found before its commit is made")
			got.Timestamp = time.Time{}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, chatTask, c.Task())
		})
	}
}

// A validator may suggest a fix; the failure record keeps it.
func TestChat_FailureRecordKeepsSuggestedFix(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("Notes"), llmtest.Answer("# Notes"))
	v := retry.CheckerFunc("title", func(_ context.Context, answer string) (retry.Verdict, error) {
		if !strings.HasPrefix(answer, "# ") {
			return retry.Verdict{Diagnosis: "no title", SuggestedFix: "start with '# '"}, nil
		}
		return retry.Verdict{OK: true}, nil
	})
	_, err := tr.Chat(context.Background(), "Write notes.", tract.Validate(v))
	require.NoError(t, err)
	r, ok := failedAttempt(t, tr, 1).FailureRecord()
	require.True(t, ok)
	assert.Equal(t, "start with '# '", r.SuggestedFix)
}

// Model failures that the next request would share stop the turn at once
// with an *EscalationError that still reaches the client's error; the
// error commit holds the failure record.
func TestChat_ModelFailuresThatEscalate(t *testing.T) {
	tests := []struct {
		name   string
		reply  llmtest.Reply
		reason tract.EscalationReason
	}{
		{"401", llmtest.Unauthorized(), tract.EscalateAuth},
		{"403", llmtest.Error(403, "this key may not use the model"), tract.EscalatePermission},
		{"400", llmtest.Error(400, "messages[0].role is invalid"), tract.EscalateMalformedRequest},
		{"context length", llmtest.ContextLengthExceeded(), tract.EscalateContextLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer("not json"), tt.reply)

			res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()), tract.MaxAttempts(5))
			var esc *tract.EscalationError
			require.ErrorAs(t, err, &esc)
			assert.Equal(t, tt.reason, esc.Reason)
			assert.Equal(t, chatTask, esc.Task)
			assert.Equal(t, 1, esc.Attempts)
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr, "the client's error is reachable")
			require.NotNil(t, esc.Err)
			assert.Equal(t, esc.Err.Error(), esc.Error())
			assert.Len(t, srv.Requests(), 2, "no request after the one that escalated")

			require.Len(t, esc.Failures, 2)
			assert.Equal(t, retry.FailureVerification, esc.Failures[0].Type)
			assert.Empty(t, esc.Failures[0].Escalation)
			assert.Equal(t, tract.FailureRecord{Attempt: 2, Timestamp: esc.Failures[1].Timestamp, Type: retry.FailureExecution,
				Error: errorLine(esc.Err.Error()), Details: esc.Err.Error(), Escalation: tt.reason}, esc.Failures[1])

			log := chatLog(t, tr)
			require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
			assert.Equal(t, res.Commit, log[0].Hash)
			r, ok := log[0].FailureRecord()
			require.True(t, ok)
			assert.Equal(t, esc.Failures[1], r)
		})
	}
}

func errorLine(s string) string {
	if len([]rune(s)) > 200 {
		return string([]rune(s)[:199]) + "…"
	}
	return s
}

// A 401 on the first attempt: one request, one failure, no retry.
func TestChat_UnauthorizedEscalatesAfterOneAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Unauthorized())
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
	var esc *tract.EscalationError
	require.ErrorAs(t, err, &esc)
	assert.Equal(t, tract.EscalateAuth, esc.Reason)
	assert.Equal(t, 0, esc.Attempts, "no answer came")
	require.Len(t, esc.Failures, 1)
	assert.Equal(t, 1, esc.Failures[0].Attempt)
	assert.Len(t, srv.Requests(), 1)
}

// A validator that reports the answer blocked stops the turn at once: the
// attempt is recorded, the branch is purified to user + error commit.
func TestChat_BlockedValidatorEscalatesAtOnce(t *testing.T) {
	tests := []struct {
		name      string
		validator retry.Validator
		error     string
	}{
		{
			"API", retry.CheckerFunc("env", func(context.Context, string) (retry.Verdict, error) {
				return retry.Verdict{Blocked: "the test database is down"}, nil
			}),
			"blocked: the test database is down",
		},
		{
			"cmd exit 77", mustSpec(t, "cmd:echo 'no compiler installed'; exit 77"),
			"blocked: echo 'no compiler installed'; exit 77 exited with status 77, which means blocked: no compiler installed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer("an answer"))

			res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(tt.validator), tract.MaxAttempts(3))
			var esc *tract.EscalationError
			require.ErrorAs(t, err, &esc)
			assert.Equal(t, tract.EscalateBlocked, esc.Reason)
			assert.Nil(t, esc.Err)
			assert.Equal(t, 1, esc.Attempts)
			require.Len(t, esc.Failures, 1)
			assert.Equal(t, tt.error, esc.Failures[0].Error)
			assert.Equal(t, tract.EscalateBlocked, esc.Failures[0].Escalation)
			assert.Equal(t, "chat: attempt 1 is blocked, which retrying cannot fix: "+tt.error, err.Error())
			assert.Len(t, srv.Requests(), 1, "no attempt after a blocked one")

			require.NotNil(t, res)
			assert.True(t, res.Purified)
			assert.Len(t, res.Diagnoses, 1)
			log := chatLog(t, tr)
			require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
			assert.Equal(t, res.Commit, log[0].Hash)
			assert.Equal(t, "validation stopped after 1 attempt: "+tt.error, log[0].Text)
			assert.Equal(t, chatTask, log[0].Task())
			r, ok := failedAttempt(t, tr, 1).FailureRecord()
			require.True(t, ok)
			assert.Equal(t, esc.Failures[0], r)
		})
	}
}
