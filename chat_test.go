package tract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/loopback"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// chatModel is the model name every test client asks for.
const chatModel = "test-model"

// chatClock returns a goroutine-safe clock that starts at a fixed instant
// and advances one second per call, so commit hashes are reproducible.
func chatClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

// chatNoSleep makes the client's transport retries instant.
func chatNoSleep(context.Context, time.Duration) error { return nil }

// newChatClient returns an OpenAI client for srv whose retries do not wait.
func newChatClient(t testing.TB, srv *llmtest.Server, opts ...llm.Option) *llm.OpenAI {
	t.Helper()
	base := []llm.Option{llm.WithBaseURL(srv.URL()), llm.WithModel(chatModel), llm.WithSleep(chatNoSleep)}
	c, err := llm.NewOpenAI(append(base, opts...)...)
	require.NoError(t, err)
	return c
}

// newChatTract opens a fresh repository using client (nil: none) and checks
// its integrity when the test ends.
func newChatTract(t testing.TB, client llm.Client) *tract.Tract {
	t.Helper()
	// Texts are kept uncompressed: tests here search the raw file for
	// API keys, which a compressed text would hide.
	opts := []tract.Option{tract.WithNoSync(), tract.WithClock(chatClock()), tract.WithUncompressedTexts()}
	if client != nil {
		opts = append(opts, tract.WithClient(client))
	}
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		rep, err := tr.Fsck(context.Background())
		if assert.NoError(t, err) {
			assert.True(t, rep.OK(), "fsck problems: %v", rep.Problems)
		}
		assert.NoError(t, tr.Close())
	})
	return tr
}

// newChatServerTract starts a test server and opens a repository whose
// default client talks to it.
func newChatServerTract(t testing.TB, opts ...llm.Option) (*tract.Tract, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t)
	return newChatTract(t, newChatClient(t, srv, opts...)), srv
}

// chatShape describes commits as "role kind", oldest first (Log and orphan
// chains list them newest first).
func chatShape(cs []*tract.CommitInfo) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[len(cs)-1-i] = string(c.Role) + " " + string(c.Kind)
	}
	return out
}

// chatLog returns the first-parent history from HEAD, newest first.
func chatLog(t testing.TB, tr *tract.Tract) []*tract.CommitInfo {
	t.Helper()
	log, err := tr.Log(context.Background())
	require.NoError(t, err)
	return log
}

// chatLogAll returns the whole repository.
func chatLogAll(t testing.TB, tr *tract.Tract) *tract.History {
	t.Helper()
	all, err := tr.LogAll(context.Background())
	require.NoError(t, err)
	return all
}

// chatMeta decodes a commit's metadata.
func chatMeta(t testing.TB, c *tract.CommitInfo) map[string]any {
	t.Helper()
	m := map[string]any{}
	if len(c.Meta) > 0 {
		require.NoError(t, json.Unmarshal(c.Meta, &m))
	}
	return m
}

// chatProvenance is the provenance metadata as it reads back from JSON.
func chatProvenance(attempts int, diagnoses ...string) map[string]any {
	ds := make([]any, len(diagnoses))
	for i, d := range diagnoses {
		ds[i] = d
	}
	return map[string]any{"attempts": float64(attempts), "diagnoses": ds}
}

// provenanceCore keeps the attempts and diagnoses of provenance metadata
// read back from JSON, for comparing with chatProvenance.
func provenanceCore(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	return map[string]any{"attempts": m["attempts"], "diagnoses": m["diagnoses"]}
}

// chatJSONDiagnosis is the json validator's diagnosis of answer.
func chatJSONDiagnosis(t testing.TB, answer string) string {
	t.Helper()
	ok, d, err := retry.JSON().Validate(context.Background(), answer)
	require.NoError(t, err)
	require.False(t, ok, "%q is valid JSON", answer)
	return d
}

// chatSteering is the default steering text for a diagnosis: DefaultRetryPrompt
// spelled out, so that a change to the contract fails the tests.
func chatSteering(diagnosis string) string {
	return "Your previous response failed validation: " + diagnosis + "\nPlease try again, addressing the issue above."
}

// chatUsageMeta is a usage as it reads back from commit metadata.
func chatUsageMeta(u llm.Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": float64(u.PromptTokens), "completion_tokens": float64(u.CompletionTokens),
		"total_tokens": float64(u.TotalTokens),
	}
}

const (
	chatQuestion = "Give me a JSON object with a name."
	chatInvalid  = "Sure! {name: Ada}"
	chatValid    = `{"name": "Ada"}`
)

