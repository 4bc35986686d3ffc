package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// escalationMeta is the escalation record of a note.
type escalationMeta struct {
	Task       string `json:"task"`
	Escalation *struct {
		Round       int    `json:"round"`
		Attempts    int    `json:"attempts"`
		Reason      string `json:"reason"`
		Resolution  string `json:"resolution"`
		Instruction string `json:"instruction"`
		Timestamp   string `json:"timestamp"`
	} `json:"escalation"`
}

// Non-interactive answers to an exhausted turn: each --on-exhausted value
// and --fix, with the exit code, the requests made and the branch left.
func TestChat_OnExhaustedNonInteractive(t *testing.T) {
	t.Parallel()
	const fix = "Answer with the JSON object only."
	cases := []struct {
		name     string
		flags    []string
		exit     int
		requests int
		branch   []string // kinds, newest first
		stderr   string
	}{
		// The default is abort, recorded as an explicit one is.
		{"default abort", nil, exitExhausted, 2, []string{"error", "message"}, "answer: abort"},
		{"abort", []string{"--on-exhausted", "abort"}, exitExhausted, 2, []string{"error", "message"}, "answer: abort"},
		{"skip", []string{"--on-exhausted", "skip"}, exitSkipped, 2, []string{"note", "error", "message"}, `tract: chat: skipped task "t1" (max_retries_exceeded): `},
		{"retry", []string{"--on-exhausted", "retry"}, exitOK, 3, []string{"message", "message"}, "answer: retry"},
		{"fix", []string{"--fix", fix}, exitOK, 3, []string{"message", "message"}, "answer: fix: " + fix},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer("no 1"), llmtest.Answer("no 2"))
			if tc.requests > 2 {
				srv.Reply(llmtest.Answer(goodJSON))
			}
			s := newSandbox(t)
			s.initRepo()
			args := append([]string{"chat", "--task", "t1", "--validate", "json", "--max-attempts", "2"}, tc.flags...)
			r := chatEnv(s, srv).tract(append(args, "Give me JSON")...)
			requireExit(t, r, tc.exit)
			assert.Contains(t, r.Stderr, tc.stderr)
			reqs := srv.Requests()
			require.Len(t, reqs, tc.requests)
			if tc.name == "fix" {
				assert.True(t, strings.HasPrefix(reqs[2].LastMessage(), "USER INTERVENTION (high priority)."), reqs[2].LastMessage())
				assert.Contains(t, reqs[2].LastMessage(), "\n"+fix+"\n\nYour previous response failed validation: ")
			}
			var kinds []string
			log := s.log()
			for _, c := range log {
				kinds = append(kinds, c.Kind)
			}
			assert.Equal(t, tc.branch, kinds)
			if tc.exit == exitExhausted { // the error commit records the answer
				var m escalationMeta
				require.NoError(t, json.Unmarshal(log[0].Meta, &m))
				require.NotNil(t, m.Escalation)
				assert.Equal(t, "abort", m.Escalation.Resolution)
				ev := s.ok("events", "--format", "text").Stdout
				assert.Contains(t, ev, `user_response="abort"`)
				assert.Contains(t, ev, "resolved status=aborted attempts=2")
				assert.Contains(t, s.ok("stats").Stdout, "Aborted                1\n")
			}
			if tc.name == "skip" {
				var m escalationMeta
				require.NoError(t, json.Unmarshal(log[0].Meta, &m))
				require.NotNil(t, m.Escalation)
				assert.Equal(t, "t1", m.Task)
				assert.Equal(t, "skip", m.Escalation.Resolution)
				assert.Equal(t, "max_retries_exceeded", m.Escalation.Reason)
				assert.NotEmpty(t, m.Escalation.Timestamp)
			}
			s.fsckOK()
		})
	}
}

// A failure retrying cannot fix is not answered by --on-exhausted: it
// aborts with exit 7.
func TestChat_OnExhaustedDoesNotRetryBlocked(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := newSandbox(t)
	s.initRepo()
	r := chatEnv(s, srv).tract("chat", "--on-exhausted", "retry", "--validate", "cmd:exit 77", "Build it.")
	requireExit(t, r, exitEscalated)
	assert.Contains(t, r.Stderr, "answer: abort")
	assert.Len(t, srv.Requests(), 1)
}

// Bad escalation flags are usage errors, and nothing is written or asked.
func TestChat_BadEscalationFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)
	before := s.snapshot()
	for _, args := range [][]string{
		{"--on-exhausted", "maybe", "-V", "json"},
		{"--fix", " "}, // --fix without --validate is allowed (empty answers fail), a blank one is not
		{"--fix", "", "-V", "json"},
		{"--on-exhausted", "ask", "-V", "json"}, // no terminal to ask on
	} {
		r := c.tract(append(append([]string{"chat"}, args...), "Hello")...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, "Run 'tract chat --help' for usage.")
	}
	s.requireUnchanged(before)
	assert.Empty(t, srv.Requests())
}

// A model server that stays unavailable after the transport retries goes
// through --on-exhausted like an exhaustion, with reason transport: abort
// (the default) keeps exit 4, skip exits 6, retry asks the model again.
func TestChat_OnExhaustedAnswersAnUnavailableServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		flags  []string
		exit   int
		answer string
	}{
		{"default abort", nil, exitModel, "abort"},
		{"skip", []string{"--on-exhausted", "skip"}, exitSkipped, "skip"},
		{"fix is not for the server", []string{"--fix", "be brief"}, exitModel, "abort"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Otherwise(llmtest.Error(503, "Service Unavailable"))
			s := newSandbox(t)
			s.initRepo()
			r := chatEnv(s, srv).tract(append([]string{"chat", "--task", "t1", "--validate", "json"}, append(tc.flags, "Give me JSON")...)...)
			requireExit(t, r, tc.exit)
			assert.Contains(t, r.Stderr, "escalated: transport after 1 of 3 attempts (round 1); answer: "+tc.answer+"\n")
			log := s.log()
			kinds := []string{"note", "error", "message"} // skip: a skip note
			if tc.answer == "abort" {
				kinds = kinds[1:] // the error commit records the answer
			}
			require.Len(t, log, len(kinds))
			for i, k := range kinds {
				assert.Equal(t, k, log[i].Kind)
			}
			var m escalationMeta
			require.NoError(t, json.Unmarshal(log[0].Meta, &m))
			require.NotNil(t, m.Escalation)
			assert.Equal(t, "transport", m.Escalation.Reason)
			assert.Equal(t, tc.answer, m.Escalation.Resolution)
			assert.Contains(t, string(log[len(log)-2].Meta), `"escalation": "transport"`, "the failure record says why")
			ev := s.ok("events", "--format", "text").Stdout
			assert.Contains(t, ev, `escalating reason="transport" attempts=1`)
			assert.Contains(t, ev, `user_response="`+tc.answer+`"`)
			s.fsckOK()
		})
	}

	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		srv.Otherwise(llmtest.Error(503, "Service Unavailable"))
		s := newSandbox(t)
		s.initRepo()
		r := chatEnv(s, srv).tract("chat", "--on-exhausted", "retry", "--max-attempts", "2", "--validate", "json", "Give me JSON")
		requireExit(t, r, exitModel)
		assert.Equal(t, 4, strings.Count(r.Stderr, "escalated: transport"), "asked before each of rounds 2 to 5")
	})
}
