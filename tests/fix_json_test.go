package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// The check for validators that fix: the model answers JSON
// with prose around it and a trailing comma; with --validate json
// --fix-json one model call is made, the branch holds the repaired JSON,
// log --all shows the answer as given, and stats count one fix, no retry.
func TestChat_FixJSONRepairsWithoutAnotherCall(t *testing.T) {
	t.Parallel()
	const given = `Here you go: {"a": 1,}`
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer(given))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)

	r := c.tract("chat", "--validate", "json", "--fix-json", "Give me a JSON object with a = 1")
	requireExit(t, r, exitOK)
	assert.Equal(t, "{\"a\": 1}\n", r.Stdout, "stdout carries the fixed answer")
	assert.Contains(t, r.Stderr, "attempt 1/3: fixed by json\n")
	assert.Contains(t, r.Stderr, "fixed by json; the answer as given is ")
	assert.Len(t, srv.Requests(), 1, "no other model call")

	assert.Equal(t, "[user]\nGive me a JSON object with a = 1\n\n[assistant]\n{\"a\": 1}\n", s.ok("compile").Stdout,
		"the branch holds the fixed answer")
	oneline := lines(s.ok("log", "--oneline").Stdout)
	require.Len(t, oneline, 2, strings.Join(oneline, "\n"))
	assert.Regexp(t, `^[0-9a-f]{8} \(HEAD -> main\) assistant: \{"a": 1\}  ✓ fixed by json$`, oneline[0])

	all := s.ok("log", "--all").Stdout
	assert.Contains(t, all, `assistant: `+given+`  ✗ fixed by json: invalid JSON at line 1, column 1`, "log --all shows the answer as given")
	h := s.logAll()
	require.Len(t, h.Orphans, 1)
	assert.Equal(t, "purify", h.Orphans[0].Action)

	show := s.ok("show", "HEAD").Stdout
	assert.Contains(t, show, "Fixed by json: the answer as the model gave it is ")
	assert.Contains(t, show, `"fixed": {`)

	type result struct {
		Answer   string `json:"answer"`
		FixedBy  string `json:"fixed_by"`
		Original string `json:"original"`
		Attempts int    `json:"attempts"`
		History  []struct {
			OK      bool   `json:"ok"`
			Text    string `json:"text"`
			FixedBy string `json:"fixed_by"`
			Fixed   string `json:"fixed"`
		} `json:"history"`
		FailedAttempts []string `json:"failed_attempts"`
	}
	orig := s.ok("show", "--json", "HEAD")
	type commit struct {
		Meta struct {
			Fixed struct {
				By       string `json:"by"`
				Original string `json:"original"`
			} `json:"fixed"`
		} `json:"meta"`
	}
	head := decodeJSON[commit](t, orig)
	assert.Equal(t, "json", head.Meta.Fixed.By)
	origShow := s.ok("show", head.Meta.Fixed.Original).Stdout
	assert.Contains(t, origShow, given, "the fixed answer names the answer as given")
	assert.Contains(t, origShow, "Fixed by json: this answer as the model gave it was not accepted")

	type stats struct {
		TotalTasks            int            `json:"total_tasks"`
		FirstAttemptSuccesses int            `json:"first_attempt_successes"`
		Retried               int            `json:"retried"`
		Fixes                 int            `json:"fixes"`
		FixesByValidator      map[string]int `json:"fixes_by_validator"`
	}
	st := decodeJSON[stats](t, s.ok("stats", "--json"))
	assert.Equal(t, stats{TotalTasks: 1, FirstAttemptSuccesses: 1, Fixes: 1, FixesByValidator: map[string]int{"json": 1}}, st)
	text := s.ok("stats").Stdout
	assert.Contains(t, text, "Fixes                  1 (json 1)\n")
	assert.Contains(t, text, "success (fixed)")

	// The same turn again with --json: the record says it was fixed.
	srv.Reply(llmtest.Answer("```json\n[1, 2,]\n```"))
	rec := decodeJSON[result](t, c.ok("chat", "--validate", "json", "--fix-json", "--json", "A list, please"))
	assert.Equal(t, "[1, 2]", rec.Answer)
	assert.Equal(t, "json", rec.FixedBy)
	assert.NotEmpty(t, rec.Original)
	require.Len(t, rec.History, 1)
	assert.True(t, rec.History[0].OK)
	assert.Equal(t, "json", rec.History[0].FixedBy)
	assert.Equal(t, "[1, 2]", rec.History[0].Fixed)
	assert.Empty(t, rec.FailedAttempts, "a fixed answer is no failed attempt")
	s.fsckOK()
}

// Without --fix-json the same answer is a failed attempt; --fix-json
// without --validate json is a usage error that writes nothing.
func TestChat_FixJSONNeedsTheJSONValidator(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	srv := llmtest.NewServer(t)
	c := chatEnv(s, srv)
	before := s.snapshot()

	r := c.tract("chat", "--fix-json", "--validate", "maxlen:10", "hi")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "--fix-json lets the json validator repair an answer: add --validate json")
	assert.Empty(t, srv.Requests())
	s.requireUnchanged(before)
}

// The interactive chat takes --fix-json too: its turns repair as a
// one-shot chat's do.
func TestREPL_FixJSON(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Sure!\n```json\n{\"b\": [true,],}\n```"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()

	r := s.okStdin("JSON please\n", "chat", "-i", "--validate", "json", "--fix-json")
	assert.Contains(t, r.Stdout+r.Stderr, `{"b": [true]}`)
	assert.Len(t, srv.Requests(), 1, "no other model call")
	assert.Equal(t, "[user]\nJSON please\n\n[assistant]\n{\"b\": [true]}\n", s.ok("compile").Stdout)
	assert.Contains(t, s.ok("log", "--all").Stdout, "✗ fixed by json")
}