func TestChat_PurifyAfterRetry(t *testing.T) {
	for _, system := range []string{"", "Answer in JSON only."} {
		name := "no system prompt"
		if system != "" {
			name = "system prompt"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(chatInvalid))
			srv.When("failed validation", llmtest.Answer(chatValid))
			diag := chatJSONDiagnosis(t, chatInvalid)

			opts := []tract.ChatOption{tract.Validate(retry.JSON())}
			if system != "" {
				opts = append(opts, tract.SystemPrompt(system))
			}
			res, err := tr.Chat(ctx, chatQuestion, opts...)
			require.NoError(t, err)

			assert.Equal(t, chatValid, res.Text)
			assert.Equal(t, 2, res.Attempts)
			assert.Equal(t, []string{diag}, res.Diagnoses)
			assert.True(t, res.Purified)
			assert.Equal(t, chatModel, res.Model)

			// The branch is the clean chain.
			log := chatLog(t, tr)
			want := []string{"user message", "assistant message"}
			if system != "" {
				want = append([]string{"system message"}, want...)
			}
			require.Equal(t, want, chatShape(log))
			clean, user := log[0], log[1]
			assert.Equal(t, chatValid, clean.Text)
			assert.Equal(t, chatQuestion, user.Text)
			assert.Equal(t, res.Commit, clean.Hash)
			assert.Equal(t, res.User, user.Hash)
			assert.Equal(t, []tract.Hash{user.Hash}, clean.Parents)
			cleanMeta := chatMeta(t, clean)
			assert.Equal(t, chatProvenance(2, diag), provenanceCore(cleanMeta["provenance"]))
			prov, ok := clean.Provenance()
			require.True(t, ok)
			assert.Equal(t, tract.Provenance{Attempts: 2, Diagnoses: []string{diag}, Restore: user.Hash, Usage: res.Usage, Model: chatModel}, prov,
				"typed: restore point, usage summed over both attempts, model")
			rec, ok := clean.AttemptRecord()
			assert.False(t, ok, "the clean copy is not an attempt: %+v", rec)
			failed := chatLogAll(t, tr).Orphans[0].Commits[2]
			rec, ok = failed.AttemptRecord()
			require.True(t, ok)
			assert.Equal(t, 1, rec.Attempt)
			require.NotNil(t, rec.Valid)
			assert.False(t, *rec.Valid)
			assert.Equal(t, diag, rec.Diagnosis)
			assert.Equal(t, chatModel, rec.Model)
			_, ok = failed.Provenance()
			assert.False(t, ok, "a rejected attempt has no provenance")
			assert.Equal(t, chatModel, cleanMeta["model"])
			assert.Equal(t, true, cleanMeta["valid"])
			if system != "" {
				assert.Equal(t, system, log[2].Text)
			}

			// The failed attempt and the steering are one orphan chain.
			all := chatLogAll(t, tr)
			assert.Len(t, all.Commits, len(want))
			require.Len(t, all.Orphans, 1)
			orphan := all.Orphans[0]
			assert.Equal(t, user.Hash, orphan.Fork)
			assert.Equal(t, "purify", orphan.Action)
			assert.Equal(t, "purify: hid 1 failed attempt", orphan.Reason)
			require.Equal(t, []string{"assistant message", "user steering", "assistant message"}, chatShape(orphan.Commits))
			accepted, steer, failed := orphan.Commits[0], orphan.Commits[1], orphan.Commits[2]

			assert.Equal(t, chatInvalid, failed.Text)
			assert.Equal(t, []tract.Hash{user.Hash}, failed.Parents)
			assert.Equal(t, diag, failed.Diagnosis())
			failedMeta := chatMeta(t, failed)
			assert.Equal(t, float64(1), failedMeta["attempt"])
			assert.Equal(t, false, failedMeta["valid"])
			assert.Equal(t, chatModel, failedMeta["model"])
			assert.NotNil(t, failedMeta["usage"])

			assert.Equal(t, tract.KindSteering, steer.Kind)
			assert.Equal(t, tract.RoleUser, steer.Role)
			assert.Equal(t, chatSteering(diag), steer.Text)
			assert.Equal(t, diag, steer.Diagnosis())
			assert.Equal(t, []tract.Hash{failed.Hash}, steer.Parents)

			assert.Equal(t, chatValid, accepted.Text)
			assert.Equal(t, []tract.Hash{steer.Hash}, accepted.Parents)
			acceptedMeta := chatMeta(t, accepted)
			assert.Equal(t, float64(2), acceptedMeta["attempt"])
			assert.Equal(t, true, acceptedMeta["valid"])

			// ORIG_HEAD is the tip purify moved away from.
			orig, err := tr.Show(ctx, "ORIG_HEAD")
			require.NoError(t, err)
			assert.Equal(t, accepted.Hash, orig.Hash)

			// The retry saw the failed answer and the steering, as a user message.
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			second := reqs[1].Messages
			require.GreaterOrEqual(t, len(second), 3)
			assert.Equal(t, llm.Message{Role: "assistant", Content: chatInvalid}, second[len(second)-2])
			assert.Equal(t, llm.Message{Role: "user", Content: chatSteering(diag)}, second[len(second)-1])

			// What the next turn sends has no trace of the retry.
			msgs, err := tr.Compile(ctx)
			require.NoError(t, err)
			wantMsgs := []tract.Message{{Role: "user", Content: chatQuestion}, {Role: "assistant", Content: chatValid}}
			if system != "" {
				wantMsgs = append([]tract.Message{{Role: "system", Content: system}}, wantMsgs...)
			}
			assert.Equal(t, wantMsgs, msgs)
			assert.Equal(t, wantMsgs[:len(wantMsgs)-1], reqs[0].Messages)
		})
	}
}

func TestChat_FirstTrySuccess(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatValid))

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 1, res.Attempts)
	assert.Empty(t, res.Diagnoses)
	assert.NotNil(t, res.Diagnoses, "diagnoses marshal as [] in --json output")
	assert.False(t, res.Purified)

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Equal(t, res.User, log[1].Hash)
	meta := chatMeta(t, log[0])
	assert.Equal(t, float64(1), meta["attempt"])
	assert.Equal(t, true, meta["valid"])
	assert.Equal(t, chatProvenance(1), provenanceCore(meta["provenance"]), "a first-try success records its provenance too")
	prov, ok := log[0].Provenance()
	require.True(t, ok)
	assert.Equal(t, tract.Provenance{Attempts: 1, Diagnoses: []string{}, Restore: res.User, Usage: res.Usage, Model: chatModel}, prov)
	assert.NotContains(t, meta, "diagnosis")

	all := chatLogAll(t, tr)
	assert.Empty(t, all.Orphans)
	assert.Len(t, all.Commits, 2)
	_, err = tr.Show(ctx, "ORIG_HEAD")
	assert.Error(t, err, "no purify, no ORIG_HEAD")
	assert.Len(t, srv.Requests(), 1)
}

