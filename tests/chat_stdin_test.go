package tests

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// tractStdinFile runs the binary with standard input f (a file, or one
// end of a pipe).
func (s *sandbox) tractStdinFile(f *os.File, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd, stdout, stderr := s.command(ctx, nil, args)
	cmd.Stdin = f
	return s.finish(args, cmd.Run(), stdout, stderr)
}

// Text piped in with a MESSAGE is one user message: the piped text, a
// blank line, then MESSAGE, as llm orders them. Standard input that is
// empty, /dev/null or ignored with --no-stdin adds nothing.
func TestChat_PipedTextBeforeTheMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(s *sandbox) result
		want string
	}{
		{"pipe", func(s *sandbox) result {
			return s.tractStdin("some pasted text\nover two lines\n", "chat", "summarize this")
		},
			"some pasted text\nover two lines\n\nsummarize this"},
		{"file", func(s *sandbox) result {
			f, err := os.Open(s.writeFile("notes.txt", "notes from a file\n\n"))
			require.NoError(s.t, err)
			defer f.Close()
			return s.tractStdinFile(f, "chat", "summarize this")
		}, "notes from a file\n\nsummarize this"},
		{"empty pipe", func(s *sandbox) result { return s.tractStdin("", "chat", "summarize this") }, "summarize this"},
		{"blank pipe", func(s *sandbox) result { return s.tractStdin(" \n\n", "chat", "summarize this") }, "summarize this"},
		{"/dev/null", func(s *sandbox) result { return s.tract("chat", "summarize this") }, "summarize this"},
		{"--no-stdin", func(s *sandbox) result { return s.tractStdin("ignored\n", "chat", "--no-stdin", "summarize this") }, "summarize this"},
		{"dash alone", func(s *sandbox) result { return s.tractStdin("only the piped text\n", "chat", "-") }, "only the piped text"},
		{"no argument", func(s *sandbox) result { return s.tractStdin("only the piped text\n", "chat") }, "only the piped text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Reply(llmtest.Answer("a summary"))
			s := chatEnv(newSandbox(t), srv).forTest(t)
			s.initRepo()

			r := tc.run(s)
			requireExit(t, r, exitOK)
			assert.Equal(t, "a summary\n", r.Stdout)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, 1, userMessages(reqs[0]), "one user message")
			assert.Equal(t, tc.want, reqs[0].LastMessage())
			assert.Equal(t, []string{"a summary", tc.want}, texts(s.log()))
		})
	}
}

// A program that runs tract with a pipe it never closes makes chat wait
// for its end, as llm does; --no-stdin does not read it.
func TestChat_NoStdinIgnoresAnOpenPipe(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("an answer"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close() // open until the test ends: no end of input

	res := s.tractStdinFile(r, "chat", "--no-stdin", "hello")
	requireExit(t, res, exitOK)
	assert.Equal(t, "an answer\n", res.Stdout)
	assert.Equal(t, "hello", srv.Requests()[0].LastMessage())
}

// With no MESSAGE, an empty standard input is no message: a usage error,
// and nothing is written or sent. --no-stdin with no MESSAGE, or with
// "-" or --interactive, which read standard input, is a usage error too.
func TestChat_NoMessageAtAll(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	s.commit("user", "context")
	before := s.snapshot()

	cases := []struct {
		name   string
		run    func() result
		stderr string
	}{
		{"empty pipe", func() result { return s.tractStdin("", "chat") }, "no message: standard input is empty"},
		{"/dev/null", func() result { return s.tract("chat") }, "no message: standard input is empty"},
		{"dash and /dev/null", func() result { return s.tract("chat", "-") }, "no message: standard input is empty"},
		{"--no-stdin", func() result { return s.tractStdin("text\n", "chat", "--no-stdin") }, "--no-stdin ignores standard input"},
		{"--no-stdin and dash", func() result { return s.tractStdin("text\n", "chat", "--no-stdin", "-") }, "which --no-stdin ignores"},
		{"--no-stdin and -i", func() result { return s.tractStdin("text\n", "chat", "--no-stdin", "-i") }, "which --no-stdin ignores"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run()
			requireExit(t, r, exitUsage)
			assert.Contains(t, r.Stderr, tc.stderr)
		})
	}
	assert.Empty(t, srv.Requests())
	s.requireUnchanged(before)
}
