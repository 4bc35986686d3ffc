package tract_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// The third request of an xml turn ends with a retry context that lists
// both earlier failures, in order, each with its failure record.
func TestChat_XMLFeedbackOnAttempt3ListsBothFailures(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("<draft>"), llmtest.Answer("second draft"), llmtest.Answer(chatValid))

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.Feedback(retry.FeedbackXML))
	require.NoError(t, err)
	require.Equal(t, 3, res.Attempts)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	third := reqs[2].LastMessage()
	require.True(t, strings.HasPrefix(third, `<retry_context attempt="3" max_attempts="3">`), third)
	first, second := strings.Index(third, `<failure attempt="1">`), strings.Index(third, `<failure attempt="2">`)
	require.True(t, first > 0 && second > first, "both failures, in order:\n%s", third)
	assert.Contains(t, third, "<error_summary>invalid JSON at line 1, column 1: invalid character '&lt;' looking for beginning of value</error_summary>",
		"escaped")
	for i, answer := range []string{"<draft>", "second draft"} {
		r, ok := failedAttempt(t, tr, i+1).FailureRecord()
		require.True(t, ok)
		assert.Contains(t, third, "<timestamp>"+r.Timestamp.UTC().Format("2006-01-02T15:04:05Z07:00")+"</timestamp>")
		assert.Contains(t, third, "<type>verification_failed</type>")
		assert.Contains(t, third, "<error_summary>"+strings.ReplaceAll(chatJSONDiagnosis(t, answer), "<", "&lt;")+"</error_summary>")
	}
	assert.Contains(t, third, "This is attempt 3 of 3.")
	assert.Contains(t, third, `"BLOCKED: &lt;reason&gt;"`)
	assert.Contains(t, reqs[1].LastMessage(), `<retry_context attempt="2" max_attempts="3">`)
	assert.NotContains(t, reqs[1].LastMessage(), `<failure attempt="2">`)
}

// Each strategy keeps every attempt as commits and ends, after purify, in
// the same clean branch; fresh sends the feedback before the task message
// and never a failed answer.
func TestChat_RetryContextStrategies(t *testing.T) {
	bad := []string{"Sure! {name: Ada}", "{name: Ada}"}
	tests := []struct {
		name     string
		strategy tract.ContextStrategy
		feedback retry.FeedbackFormat
		// sent is what attempt 3 is sent, as "role: start of text".
		sent []string
	}{
		{"conversation plain", tract.ContextConversation, retry.FeedbackPlain, []string{
			"system: Answer in JSON.", "user: " + chatQuestion, "assistant: " + bad[0], "user: Your previous response failed",
			"assistant: " + bad[1], "user: Your previous response failed"}},
		{"fresh xml", tract.ContextFresh, retry.FeedbackXML, []string{
			"system: Answer in JSON.", `user: <retry_context attempt="3"`, "user: " + chatQuestion}},
		{"fresh plain", tract.ContextFresh, retry.FeedbackPlain, []string{
			"system: Answer in JSON.", "user: Your previous response failed", "user: " + chatQuestion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(bad[0]), llmtest.Answer(bad[1]), llmtest.Answer(chatValid))

			res, err := tr.Chat(context.Background(), chatQuestion, tract.SystemPrompt("Answer in JSON."), tract.Task(chatTask),
				tract.Validate(retry.JSON()), tract.Feedback(tt.feedback), tract.RetryContextStrategy(tt.strategy))
			require.NoError(t, err)
			require.True(t, res.Purified)

			reqs := srv.Requests()
			require.Len(t, reqs, 3)
			var sent []string
			for i, m := range reqs[2].Messages {
				want := ""
				if i < len(tt.sent) {
					want = tt.sent[i]
				}
				if line := m.Role + ": " + m.Content; strings.HasPrefix(line, want) {
					sent = append(sent, want)
				} else {
					sent = append(sent, line)
				}
			}
			assert.Equal(t, tt.sent, sent)
			if tt.strategy == tract.ContextFresh {
				for i, r := range reqs {
					for _, m := range r.Messages {
						assert.NotContains(t, bad, m.Content, "request %d sends a failed answer", i+1)
					}
				}
				assert.Len(t, reqs[1].Messages, 3, "system, feedback, question")
				if tt.feedback == retry.FeedbackXML {
					assert.NotContains(t, reqs[1].Messages[1].Content, `<failure attempt="2">`, "attempt 2 sees only its own retry context")
				}
			}

			log := chatLog(t, tr)
			require.Equal(t, []string{"system message", "user message", "assistant message"}, chatShape(log))
			assert.Equal(t, chatValid, log[0].Text)
			assert.Equal(t, res.User, log[1].Hash, "the branch keeps the original task message")
			var answers []string
			for _, c := range everyCommit(t, tr) {
				assert.Equal(t, chatTask, c.Task(), "%s %s %q", c.Role, c.Kind, c.Text)
				if _, ok := c.AttemptRecord(); ok && c.Role == tract.RoleAssistant {
					answers = append(answers, c.Text)
				}
			}
			assert.ElementsMatch(t, []string{bad[0], bad[1], chatValid}, answers, "every attempt is a commit")
		})
	}
}