// Usage is summed over every attempt, as the server reports it.
func TestChat_TwoFailuresThenPass(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	u1 := llm.Usage{PromptTokens: 10, CompletionTokens: 1, TotalTokens: 11}
	u2 := llm.Usage{PromptTokens: 200, CompletionTokens: 20, TotalTokens: 220}
	u3 := llm.Usage{PromptTokens: 3000, CompletionTokens: 300, TotalTokens: 3300}
	srv.Reply(
		llmtest.Reply{Content: "first: nope", Usage: &u1},
		llmtest.Reply{Content: "second: nope", Usage: &u2},
		llmtest.Reply{Content: chatValid, Usage: &u3},
	)
	d1, d2 := chatJSONDiagnosis(t, "first: nope"), chatJSONDiagnosis(t, "second: nope")

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, []string{d1, d2}, res.Diagnoses)
	assert.Equal(t, u1.Add(u2).Add(u3), res.Usage)
	assert.True(t, res.Purified)

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	meta := chatMeta(t, log[0])
	assert.Equal(t, chatProvenance(3, d1, d2), provenanceCore(meta["provenance"]))
	assert.Equal(t, chatUsageMeta(u3), meta["usage"], "the clean commit records its own answer's usage")

	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	orphan := all.Orphans[0]
	assert.Equal(t, log[1].Hash, orphan.Fork)
	assert.Equal(t, "purify: hid 2 failed attempts", orphan.Reason)
	require.Equal(t, []string{"assistant message", "user steering", "assistant message", "user steering", "assistant message"},
		chatShape(orphan.Commits))
	assert.Equal(t, chatSteering(d2), orphan.Commits[1].Text)
	assert.Equal(t, float64(2), orphan.Commits[1].MetaValue("attempt"))
	assert.Equal(t, chatSteering(d1), orphan.Commits[3].Text)
	assert.Equal(t, chatUsageMeta(u1), orphan.Commits[4].MetaValue("usage"))
	assert.Equal(t, chatUsageMeta(u2), orphan.Commits[2].MetaValue("usage"))

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[2].Messages, 5, "user, attempt 1, steering 1, attempt 2, steering 2")
}

func TestChat_NoPurifyKeepsAttemptsOnBranch(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("failed validation", llmtest.Answer(chatValid))
	diag := chatJSONDiagnosis(t, chatInvalid)

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.Purify(false))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 2, res.Attempts)
	assert.False(t, res.Purified)

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message", "user steering", "assistant message"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Equal(t, chatValid, log[0].Text)
	assert.Equal(t, chatProvenance(2, diag), provenanceCore(log[0].MetaValue("provenance")))
	assert.Equal(t, chatSteering(diag), log[1].Text)
	assert.Equal(t, chatInvalid, log[2].Text)
	assert.Empty(t, chatLogAll(t, tr).Orphans)

	// The steering stays in the context the next turn sends.
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Len(t, msgs, 4)
}

func TestChat_ExhaustedWithPurify(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	u := llm.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}
	srv.Otherwise(llmtest.Reply{Content: "never JSON", Usage: &u})
	diag := chatJSONDiagnosis(t, "never JSON")

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(3))
	require.Error(t, err)
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 3, ex.Attempts)
	assert.Equal(t, diag, ex.LastDiagnosis)
	assert.Equal(t, "never JSON", ex.LastResult, "the last answer's text")
	assert.Equal(t, []string{diag, diag, diag}, ex.History)
	assert.Contains(t, err.Error(), "all 3 attempts failed")

	require.NotNil(t, res)
	assert.Empty(t, res.Text)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, []string{diag, diag, diag}, res.Diagnoses)
	assert.Equal(t, u.Add(u).Add(u), res.Usage)
	assert.True(t, res.Purified)

	// The branch ends user + error.
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	errCommit := log[0]
	assert.Equal(t, tract.KindError, errCommit.Kind)
	assert.Equal(t, res.Commit, errCommit.Hash)
	assert.Equal(t, res.User, log[1].Hash)
	assert.Equal(t, "validation failed after 3 attempts; last diagnosis: "+diag, errCommit.Text)
	assert.Equal(t, chatProvenance(3, diag, diag, diag), provenanceCore(errCommit.MetaValue("provenance")))
	assert.Equal(t, chatUsageMeta(u.Add(u).Add(u)), errCommit.MetaValue("usage"))

	// The attempts are orphans that log --all shows.
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	orphan := all.Orphans[0]
	assert.Equal(t, log[1].Hash, orphan.Fork)
	assert.Equal(t, "purify", orphan.Action)
	assert.Equal(t, "purify: hid 3 failed attempts", orphan.Reason)
	assert.Equal(t, []string{"assistant message", "user steering", "assistant message", "user steering", "assistant message"},
		chatShape(orphan.Commits))
	orig, err := tr.Show(ctx, "ORIG_HEAD")
	require.NoError(t, err)
	assert.Equal(t, orphan.Commits[0].Hash, orig.Hash)

	// The error commit is never sent to a model.
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []tract.Message{{Role: "user", Content: chatQuestion}}, msgs)
	assert.Len(t, srv.Requests(), 3)
}

func TestChat_ExhaustedWithoutPurify(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Answer("never JSON"))

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(3), tract.Purify(false))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 3, ex.Attempts)
	require.NotNil(t, res)
	assert.Len(t, res.Diagnoses, 3)
	assert.False(t, res.Purified)
	assert.True(t, res.Commit.IsZero(), "no error commit was made")

	log := chatLog(t, tr)
	assert.Equal(t, []string{"user message", "assistant message", "user steering", "assistant message", "user steering", "assistant message"},
		chatShape(log))
	assert.Empty(t, chatLogAll(t, tr).Orphans)
}

func TestChat_MaxAttemptsOneMakesOneAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("nope"))

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(1))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, 1, ex.Attempts)
	assert.Contains(t, err.Error(), "1 attempt failed")
	assert.Equal(t, "nope", ex.LastResult)
	assert.Equal(t, 1, res.Attempts)
	assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, []string{"assistant message"}, chatShape(all.Orphans[0].Commits), "no steering after the last attempt")
	assert.Equal(t, "purify: hid 1 failed attempt", all.Orphans[0].Reason)
}

