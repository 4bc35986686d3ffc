package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// taskMix runs four tasks through 'tract chat --events FILE': t1 accepted
// on the first try, t2 retried then accepted, t3 exhausted, t4 stopped by
// a request too long for the model's context, which retrying cannot fix.
// It returns the events file.
func taskMix(t *testing.T, s *sandbox) string {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.Reply(
		llmtest.Answer(goodJSON),
		llmtest.Answer(badJSON), llmtest.Answer(goodJSON),
		llmtest.Answer(badJSON), llmtest.Answer(badJSON),
		llmtest.ContextLengthExceeded(),
	)
	s = chatEnv(s, srv)
	events := filepath.Join(s.dir, "events.jsonl")
	for _, tc := range []struct {
		task string
		code int
	}{{"t1", exitOK}, {"t2", exitOK}, {"t3", exitExhausted}, {"t4", exitEscalated}} {
		r := s.tract("chat", "--task", tc.task, "--validate", "json", "--max-attempts", "2", "--events", events, "colours as JSON")
		requireExit(t, r, tc.code)
	}
	srv.Verify(t)
	return events
}

// The "done when": events regenerated from the commits equal the
// live --events file, byte for byte.
func TestEvents_RegeneratedEqualLiveFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	events := taskMix(t, s)

	live, err := os.ReadFile(events)
	require.NoError(t, err)
	fi, err := os.Stat(events)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	regenerated := s.ok("events")
	assert.Equal(t, string(live), regenerated.Stdout)

	var kinds []string
	for _, line := range lines(string(live)) {
		var e struct {
			Event  string `json:"event"`
			TaskID string `json:"task_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		kinds = append(kinds, e.TaskID+" "+e.Event)
	}
	assert.Equal(t, []string{
		"t1 attempt", "t1 resolved",
		"t2 attempt", "t2 feedback_injected", "t2 attempt", "t2 resolved",
		"t3 attempt", "t3 feedback_injected", "t3 attempt", "t3 escalated", "t3 user_response", "t3 resolved",
		"t4 attempt", "t4 escalated", "t4 user_response", "t4 resolved",
	}, kinds)

	text := s.ok("events", "--task", "t3", "--format", "text").Stdout
	got := lines(text)
	require.Len(t, got, 6)
	assert.Regexp(t, `^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] \[RETRY\] \[t3\] attempt=1 status=failed type=verification_failed duration_ms=\d+ error="json: invalid JSON`, got[0])
	assert.Contains(t, got[1], "[t3] injecting_feedback attempt=2 lines=")
	assert.Contains(t, got[3], `[t3] escalating reason="max_retries_exceeded" attempts=2`)
	assert.Contains(t, got[4], `[t3] user_response="abort"`, "chat's default answer")
	assert.Contains(t, got[5], "[t3] resolved status=aborted attempts=2 duration_ms=")

	assert.Empty(t, s.ok("events", "--since", "2999-01-01T00:00:00Z").Stdout)
	assert.Equal(t, string(live), s.ok("events", "--since", "1h").Stdout)
}

func TestEvents_FileAppends(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("one"), llmtest.Answer("two"))
	events := filepath.Join(s.dir, "events.jsonl")
	require.NoError(t, os.WriteFile(events, []byte("earlier\n"), 0o644))
	chatEnv(s, srv).ok("chat", "--events", events, "hello")
	chatEnv(s, srv).ok("chat", "--events", events, "again")
	data, err := os.ReadFile(events)
	require.NoError(t, err)
	got := lines(string(data))
	require.Len(t, got, 5, "the line there, then attempt and resolved of each turn")
	assert.Equal(t, "earlier", got[0])
	assert.Equal(t, strings.Join(got[1:], "\n")+"\n", s.ok("events").Stdout)
}

// 'tract stats --json' on a scripted mix of tasks.
func TestStats_JSONFigures(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	taskMix(t, s)

	type stats struct {
		TotalTasks             int            `json:"total_tasks"`
		FirstAttemptSuccesses  int            `json:"first_attempt_successes"`
		FirstAttemptSuccessPct float64        `json:"first_attempt_success_pct"`
		Retried                int            `json:"retried"`
		RetrySuccesses         int            `json:"retry_successes"`
		Escalations            int            `json:"escalations"`
		Skipped                int            `json:"skipped"`
		Aborted                int            `json:"aborted"`
		Attempts               int            `json:"attempts"`
		MeanAttempts           float64        `json:"mean_attempts"`
		FailureTypes           map[string]int `json:"failure_types"`
		TopDiagnoses           []struct {
			Diagnosis string `json:"diagnosis"`
			Count     int    `json:"count"`
		} `json:"top_diagnoses"`
		TokensFailed   int `json:"tokens_failed"`
		TokensAccepted int `json:"tokens_accepted"`
		UntaskedTurns  int `json:"untasked_turns"`
		Tasks          []struct {
			Task     string `json:"task_id"`
			Turns    int    `json:"turns"`
			Attempts int    `json:"attempts"`
			Result   string `json:"result"`
		} `json:"tasks"`
	}
	st := decodeJSON[stats](t, s.ok("stats", "--json"))
	assert.Equal(t, 4, st.TotalTasks)
	assert.Equal(t, 1, st.FirstAttemptSuccesses)
	assert.Equal(t, 25.0, st.FirstAttemptSuccessPct)
	assert.Equal(t, 2, st.Retried)
	assert.Equal(t, 1, st.RetrySuccesses)
	assert.Equal(t, 2, st.Escalations)
	assert.Zero(t, st.Skipped)
	assert.Equal(t, 2, st.Aborted, "chat's default answer")
	assert.Equal(t, 6, st.Attempts)
	assert.Equal(t, 1.5, st.MeanAttempts)
	assert.Equal(t, map[string]int{"verification_failed": 3, "execution_error": 1}, st.FailureTypes)
	require.NotEmpty(t, st.TopDiagnoses)
	assert.Equal(t, 3, st.TopDiagnoses[0].Count)
	assert.Positive(t, st.TokensFailed)
	assert.Positive(t, st.TokensAccepted)
	assert.Zero(t, st.UntaskedTurns)
	var table []string
	for _, ts := range st.Tasks {
		table = append(table, strings.Join([]string{ts.Task, string(rune('0' + ts.Attempts)), ts.Result}, " "))
	}
	assert.Equal(t, []string{"t1 1 success", "t2 2 success", "t3 2 aborted", "t4 1 aborted"}, table)

	st = decodeJSON[stats](t, s.ok("stats", "--json", "--task", "t2"))
	assert.Equal(t, 1, st.TotalTasks)

	text := s.ok("stats").Stdout
	assert.Contains(t, text, "First-attempt success  1 (25.0%)")
	assert.Contains(t, text, "t2    1      2         success (retry worked)")
}