// Generate with fresh: the tip is the task message, copied after the
// feedback.
func TestGenerate_FreshRetryContextBeforeTheTaskMessage(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer(chatValid))
	ctx := context.Background()
	user, err := tr.Commit(ctx, tract.KindMessage, tract.RoleUser, chatQuestion)
	require.NoError(t, err)

	_, err = tr.Generate(ctx, tract.Validate(retry.JSON()), tract.RetryContextStrategy(tract.ContextFresh))
	require.NoError(t, err)
	second := srv.Requests()[1].Messages
	require.Len(t, second, 2)
	assert.Equal(t, chatSteering(chatJSONDiagnosis(t, chatInvalid)), second[0].Content)
	assert.Equal(t, chatQuestion, second[1].Content)
	log := chatLog(t, tr)
	require.Len(t, log, 2)
	assert.Equal(t, user, log[1].Hash)
}

// Invited by the xml instruction, an answer that declares itself blocked
// ends the turn at once; without the invitation it is an answer like any.
func TestChat_ModelDeclaresBlocked(t *testing.T) {
	t.Run("xml", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer("BLOCKED: the schema asks for a field that cannot exist"))

		res, err := tr.Chat(context.Background(), chatQuestion, tract.Task(chatTask), tract.Validate(retry.JSON()),
			tract.Feedback(retry.FeedbackXML), tract.MaxAttempts(5))
		var esc *tract.EscalationError
		require.ErrorAs(t, err, &esc)
		assert.Equal(t, tract.EscalateBlocked, esc.Reason)
		assert.Equal(t, 2, esc.Attempts)
		assert.Len(t, srv.Requests(), 2, "no attempt after the blocked answer")
		require.Len(t, esc.Failures, 2)
		assert.Equal(t, tract.FailureRecord{Attempt: 2, Timestamp: esc.Failures[1].Timestamp, Type: retry.FailureExecution,
			Error:      "blocked: the schema asks for a field that cannot exist",
			Details:    "the model declared the task blocked: the schema asks for a field that cannot exist",
			Escalation: tract.EscalateBlocked}, esc.Failures[1])
		assert.True(t, res.Purified)
		assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
	})
	t.Run("plain", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer("BLOCKED: no"), llmtest.Answer(chatValid))
		res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
		require.NoError(t, err)
		assert.Equal(t, 3, res.Attempts)
	})
}

// The analyzer's guess and fix land in the failure record; with xml, the
// next attempt sees them as a suggested fix and a learning.
func TestChat_ModelAnalyzerFillsFailureRecordAndLearnings(t *testing.T) {
	srv := llmtest.NewServer(t)
	client := newChatClient(t, srv)
	tr := newChatTract(t, client)
	srv.When("An answer to a task failed a check", llmtest.Answer(`{"root_cause_guess": "the keys are not quoted", "suggested_fix": "quote every key"}`))
	srv.Reply(llmtest.Answer(chatInvalid), llmtest.Answer(chatValid))

	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()),
		tract.Feedback(retry.FeedbackXML), tract.Analyze(tract.ModelAnalyzer(client, "")))
	require.NoError(t, err)

	r, ok := failedAttempt(t, tr, 1).FailureRecord()
	require.True(t, ok)
	assert.Equal(t, "the keys are not quoted", r.RootCauseGuess)
	assert.Equal(t, "quote every key", r.SuggestedFix)
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "attempt 1, its analysis, attempt 2")
	analysis := reqs[1].LastMessage()
	assert.Contains(t, analysis, "<answer>\n"+chatInvalid+"\n</answer>")
	assert.Contains(t, analysis, chatJSONDiagnosis(t, chatInvalid))
	retryCtx := reqs[2].LastMessage()
	assert.Contains(t, retryCtx, "<suggested_fix>quote every key</suggested_fix>")
	assert.Contains(t, retryCtx, "<accumulated_learnings>\n    - the keys are not quoted\n  </accumulated_learnings>")
}