func TestChat_NegativeMaxAttemptsFailsBeforeCommitting(t *testing.T) {
	tr, _ := newChatServerTract(t)
	_, err := tr.Chat(context.Background(), chatQuestion, tract.MaxAttempts(-1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max attempts")
	assert.Empty(t, chatLog(t, tr))
}

func TestChat_InvalidTextFailsBeforeModelCall(t *testing.T) {
	tr, srv := newChatServerTract(t)
	_, err := tr.Chat(context.Background(), "")
	assert.ErrorIs(t, err, tract.ErrInvalidText)
	assert.Empty(t, srv.Requests())
	assert.Empty(t, chatLog(t, tr))
}

func TestChat_UnreachableServerCommitsErrorCommit(t *testing.T) {
	srv := llmtest.New()
	srv.Close() // nothing listens at its address any more
	tr := newChatTract(t, newChatClient(t, srv, llm.WithMaxRetries(1)))

	res, err := tr.Chat(context.Background(), chatQuestion)
	var te *llm.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 2, te.Attempts, "a refused connection is retried")
	require.NotNil(t, res)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
}

func TestChat_ServerErrorStormCommitsErrorCommit(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t, llm.WithMaxRetries(2))
	srv.Otherwise(llmtest.Error(500, "the server is on fire"))

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.Error(t, err)
	var se *llm.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 500, se.StatusCode)
	assert.Equal(t, 3, se.Attempts)
	var ex *retry.ExhaustedError
	assert.False(t, errors.As(err, &ex), "a transport failure is not a validation failure")
	assert.Len(t, srv.Requests(), 3, "one request and two transport retries, no validation retry")

	require.NotNil(t, res)
	assert.Equal(t, 0, res.Attempts)
	assert.Empty(t, res.Diagnoses)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Equal(t, res.User, log[1].Hash)
	assert.True(t, strings.HasPrefix(log[0].Text, "model call failed: "), log[0].Text)
	assert.Contains(t, log[0].Text, "the server is on fire")
	assert.Equal(t, float64(1), log[0].MetaValue("attempt"))
	assert.Equal(t, "openai", log[0].MetaValue(tract.MetaProvider), "the error commit names the kind of server")
	assert.Equal(t, chatModel, log[0].MetaValue(tract.MetaModel), "the error commit names the model asked")
	assert.Empty(t, chatLogAll(t, tr).Orphans)

	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []tract.Message{{Role: "user", Content: chatQuestion}}, msgs)
}

// A model failure on a retry, with purify, also leaves user + error and
// hides the attempts made so far.
func TestChat_ServerErrorAfterFailedAttemptPurifies(t *testing.T) {
	tr, srv := newChatServerTract(t, llm.WithMaxRetries(0))
	srv.Reply(llmtest.Answer(chatInvalid), llmtest.Error(503, "overloaded"))
	diag := chatJSONDiagnosis(t, chatInvalid)

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
	var se *llm.ServerError
	require.ErrorAs(t, err, &se)
	require.NotNil(t, res)
	assert.Equal(t, 1, res.Attempts)
	assert.Equal(t, []string{diag}, res.Diagnoses)
	assert.True(t, res.Purified, "the failed attempt was moved off the branch")

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Equal(t, float64(2), log[0].MetaValue("attempt"))
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, log[1].Hash, all.Orphans[0].Fork)
	assert.Equal(t, []string{"assistant message", "user steering"}, chatShape(all.Orphans[0].Commits))
	assert.Equal(t, "purify", all.Orphans[0].Action)
}

func TestChat_UnauthorizedNotRetriedAndKeyRedacted(t *testing.T) {
	const key = "sk-secret-123"
	ctx := context.Background()
	tr, srv := newChatServerTract(t, llm.WithAPIKey(key))
	srv.Reply(llmtest.Unauthorized()) // echoes the key it got in its message

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	require.Error(t, err)
	var ae *llm.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 401, ae.StatusCode)
	assert.Len(t, srv.Requests(), 1, "a 401 is not retried")
	assert.NotContains(t, err.Error(), key)
	assert.Contains(t, err.Error(), "[REDACTED]", "the server did echo the key")

	require.NotNil(t, res)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)

	// The key is in no commit, and nowhere in the file.
	all := chatLogAll(t, tr)
	for _, c := range all.Commits {
		assert.NotContains(t, c.Text, key, "commit %s", c.Hash)
		assert.NotContains(t, string(c.Meta), key, "commit %s", c.Hash)
	}
	for _, o := range all.Orphans {
		for _, c := range o.Commits {
			assert.NotContains(t, c.Text+string(c.Meta), key, "orphan %s", c.Hash)
		}
	}
	raw, err := os.ReadFile(tr.Path())
	require.NoError(t, err)
	assert.False(t, bytes.Contains(raw, []byte(key)), "the API key is stored in the repository file")
}

// A key written into the base URL, or echoed by a server, percent-encoded
// reaches neither the error nor any commit nor the file: not through the
// error commit of a model failure, nor through the validator error a
// failing judge leaves on the answer.
func TestChat_EncodedKeyRedactedFromErrorCommits(t *testing.T) {
	const key = "sk-Ab/cd+ef=gh:ij@kl~mn_op"
	forms := []string{key, url.QueryEscape(key), url.PathEscape(key)}
	echo := llmtest.Error(http.StatusNotFound, "no deployment at /v1/chat/completions?api-key="+url.QueryEscape(key)+
		" nor /keys/"+url.PathEscape(key))
	tests := []struct {
		name string
		// chat runs the turn with a client configured with the key.
		chat func(t *testing.T, keyed ...llm.Option) (*tract.Tract, error)
	}{
		{"transport error, key in the base URL's query", func(t *testing.T, keyed ...llm.Option) (*tract.Tract, error) {
			addr, release, err := loopback.Refused()
			require.NoError(t, err)
			defer release()
			c, err := llm.NewOpenAI(append(keyed, llm.WithModel(chatModel), llm.WithMaxRetries(0),
				llm.WithBaseURL("http://"+addr+"/v1?api-key="+url.QueryEscape(key)))...)
			require.NoError(t, err)
			tr := newChatTract(t, c)
			_, err = tr.Chat(context.Background(), chatQuestion)
			return tr, err
		}},
		{"server error echoing the key", func(t *testing.T, keyed ...llm.Option) (*tract.Tract, error) {
			tr, srv := newChatServerTract(t, keyed...)
			srv.Reply(echo)
			_, err := tr.Chat(context.Background(), chatQuestion)
			return tr, err
		}},
		{"judge's server error echoing the key", func(t *testing.T, keyed ...llm.Option) (*tract.Tract, error) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(chatValid))
			judgeSrv := llmtest.NewServer(t)
			judgeSrv.Reply(echo)
			judge := retry.Judge("is JSON", tract.Judge(newChatClient(t, judgeSrv, keyed...), ""))
			_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(judge))
			return tr, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := tt.chat(t, llm.WithAPIKey(key))

			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Contains(t, err.Error(), "[REDACTED]")
			all := chatLogAll(t, tr)
			stored := err.Error()
			for _, c := range all.Commits {
				stored += "\n" + c.Text + "\n" + string(c.Meta)
			}
			assert.Contains(t, stored, "[REDACTED]", "the error is recorded")
			raw, rerr := os.ReadFile(tr.Path())
			require.NoError(t, rerr)
			for _, f := range forms {
				assert.NotContains(t, stored, f)
				assert.False(t, bytes.Contains(raw, []byte(f)), "%q is in the repository file", f)
			}
		})
	}
}

