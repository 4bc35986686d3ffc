package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// A server that never answers is given up after the timeout, set by
// --timeout, TRACT_TIMEOUT or 'tract config set timeout': a transport
// failure (exit 4) that names the model, the server and the wait, and
// says how to wait longer; the turn is recorded as any failed model
// call, with its way out.
func TestChat_TimeoutEndsACallThatNeverAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(s *sandbox) *sandbox
		args  []string
	}{
		{"--timeout", func(s *sandbox) *sandbox { return s }, []string{"--timeout", "300ms"}},
		{"TRACT_TIMEOUT", func(s *sandbox) *sandbox { return s.withEnv("TRACT_TIMEOUT", "300ms") }, nil},
		{"config set timeout", func(s *sandbox) *sandbox { s.ok("config", "set", "timeout", "300ms"); return s }, nil},
		{"the flag wins", func(s *sandbox) *sandbox { return s.withEnv("TRACT_TIMEOUT", "1h") }, []string{"--timeout", "300ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Reply{Content: "too late", Delay: time.Hour})
			s := tc.setup(chatEnv(newSandbox(t).forTest(t), srv))
			s.initRepo()

			start := time.Now()
			r := s.tract(append(append([]string{"chat"}, tc.args...), "hello")...)
			requireExit(t, r, exitModel)
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.Contains(t, r.Stderr, "tract: chat: no answer from test-model at "+srv.URL()+" for 300ms\n")
			assert.Contains(t, r.Stderr, "wait longer:\n--timeout 10m, TRACT_TIMEOUT=10m or 'tract config set timeout 10m'")
			assert.Contains(t, r.Stderr, "send it again: tract chat --retry-last")
			assert.Len(t, srv.Requests(), 1, "not retried")
			log := s.log()
			require.Len(t, log, 2)
			assert.Equal(t, "error", log[0].Kind)
			assert.Equal(t, "timeout", metaOf(t, log[0]).Failure.Type)
		})
	}
}

// A timeout that is not one is a usage error that says where it came
// from, before anything is sent.
func TestChat_BadTimeouts(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	for _, tc := range []struct {
		s      *sandbox
		args   []string
		stderr string
	}{
		{s, []string{"chat", "--timeout", "soon", "hi"}, `tract: --timeout: "soon" is not a timeout: give a duration such as 90s, 2m or 1h30m, or 0 for none`},
		{s, []string{"chat", "--timeout", "-5s", "hi"}, `"-5s" is not a timeout`},
		{s.withEnv("TRACT_TIMEOUT", "soon"), []string{"chat", "hi"}, `TRACT_TIMEOUT: "soon" is not a timeout`},
		{s, []string{"config", "set", "timeout", "soon"}, `config: timeout: "soon" is not a timeout`},
	} {
		r := tc.s.tract(tc.args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, tc.stderr)
	}
	assert.Empty(t, srv.Requests())
	s.ok("config", "set", "timeout", "90")
	assert.Equal(t, "90\n", s.ok("config", "get", "timeout").Stdout)
}