// A validator's own suggestion wins over the analyzer's; an analyzer that
// fails is recorded and the turn goes on.
func TestChat_AnalyzerErrorsAndValidatorFixes(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("Notes"), llmtest.Answer("Notes again"), llmtest.Answer("# Notes"))
	v := retry.CheckerFunc("title", func(_ context.Context, answer string) (retry.Verdict, error) {
		if !strings.HasPrefix(answer, "# ") {
			return retry.Verdict{Diagnosis: "no title", SuggestedFix: "start with '# '"}, nil
		}
		return retry.Verdict{OK: true}, nil
	})
	calls := 0
	analyzer := func(_ context.Context, answer string, f tract.FailureRecord) (retry.Analysis, error) {
		calls++
		if f.Attempt == 2 {
			return retry.Analysis{}, errors.New("the analyst is out")
		}
		return retry.Analysis{RootCauseGuess: "no heading", SuggestedFix: "add a heading"}, nil
	}
	_, err := tr.Chat(context.Background(), "Write notes.", tract.Validate(v), tract.Analyze(analyzer))
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	r1, _ := failedAttempt(t, tr, 1).FailureRecord()
	assert.Equal(t, "no heading", r1.RootCauseGuess)
	assert.Equal(t, "start with '# '", r1.SuggestedFix)
	r2, _ := failedAttempt(t, tr, 2).FailureRecord()
	assert.Equal(t, "the analyst is out", r2.AnalysisError)
	assert.Empty(t, r2.RootCauseGuess)
}

func TestChat_UnknownFeedbackOrStrategyRefusedWithNothingWritten(t *testing.T) {
	tests := []struct {
		opt  tract.ChatOption
		want string
	}{
		{tract.Feedback("yaml"), `chat: unknown feedback format "yaml": use plain or xml`},
		{tract.RetryContextStrategy("stale"), `chat: unknown retry context strategy "stale": use conversation or fresh`},
	}
	for _, tt := range tests {
		tr, srv := newChatServerTract(t)
		_, err := tr.Chat(context.Background(), chatQuestion, tt.opt)
		assert.EqualError(t, err, tt.want)
		assert.Empty(t, everyCommit(t, tr))
		assert.Empty(t, srv.Requests())
	}
}

// Every <retry_context> a validated turn sends is well-formed XML, with
// hostile text in each diagnosis, suggested fix, root-cause guess and the
// user's instruction, over several failures and two rounds.
func TestChat_XMLFeedbackIsWellFormed(t *testing.T) {
	const hostile = "line 1 </error_summary> & <b> ]]> \"q\" 'q'\nline 2 <![CDATA[ &amp; ]]> \x1b[31m"
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"), llmtest.Answer("no 3"), llmtest.Answer("# yes"))
	n := 0
	v := retry.CheckerFunc("hostile", func(_ context.Context, answer string) (retry.Verdict, error) {
		if strings.HasPrefix(answer, "# ") {
			return retry.Verdict{OK: true}, nil
		}
		n++
		return retry.Verdict{Diagnosis: fmt.Sprintf("failure %d: %s", n, hostile), SuggestedFix: "fix " + hostile}, nil
	})
	analyzer := func(_ context.Context, _ string, f tract.FailureRecord) (retry.Analysis, error) {
		return retry.Analysis{RootCauseGuess: fmt.Sprintf("cause %d <%s>", f.Attempt, hostile)}, nil
	}
	var seen []tract.Escalation
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(v), tract.Feedback(retry.FeedbackXML),
		tract.Analyze(analyzer), tract.MaxAttempts(2),
		answering(&seen, tract.Resolution{Action: tract.ResolveFix, Instruction: "do <this> & " + hostile}))
	require.NoError(t, err)
	require.Len(t, seen, 1)

	var blocks []string
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if strings.HasPrefix(m.Content, "<retry_context") {
				blocks = append(blocks, m.Content)
			}
		}
	}
	require.GreaterOrEqual(t, len(blocks), 3, "attempts 2, 3 and 4 follow a retry context")
	for _, b := range blocks {
		d := xml.NewDecoder(strings.NewReader(b))
		depth := 0
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "not well-formed XML:\n%s", b)
			switch tok.(type) {
			case xml.StartElement:
				depth++
			case xml.EndElement:
				depth--
			}
		}
		require.Zero(t, depth)
		var rc struct {
			Failures []struct {
				Summary string `xml:"error_summary"`
				Fix     string `xml:"suggested_fix"`
			} `xml:"previous_failures>failure"`
			Instruction string `xml:"instruction"`
		}
		require.NoError(t, xml.Unmarshal([]byte(b), &rc))
		require.NotEmpty(t, rc.Failures)
		assert.Equal(t, "failure 1: line 1 </error_summary> & <b> ]]> \"q\" 'q'", rc.Failures[0].Summary)
		assert.Contains(t, rc.Instruction, `"BLOCKED: <reason>"`)
	}
	assert.Contains(t, blocks[len(blocks)-1], "<user_intervention>")
}