func TestChat_RateLimitedThenAnswers(t *testing.T) {
	var (
		mu     sync.Mutex
		waited []time.Duration
	)
	sleep := func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waited = append(waited, d)
		return nil
	}
	tr, srv := newChatServerTract(t, llm.WithSleep(sleep))
	srv.Reply(llmtest.RateLimited(3*time.Second), llmtest.Answer(chatValid))

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.Equal(t, 1, res.Attempts, "a transport retry is not a validation attempt")
	assert.Len(t, srv.Requests(), 2)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []time.Duration{3 * time.Second}, waited)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
}

func TestChat_HTMLAnswerIsBadResponse(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.HTML())

	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
	var be *llm.BadResponseError
	require.ErrorAs(t, err, &be)
	assert.Len(t, srv.Requests(), 1, "a bad response is not retried")
	require.NotNil(t, res)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Contains(t, log[0].Text, "bad response")
}

func TestChat_TruncatedAnswerIsBadResponse(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Truncated(chatValid))

	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()))
	var be *llm.BadResponseError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []string{"user message", "assistant error"}, chatShape(chatLog(t, tr)))
}

// An empty answer is rejected even without validators, with a diagnosis of
// its own that takes precedence over the validators'.
func TestChat_EmptyModelAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answer     string
		validators []retry.Validator
	}{
		{"no validators", "", nil},
		{"white space", " \n\t", nil},
		{"json validator", "", []retry.Validator{retry.JSON()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(tc.answer))
			srv.When("failed validation", llmtest.Answer(chatValid))

			res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(tc.validators...))
			require.NoError(t, err)
			assert.Equal(t, chatValid, res.Text)
			assert.Equal(t, 2, res.Attempts)
			assert.Equal(t, []string{"the answer is empty"}, res.Diagnoses)
			assert.Equal(t, chatSteering("the answer is empty"), srv.Requests()[1].LastMessage())

			all := chatLogAll(t, tr)
			require.Len(t, all.Orphans, 1)
			failed := all.Orphans[0].Commits[len(all.Orphans[0].Commits)-1]
			assert.Equal(t, "the answer is empty", failed.Diagnosis())
			assert.Equal(t, "(empty answer)", failed.Text, "commit text must not be empty")
		})
	}
}

func TestChat_CancelDuringAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Reply{Content: chatValid, Delay: 2 * time.Second})

	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	elapsed := time.Since(start)

	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, elapsed, time.Second, "Chat must return promptly after cancellation")
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message"}, chatShape(log))
	assert.Equal(t, chatQuestion, log[0].Text)
	assert.Empty(t, chatLogAll(t, tr).Orphans)
}

// Cancelled during the retry, the branch keeps the commits made so far:
// every one complete, the last one the steering message.
func TestChat_CancelDuringRetryLeavesConsistentBranch(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("failed validation", llmtest.Reply{Content: chatValid, Delay: 2 * time.Second})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()),
		tract.OnAttempt(func(tract.Attempt) { time.AfterFunc(100*time.Millisecond, cancel) }))
	require.ErrorIs(t, err, context.Canceled)
	// Purify takes the failed attempt and its steering off the branch, so the
	// next turn does not answer the steering message; they stay as orphans.
	assert.Equal(t, []string{"user message"}, chatShape(chatLog(t, tr)))
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "purify: hid 1 failed attempt (interrupted)", all.Orphans[0].Reason)
	assert.Len(t, all.Orphans[0].Commits, 2)
}

func TestChat_ProvenanceNote(t *testing.T) {
	t.Run("after retry", func(t *testing.T) {
		ctx := context.Background()
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(chatInvalid))
		srv.When("failed validation", llmtest.Answer(chatValid))
		diag := chatJSONDiagnosis(t, chatInvalid)

		res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()), tract.ProvenanceNote())
		require.NoError(t, err)

		log := chatLog(t, tr)
		require.Equal(t, []string{"user message", "assistant message", "system note"}, chatShape(log))
		note := log[0]
		assert.Equal(t, "resolved after 2 attempts: "+diag, note.Text)
		assert.Equal(t, chatProvenance(2, diag), provenanceCore(note.MetaValue("provenance")))
		assert.Equal(t, res.Commit, log[1].Hash, "the result names the answer, not the note")
		assert.Equal(t, []tract.Hash{res.Commit}, note.Parents)

		msgs, err := tr.Compile(ctx)
		require.NoError(t, err)
		assert.Equal(t, []tract.Message{{Role: "user", Content: chatQuestion}, {Role: "assistant", Content: chatValid}}, msgs)
		withNotes, err := tr.Compile(ctx, tract.IncludeNotes())
		require.NoError(t, err)
		assert.Len(t, withNotes, 3)
	})
	t.Run("first try", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(chatValid))
		_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.ProvenanceNote())
		require.NoError(t, err)
		log := chatLog(t, tr)
		require.Equal(t, []string{"user message", "assistant message", "system note"}, chatShape(log))
		assert.Equal(t, "passed validation on the first attempt (json)", log[0].Text)
		assert.Equal(t, chatProvenance(1), provenanceCore(log[0].MetaValue("provenance")))
	})
}

