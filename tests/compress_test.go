package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

const summaryText = "The user asked forty questions about rivers; the assistant answered each one in detail."

// compressFixture imports a system prompt, 40 turns and 10 later turns (20
// commits) and returns the sandbox pointed at a summarizing test server.
func compressFixture(t *testing.T) (*sandbox, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Otherwise(llmtest.Answer(summaryText))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	var msgs []map[string]string
	msgs = append(msgs, map[string]string{"role": "system", "content": "You are a geography tutor."})
	for i := 0; i < 60; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": fmt.Sprintf("turn %d: %s", i, strings.Repeat("a long sentence about rivers and lakes ", 3))})
	}
	data, err := json.Marshal(msgs)
	require.NoError(t, err)
	s.okStdin(string(data), "import")
	return s, srv
}

// The "done when": system prompt, one summary, the last 20 commits
// replayed with identical content; compile is shorter; log --all shows the
// original chain as orphaned by compress.
func TestCompress_KeepsSystemSummarizesAndReplaysTail(t *testing.T) {
	t.Parallel()
	s, srv := compressFixture(t)
	before := s.log()
	require.Len(t, before, 61)
	compiledBefore := s.ok("compile", "--json").Stdout

	r := s.ok("compress", "--to", "HEAD~20", "--validate", "maxlen:2000")
	assert.Contains(t, r.Stdout, "compressed 40 commits into 1 summary")
	assert.Contains(t, r.Stderr, "summary 1/1")
	require.Len(t, srv.Requests(), 1)
	assert.Contains(t, srv.Requests()[0].LastMessage(), "turn 0:")

	after := s.log()
	require.Len(t, after, 22)
	assert.Equal(t, "You are a geography tutor.", after[21].Text)
	assert.Equal(t, before[60].Hash, after[21].Hash, "the root is unchanged")
	assert.Equal(t, "summary", after[20].Kind)
	assert.Equal(t, summaryText, after[20].Text)
	for i := 0; i < 20; i++ {
		assert.Equal(t, before[i].Text, after[i].Text)
		assert.Equal(t, before[i].Role, after[i].Role)
		assert.NotEqual(t, before[i].Hash, after[i].Hash, "replayed commits have new parents")
	}
	var meta struct {
		Sources      []string `json:"sources"`
		TokensBefore int      `json:"tokens_before"`
		TokensAfter  int      `json:"tokens_after"`
		Attempts     int      `json:"attempts"`
	}
	require.NoError(t, json.Unmarshal(after[20].Meta, &meta))
	assert.Len(t, meta.Sources, 40)
	assert.Equal(t, before[59].Hash, meta.Sources[0])
	assert.Greater(t, meta.TokensBefore, meta.TokensAfter)
	assert.Equal(t, 1, meta.Attempts)

	compiledAfter := s.ok("compile", "--json").Stdout
	assert.Less(t, len(compiledAfter), len(compiledBefore)/2)
	assert.Contains(t, compiledAfter, summaryText)

	all := s.logAll()
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, "compress", all.Orphans[0].Action)
	assert.Len(t, all.Orphans[0].Commits, 60)
	graph := s.ok("log", "--all").Stdout
	assert.Contains(t, graph, "|/  orphaned by compress: 40 commits into 1 summary, 20 replayed (60 commits)")
	orig := decodeJSON[commitInfo](t, s.ok("show", "--json", "ORIG_HEAD"))
	assert.Equal(t, before[0].Hash, orig.Hash)
	s.fsckOK()
}

func TestCompress_DryRunAndSuppliedContent(t *testing.T) {
	t.Parallel()
	s, srv := compressFixture(t)
	before := s.snapshot()
	r := s.ok("compress", "--keep-last", "20", "--dry-run")
	assert.Contains(t, r.Stdout, "keep       ")
	assert.Contains(t, r.Stdout, "summarize  group 1: 40 commits")
	assert.Contains(t, r.Stdout, "replay     20 commits after the range")
	s.requireUnchanged(before)

	s.ok("compress", "--keep-last", "20", "--content", "A short summary.")
	assert.Empty(t, srv.Requests(), "supplied content calls no model")
	log := s.log()
	assert.Equal(t, "A short summary.", log[20].Text)
}

func TestCompress_BadInputChangesNothing(t *testing.T) {
	t.Parallel()
	s, _ := compressFixture(t)
	before := s.snapshot()
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"reversed range", []string{"--from", "HEAD~2", "--to", "HEAD~10"}, 2, "reversed range"},
		{"pinned commit only", []string{"--from", "HEAD~60", "--to", "HEAD~60"}, 1, "nothing to summarize"},
		{"empty range", []string{"--keep-last", "61"}, 2, "empty range"},
		{"exhausted validation", []string{"--to", "HEAD~20", "--validate", "maxlen:10"}, 3, "attempts failed"},
		{"bad validator", []string{"--validate", "nope"}, 2, "unknown kind"},
		{"to with keep-last", []string{"--to", "HEAD", "--keep-last", "3"}, 2, "give one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := s.forTest(t)
			r := s.tract(append([]string{"compress"}, tc.args...)...)
			requireExit(t, r, tc.code)
			assert.Contains(t, r.Stderr, tc.msg)
			s.requireUnchanged(before)
		})
	}
}

func TestCompress_RangeOnAnotherBranchAndModelFailure(t *testing.T) {
	t.Parallel()
	s, _ := compressFixture(t)
	s.ok("switch", "-c", "side")
	side := s.commit("user", "only on the side branch")
	s.ok("switch", "main")
	before := s.snapshot()

	r := s.tract("compress", "--from", side, "--to", side)
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "not on the current branch")
	s.requireUnchanged(before)

	failing := llmtest.NewServer(t, llmtest.WithoutVerify())
	failing.Otherwise(llmtest.Error(500, "overloaded"))
	r = chatEnv(s, failing).tract("compress", "--to", "HEAD~20")
	requireExit(t, r, 4)
	s.requireUnchanged(before)
}