// The README's tour: a validated chat without --task, retried once, then
// 'tract stats', which counts the turn as a task of its own and lists it
// on the "(no task)" line; --task leaves it out.
func TestStats_TourCountsTurnsWithoutATask(t *testing.T) {
	t.Parallel()
	s := chatEnv(newSandbox(t), retryServer(t))
	s.initRepo()
	s.ok("commit", "--role", "system", "-m", "You answer in JSON.")
	s.ok("chat", "--validate", "json", "Describe Ada Lovelace")
	out := s.ok("stats").Stdout
	for _, want := range []string{
		"Total tasks            1\n",
		"First-attempt success  0 (0.0%)\n",
		"Retried                1 (100.0%)\n",
		"Retry success          1\n",
		"Mean attempts          2.00\n",
		"Task       Turns  Attempts  Result\n(no task)  1      2         success (retry worked)\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "not counted")
	assert.Contains(t, s.ok("stats", "--task", "t").Stdout, "Total tasks            0\n")
}

func TestEvents_BadInputIsUsageError(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	before := s.snapshot()
	for _, args := range [][]string{
		{"events", "--format", "xml"},
		{"events", "--since", "yesterday"},
		{"events", "--since", "-5m"},
		{"events", "--task", ""},
		{"stats", "--since", "2026-13-01"},
		{"stats", "--since", "5x"},
	} {
		r := s.tract(args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, args[len(args)-2], r)
	}
	s.requireUnchanged(before)

	// An events file that cannot be opened stops chat before anything is
	// written or asked.
	srv := llmtest.NewServer(t)
	r := chatEnv(s, srv).tract("chat", "--events", filepath.Join(s.dir, "no", "such", "dir", "e.jsonl"), "hello")
	requireExit(t, r, exitError)
	assert.Contains(t, r.Stderr, "--events")
	assert.Empty(t, srv.Requests())
	s.requireUnchanged(before)
}

// The README's go vet task fails three times, each time in a temporary
// directory of its own: 'tract stats' shows one diagnosis counted three
// times, not three diagnoses. (The command prints what go vet prints,
// without needing Go.)
func TestStats_GroupsDiagnosesAcrossTemporaryDirectories(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Otherwise(llmtest.Answer("package main"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	vet := `cmd:d=$(mktemp -d) && cat > "$d/main.go" && echo "$d/main.go:6:2: fmt.Printf format %d reads arg #1, but call has 0 args" >&2; exit 1`
	r := s.tract("chat", "--task", "03-01:task-3", "--validate", vet, "--max-attempts", "3", "Write a Go program")
	requireExit(t, r, exitExhausted)
	type stats struct {
		TopDiagnoses []struct {
			Diagnosis string `json:"diagnosis"`
			Count     int    `json:"count"`
		} `json:"top_diagnoses"`
	}
	st := decodeJSON[stats](t, s.ok("stats", "--json"))
	require.Len(t, st.TopDiagnoses, 1, "%+v", st.TopDiagnoses)
	assert.Equal(t, 3, st.TopDiagnoses[0].Count)
	assert.Contains(t, st.TopDiagnoses[0].Diagnosis, "exited with status N: …/main.go:N:N: fmt.printf")
}

// --events in the REPL appends each turn's events as one-shot chat does
// (it was ignored without a word): the file equals 'tract events'.
func TestEvents_InteractiveWritesFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer(badJSON), llmtest.Answer(goodJSON), llmtest.Answer(goodJSON))
	events := filepath.Join(s.dir, "events.jsonl")
	chatEnv(s, srv).okStdin("colours as JSON\nagain as JSON\n",
		"chat", "--interactive", "--validate", "json", "--max-attempts", "2", "--task", "r1", "--events", events)
	srv.Verify(t)
	live, err := os.ReadFile(events)
	require.NoError(t, err, "the REPL wrote --events")
	fi, err := os.Stat(events)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	var kinds []string
	for _, line := range lines(string(live)) {
		var e struct {
			Event string `json:"event"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		kinds = append(kinds, e.Event)
	}
	assert.Equal(t, []string{"attempt", "feedback_injected", "attempt", "resolved", "attempt", "resolved"}, kinds)
	assert.Equal(t, string(live), s.ok("events").Stdout, "the same lines 'tract events' regenerates")

	// A file that cannot be opened stops the REPL before a line is read.
	r := chatEnv(s, srv).tractStdin("hello\n", "chat", "--interactive", "--events", filepath.Join(s.dir, "no", "such", "e.jsonl"))
	assert.NotEqual(t, exitOK, r.Code)
	assert.Contains(t, r.Stderr, "--events")
}