// Without validators the note says the answer was accepted, not that it
// passed a validation (it once named an empty validator list).
func TestChat_ProvenanceNoteWithoutValidators(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("hi"))
	_, err := tr.Chat(context.Background(), "hello", tract.ProvenanceNote())
	require.NoError(t, err)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message", "system note"}, chatShape(log))
	assert.Equal(t, "accepted on the first attempt", log[0].Text)
}

func TestChat_RetryPromptTemplate(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("was rejected", llmtest.Answer(chatValid))
	diag := chatJSONDiagnosis(t, chatInvalid)

	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(4),
		tract.RetryPrompt("Attempt {attempt} of {max_attempts} was rejected: {diagnosis}. {attempt} again?"))
	require.NoError(t, err)
	want := "Attempt 1 of 4 was rejected: " + diag + ". 1 again?"
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, llm.Message{Role: "user", Content: want}, reqs[1].Messages[len(reqs[1].Messages)-1])
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	steer := all.Orphans[0].Commits[1]
	assert.Equal(t, tract.KindSteering, steer.Kind)
	assert.Equal(t, want, steer.Text)
}

func TestChat_StreamingDeltas(t *testing.T) {
	const answer = `{"greeting": "hello brave new world"}`
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(answer))

	var pieces []string
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()),
		tract.OnDelta(func(d string) { pieces = append(pieces, d) }))
	require.NoError(t, err)
	assert.Equal(t, answer, res.Text)
	assert.Greater(t, len(pieces), 1, "the answer arrived in pieces")
	assert.Equal(t, answer, strings.Join(pieces, ""))
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].Stream)
	assert.NotZero(t, res.Usage.TotalTokens, "a streamed answer reports usage too")
}

// Every attempt streams, the rejected ones included.
func TestChat_StreamingDeltasOfEveryAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("not json at all"))
	srv.When("failed validation", llmtest.Answer(`{"a": 1, "b": 2}`))

	var b strings.Builder
	_, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()),
		tract.OnDelta(func(d string) { b.WriteString(d) }))
	require.NoError(t, err)
	assert.Equal(t, `not json at all{"a": 1, "b": 2}`, b.String())
}

func TestChat_ModelAndTemperature(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("hi"))

	res, err := tr.Chat(context.Background(), "hello", tract.Model("other-model"), tract.Temperature(0.25))
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "other-model", reqs[0].Model)
	require.NotNil(t, reqs[0].Temperature)
	assert.InDelta(t, 0.25, *reqs[0].Temperature, 1e-9)
	assert.Equal(t, "other-model", res.Model)
	assert.Equal(t, "other-model", chatLog(t, tr)[0].MetaValue("model"))
}

func TestChat_OnAttemptReportsEachAttempt(t *testing.T) {
	tr, srv := newChatServerTract(t)
	u1 := llm.Usage{PromptTokens: 5, CompletionTokens: 5, TotalTokens: 10}
	u2 := llm.Usage{PromptTokens: 8, CompletionTokens: 2, TotalTokens: 10}
	srv.Reply(llmtest.Reply{Content: chatInvalid, Usage: &u1})
	srv.When("failed validation", llmtest.Reply{Content: chatValid, Usage: &u2})
	diag := chatJSONDiagnosis(t, chatInvalid)

	var got []tract.Attempt
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()),
		tract.OnAttempt(func(a tract.Attempt) { got = append(got, a) }))
	require.NoError(t, err)

	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	require.Len(t, all.Orphans[0].Commits, 3)
	accepted, failed := all.Orphans[0].Commits[0], all.Orphans[0].Commits[2]
	want := []tract.Attempt{
		{Number: 1, Max: 3, OK: false, Text: chatInvalid, Diagnosis: diag, Commit: failed.Hash, Usage: u1},
		{Number: 2, Max: 3, OK: true, Text: chatValid, Commit: accepted.Hash, Usage: u2},
	}
	assert.Equal(t, want, got)
	assert.Equal(t, want, res.History, "the result lists the same attempts")
}

// On exhaustion the result still lists every attempt: the last answer is
// the last entry's text.
func TestChat_HistoryOnExhaustion(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Answer(chatInvalid))
	res, err := tr.Chat(context.Background(), chatQuestion, tract.Validate(retry.JSON()), tract.MaxAttempts(2))
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	last, ok := retry.LastResultOf[string](err)
	require.True(t, ok, "Chat's exhausted error carries the last answer as a string")
	assert.Equal(t, chatInvalid, last)
	_, ok = retry.LastResultOf[int](err)
	assert.False(t, ok, "not an int")
	_, ok = retry.LastResultOf[string](errors.New("other"))
	assert.False(t, ok)
	require.NotNil(t, res)
	require.Len(t, res.History, 2)
	for i, a := range res.History {
		assert.Equal(t, i+1, a.Number)
		assert.False(t, a.OK)
		assert.Equal(t, chatInvalid, a.Text)
		assert.NotEmpty(t, a.Diagnosis)
		assert.False(t, a.Commit.IsZero())
	}
}

func TestChat_SystemPromptCommittedOnce(t *testing.T) {
	const system = "You are terse."
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Otherwise(llmtest.Answer("ok"))

	_, err := tr.Chat(ctx, "one", tract.SystemPrompt(system))
	require.NoError(t, err)
	_, err = tr.Chat(ctx, "two", tract.SystemPrompt(system))
	require.NoError(t, err)

	log := chatLog(t, tr)
	require.Equal(t, []string{"system message", "user message", "assistant message", "user message", "assistant message"},
		chatShape(log))
	assert.Equal(t, system, log[4].Text)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []llm.Message{
		{Role: "system", Content: system}, {Role: "user", Content: "one"},
		{Role: "assistant", Content: "ok"}, {Role: "user", Content: "two"},
	}, reqs[1].Messages)
}

func TestGenerate_AnswersWithoutNewUserMessage(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatValid))
	user, err := tr.User(ctx, chatQuestion)
	require.NoError(t, err)

	res, err := tr.Generate(ctx, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.Equal(t, chatValid, res.Text)
	assert.True(t, res.User.IsZero())
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	assert.Equal(t, user, log[1].Hash)
	assert.Equal(t, res.Commit, log[0].Hash)
	assert.Equal(t, []llm.Message{{Role: "user", Content: chatQuestion}}, srv.Requests()[0].Messages)
}

// A branch that compiles to nothing (notes only) is refused before the
// model is asked, and nothing is written.
func TestGenerate_NothingToSend(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	note, err := tr.Commit(ctx, tract.KindNote, tract.RoleUser, "a note to self")
	require.NoError(t, err)

	_, err = tr.Generate(ctx)
	require.ErrorIs(t, err, tract.ErrEmptyContext)
	assert.Empty(t, srv.Requests(), "the model was asked")
	h, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, h.Commits, 1, "something was written")
	assert.Equal(t, note, h.Commits[0].Hash)
}

func TestGenerate_PurifiesToHead(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(chatInvalid))
	srv.When("failed validation", llmtest.Answer(chatValid))
	user, err := tr.User(ctx, chatQuestion)
	require.NoError(t, err)

	res, err := tr.Generate(ctx, tract.Validate(retry.JSON()))
	require.NoError(t, err)
	assert.True(t, res.Purified)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, user, all.Orphans[0].Fork)
}

// BUG: Generate accepts SystemPrompt and silently drops it; the model
// never sees the system message.
func TestGenerate_SystemPrompt(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("hi"))
	_, err := tr.User(ctx, "hello")
	require.NoError(t, err)

	_, err = tr.Generate(ctx, tract.SystemPrompt("You are terse."))
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, reqs[0].Messages, llm.Message{Role: "system", Content: "You are terse."})
}

func TestGenerate_UnbornBranch(t *testing.T) {
	tr, srv := newChatServerTract(t)
	_, err := tr.Generate(context.Background())
	assert.ErrorIs(t, err, tract.ErrUnbornBranch)
	assert.Empty(t, srv.Requests())
}

func TestChat_WithoutClient(t *testing.T) {
	ctx := context.Background()
	tr := newChatTract(t, nil)
	_, err := tr.Chat(ctx, chatQuestion)
	assert.ErrorIs(t, err, tract.ErrNoClient)
	_, err = tr.Generate(ctx)
	assert.ErrorIs(t, err, tract.ErrNoClient)
	assert.Empty(t, chatLog(t, tr), "nothing committed")

	// UseClient supplies one for a single call.
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("hi"))
	res, err := tr.Chat(ctx, "hello", tract.UseClient(newChatClient(t, srv)))
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text)
}

func TestChat_DetachedHead(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	h, err := tr.User(ctx, "hello")
	require.NoError(t, err)
	_, err = tr.Assistant(ctx, "hi")
	require.NoError(t, err)
	_, err = tr.Checkout(ctx, h.String())
	require.NoError(t, err)
	before := chatLogAll(t, tr)

	_, err = tr.Chat(ctx, chatQuestion)
	assert.ErrorIs(t, err, tract.ErrDetachedHead)
	_, err = tr.Generate(ctx)
	assert.ErrorIs(t, err, tract.ErrDetachedHead)

	after := chatLogAll(t, tr)
	assert.Len(t, after.Commits, len(before.Commits), "nothing committed")
	assert.Len(t, after.Orphans, len(before.Orphans))
	assert.Empty(t, srv.Requests(), "no model call")
}

// Another writer commits on the branch while the model call is in flight:
// Chat must not overwrite it, and must not lose its answer either: the
// answer is kept off the branch, named by the conflict and listed by LogAll.
func TestChat_ConcurrentWriterConflict(t *testing.T) {
	ctx := context.Background()
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Reply{Content: chatValid, Delay: 500 * time.Millisecond})

	type written struct {
		h   tract.Hash
		err error
	}
	done := make(chan written, 1)
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		h, err := tr.User(ctx, "interloper")
		done <- written{h, err}
	}()

	res, err := tr.Chat(ctx, chatQuestion, tract.Validate(retry.JSON()))
	other := <-done
	require.NoError(t, other.err)
	require.Error(t, err)
	assert.ErrorIs(t, err, tract.ErrConflict)
	require.NotNil(t, res)

	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, res.User, conflict.Expected)
	assert.Equal(t, other.h, conflict.Actual)
	assert.Equal(t, "accepted answer", conflict.What)
	assert.Equal(t, conflict.Kept, res.Commit, "the result names the kept answer")
	assert.Equal(t, chatValid, res.Text)

	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "user message"}, chatShape(log))
	assert.Equal(t, other.h, log[0].Hash)
	assert.Equal(t, "interloper", log[0].Text)
	assert.Equal(t, res.User, log[1].Hash)
	orphans := chatLogAll(t, tr).Orphans
	require.Len(t, orphans, 1, "the answer is kept")
	assert.Equal(t, "conflict", orphans[0].Action)
	assert.Equal(t, res.User, orphans[0].Fork)
	require.Len(t, orphans[0].Commits, 1)
	assert.Equal(t, conflict.Kept, orphans[0].Commits[0].Hash)
	assert.Equal(t, chatValid, orphans[0].Commits[0].Text)
}

func TestChat_LLMJudgeValidator(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewServer(t)
	client := newChatClient(t, srv)
	tr := newChatTract(t, client)
	// The judge is asked with one message holding the answer between tags.
	srv.When("<answer>\nGo away.\n</answer>", llmtest.Answer(`{"pass": false, "reason": "rude"}`))
	srv.When("<answer>\nHello, friend!\n</answer>", llmtest.Answer(`{"pass": true, "reason": "polite"}`))
	srv.When("failed validation", llmtest.Answer("Hello, friend!"))
	srv.Reply(llmtest.Answer("Go away."))

	v, err := retry.ParseSpecs([]string{"llm:is polite"}, retry.WithJudge(tract.Judge(client, "")))
	require.NoError(t, err)
	res, err := tr.Chat(ctx, "Greet me.", tract.Validate(v))
	require.NoError(t, err)
	assert.Equal(t, "Hello, friend!", res.Text)
	assert.Equal(t, 2, res.Attempts)
	require.Len(t, res.Diagnoses, 1)
	assert.Contains(t, res.Diagnoses[0], "rude")

	reqs := srv.Requests()
	require.Len(t, reqs, 4, "answer, judge, answer, judge")
	assert.Len(t, reqs[1].Messages, 1)
	assert.Contains(t, reqs[1].LastMessage(), "<criteria>\nis polite\n</criteria>")
	assert.Equal(t, chatSteering(res.Diagnoses[0]), reqs[2].LastMessage())
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
}

// A judge that cannot answer stops the loop: it is not a diagnosis.
func TestChat_JudgeFailureIsNotADiagnosis(t *testing.T) {
	srv := llmtest.NewServer(t)
	client := newChatClient(t, srv, llm.WithMaxRetries(0))
	tr := newChatTract(t, client)
	srv.Reply(llmtest.Answer("Hello."), llmtest.Error(500, "judge down"))

	v, err := retry.ParseSpecs([]string{"llm:is polite"}, retry.WithJudge(tract.Judge(client, "")))
	require.NoError(t, err)
	res, err := tr.Chat(context.Background(), "Greet me.", tract.Validate(v))
	require.Error(t, err)
	var se *llm.ServerError
	assert.ErrorAs(t, err, &se)
	require.NotNil(t, res)
	assert.Empty(t, res.Diagnoses)
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	all := chatLogAll(t, tr)
	require.Len(t, all.Orphans, 1)
	require.Len(t, all.Orphans[0].Commits, 1)
	assert.NotEmpty(t, all.Orphans[0].Commits[0].MetaValue("validator_error"))
	assert.Len(t, srv.Requests(), 2)
}

// A judge reply that is not the JSON verdict is no verdict on the answer:
// the turn stops with a *retry.JudgeReplyError that quotes the start of
// the reply, and the answer keeps the error as its validator error.
func TestChat_JudgeReplyNotJSONIsJudgeReplyError(t *testing.T) {
	srv := llmtest.NewServer(t)
	client := newChatClient(t, srv)
	tr := newChatTract(t, client)
	prose := "Yes, the answer is polite. " + strings.Repeat("It greets the user warmly. ", 20)
	srv.Reply(llmtest.Answer("Hello."), llmtest.Answer(prose))

	v, err := retry.ParseSpecs([]string{"llm:is polite"}, retry.WithJudge(tract.Judge(client, "")))
	require.NoError(t, err)
	res, err := tr.Chat(context.Background(), "Greet me.", tract.Validate(v))

	var jre *retry.JudgeReplyError
	require.ErrorAs(t, err, &jre)
	assert.Equal(t, prose, jre.Reply)
	assert.Contains(t, err.Error(), `the judge model's reply is not the JSON verdict expected`)
	assert.Contains(t, err.Error(), `"Yes, the answer is polite.`)
	assert.NotContains(t, err.Error(), prose, "the reply is quoted, bounded")
	require.NotNil(t, res)
	assert.Empty(t, res.Diagnoses, "no diagnosis: the answer was not judged")
	log := chatLog(t, tr)
	require.Equal(t, []string{"user message", "assistant error"}, chatShape(log))
	assert.Contains(t, log[0].Text, "answer of attempt 1 not judged: ")
	unjudged := chatLogAll(t, tr).Orphans[0].Commits[0]
	assert.Equal(t, "Hello.", unjudged.Text)
	assert.Contains(t, unjudged.MetaValue("validator_error"), jre.Error())
	assert.Len(t, srv.Requests(), 2, "the judge is asked once")
}

// An answer no judge could judge is taken off the branch, after earlier
// attempts too, so the branch ends in the unanswered message (and the
// turn's error commit) that RetryLast answers again; without purify
// the attempts, the unjudged answer last, stay on the branch.
func TestChat_UnjudgedAnswerLeavesTheMessageToRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		purify  bool
		replies []llmtest.Reply
		shape   []string
	}{
		{"first attempt", true, []llmtest.Reply{llmtest.Answer("Hello."), llmtest.Answer("I think yes")},
			[]string{"user message", "assistant error"}},
		{"second attempt", true, []llmtest.Reply{llmtest.Answer("Go away."), llmtest.Answer(`{"pass": false, "reason": "rude"}`),
			llmtest.Answer("Hello."), llmtest.Answer("I think yes")},
			[]string{"user message", "assistant error"}},
		{"without purify", false, []llmtest.Reply{llmtest.Answer("Hello."), llmtest.Answer("I think yes")},
			[]string{"user message", "assistant message"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			client := newChatClient(t, srv)
			tr := newChatTract(t, client)
			srv.Reply(tc.replies...)
			v, err := retry.ParseSpecs([]string{"llm:is polite"}, retry.WithJudge(tract.Judge(client, "")))
			require.NoError(t, err)
			ctx := context.Background()

			res, err := tr.Chat(ctx, "Greet me.", tract.Validate(v), tract.Purify(tc.purify))
			var jre *retry.JudgeReplyError
			require.ErrorAs(t, err, &jre)
			assert.Equal(t, tc.shape, chatShape(chatLog(t, tr)))
			pending, err := tr.PendingTurn(ctx)
			require.NoError(t, err)
			if !tc.purify {
				assert.Nil(t, pending, "the attempts stay on the branch by request")
				return
			}
			require.NotNil(t, pending)
			assert.Equal(t, res.User, pending.User)
			assert.Equal(t, res.Commit, pending.Tip, "the error commit is the result's")

			srv.Reply(llmtest.Answer("Hello, friend!"), llmtest.Answer(`{"pass": true, "reason": "polite"}`))
			again, err := tr.RetryLast(ctx, tract.Validate(v))
			require.NoError(t, err)
			assert.Equal(t, "Hello, friend!", again.Text)
			assert.Equal(t, []string{"user message", "assistant message"}, chatShape(chatLog(t, tr)))
		})
	}
}
