package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// endless is a standard input of 'x' that never ends, counting what it
// gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// tractEndless runs the binary with an endless standard input and returns
// the result and how much of it was written to the process.
func (s *sandbox) tractEndless(args ...string) (result, int64) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd, stdout, stderr := s.command(ctx, nil, args)
	in := &endless{}
	cmd.Stdin = in
	return s.finish(args, cmd.Run(), stdout, stderr), in.n
}

// writeFile writes content to name in the sandbox and returns its path.
func (s *sandbox) writeFile(name, content string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	require.NoError(s.t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func jsonLine(role, content string) string {
	return fmt.Sprintf("{\"role\":%q,\"content\":%q}\n", role, content)
}

// 'commit' reads standard input up to the limit and stops: an endless
// input is refused, not read to the end.
func TestLimits_CommitFromAnEndlessStdin(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "before")
	before := s.snapshot()

	r, fed := s.tractEndless("commit", "--role", "user")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: standard input is more than 16 MiB, over the message size limit (16 MiB)\n")
	assert.Contains(t, r.Stderr, "Raise the limit with --max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE")
	assert.Less(t, fed, int64(16<<20+1<<20), "the command read the limit and stopped (with pipe and copy buffers)")

	r, _ = s.withEnv("TRACT_MAX_MESSAGE_SIZE", "1KiB").tractEndless("chat")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: standard input is more than 1 KiB, over the message size limit (1 KiB)\n")
	s.requireUnchanged(before)
}

// The message size limit comes from --max-message-size, else
// TRACT_MAX_MESSAGE_SIZE, else 16 MiB; a bad value of either is a usage
// error, not a limit silently ignored.
func TestLimits_MessageSizeSettings(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	text := strings.Repeat("a", 2000)
	small := s.withEnv("TRACT_MAX_MESSAGE_SIZE", "1KiB")
	before := s.snapshot()

	r := small.tract("commit", "--role", "user", "-m", text)
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: commit: the text is 2.0 KiB (2000 bytes), over the message size limit (1 KiB)\n")
	assert.Contains(t, r.Stderr, "--max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE (for example --max-message-size 64MiB)")
	r = small.tractStdin(text, "commit", "--role", "user")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: standard input is more than 1 KiB, over the message size limit (1 KiB)\n")
	r = s.tract("--max-message-size", "1000", "commit", "--role", "user", "-m", text)
	requireExit(t, r, exitUsage)
	s.requireUnchanged(before)

	small.ok("--max-message-size", "2000", "commit", "--role", "user", "-m", text) // the flag wins
	small.okStdin(text, "--max-message-size", "4KiB", "commit", "--role", "user")
	assert.Len(t, s.log(), 2)

	for _, tc := range []struct {
		s    *sandbox
		args []string
		err  string
	}{
		{s, []string{"--max-message-size", "lots", "log"}, `tract: --max-message-size "lots" is not a size: give bytes, or a number with a unit such as 512KiB, 64MiB or 1GiB`},
		{s, []string{"--max-message-size", "0", "status"}, `tract: --max-message-size "0": a size limit must be 1 byte or more`},
		{s, []string{"--max-message-size", "1.5MiB", "commit", "--role", "user", "-m", "x"}, `"1.5MiB" is not a size`},
		{s.withEnv("TRACT_MAX_MESSAGE_SIZE", "big"), []string{"log"}, `tract: TRACT_MAX_MESSAGE_SIZE="big" is not a size`},
		{s, []string{"import", "--max-input", "-1", "in.jsonl"}, `tract: --max-input "-1" is not a size`},
		{s.withEnv("TRACT_MAX_INPUT", "0B"), []string{"import", "in.jsonl"}, `tract: TRACT_MAX_INPUT="0B": a size limit must be 1 byte or more`},
	} {
		r := tc.s.tract(tc.args...)
		requireExit(t, r, exitUsage)
		assert.Contains(t, r.Stderr, tc.err, "%v", tc.args)
		if strings.HasPrefix(tc.err, "tract: TRACT_") {
			// The variable is wrong, not the command line.
			assert.Contains(t, r.Stderr, "comes from your environment: fix it", "%v", tc.args)
			assert.NotContains(t, r.Stderr, "--help' for usage.", "%v", tc.args)
		} else {
			assert.Contains(t, r.Stderr, "--help' for usage.", "%v", tc.args)
		}
	}
}

// Every import over a limit, or with text that is not UTF-8, is refused
// with the message and its line, exit 2, and leaves the repository as it
// was; commit refuses the same text the same way.
func TestLimits_ImportRefusals(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "before")
	before := s.snapshot()
	ok := jsonLine("user", "fine")
	bigMeta := `{"role":"user","content":"x","meta":{"k":"` + strings.Repeat("m", 1<<20) + `"}}` + "\n"
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		in   string
		err  string
		hint string
	}{
		{"a message over the limit", []string{"TRACT_MAX_MESSAGE_SIZE", "1KiB"}, nil, ok + jsonLine("assistant", strings.Repeat("a", 1025)),
			"tract: import: message 2 (line 2): the text is 1.0 KiB (1025 bytes), over the message size limit (1 KiB)\n", "--max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE"},
		{"a message over the flag's limit", nil, []string{"--max-message-size", "100"}, "[" + strings.TrimSpace(ok) + ",\n" + strings.TrimSpace(jsonLine("user", strings.Repeat("a", 101))) + "]",
			"tract: import: message 2 (line 2): the text is 101 B, over the message size limit (100 B)\n", "--max-message-size SIZE"},
		{"metadata over the limit", nil, nil, ok + bigMeta,
			"tract: import: message 2 (line 2): the metadata is 1.0 MiB (1048584 bytes), over the metadata size limit (1 MiB)\n", "Metadata may hold at most 1 MiB"},
		{"a line over the limit", []string{"TRACT_MAX_MESSAGE_SIZE", "1KiB"}, nil, ok + ok + `{"role":"user","content":"` + strings.Repeat("a", 2<<20),
			"tract: import: message 3 (line 3): the line is more than 1.0 MiB, over the line size limit (1.0 MiB)\n", "An import line may hold 4 times the message size limit"},
		{"an array element over the limit", []string{"TRACT_MAX_MESSAGE_SIZE", "1KiB"}, nil, "[\n" + strings.Repeat("  "+strings.TrimSpace(ok)+",\n", 3) + `  {"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]`,
			"tract: import: message 4 (line 5): the array element is more than 1.0 MiB, over the line size limit (1.0 MiB)\n", "--max-message-size SIZE"},
		{"input over the flag's limit", nil, []string{"--max-input", "1KiB"}, strings.Repeat(ok, 100),
			"tract: import: message 32 (line 32): the input is more than 1 KiB, over the input size limit (1 KiB)\n", "--max-input SIZE or TRACT_MAX_INPUT (for example --max-input 16GiB)"},
		{"input over the environment's limit", []string{"TRACT_MAX_INPUT", "100"}, nil, "[" + strings.Repeat(strings.TrimSpace(ok)+",", 10) + strings.TrimSpace(ok) + "]",
			"tract: import: message 4 (line 1): the input is more than 100 B, over the input size limit (100 B)\n", "--max-input SIZE"},
		{"invalid UTF-8 on a line", nil, nil, ok + "{\"role\":\"user\",\"content\":\"caf\xe9\"}\n",
			"tract: import: message 2 (line 2): invalid text: not valid UTF-8 at byte offset 62 of the input\n", ""},
		{"a lone surrogate escape on a line", nil, nil, ok + `{"role":"user","content":"\ud800"}` + "\n",
			"tract: import: message 2 (line 2): invalid text: the escape \\ud800 is half of a UTF-16 surrogate pair, not a character, at byte offset 59 of the input\n", ""},
		{"invalid UTF-8 in an array", nil, nil, "[" + strings.TrimSpace(ok) + ",{\"role\":\"user\",\"content\":\"\xff\"}]",
			"tract: import: message 2 (line 1): invalid text: not valid UTF-8 at byte offset 60 of the input\n", ""},
		{"a lone surrogate escape in an array", nil, nil, "[\n" + strings.TrimSpace(ok) + ",\n" + `{"role":"user","content":"ok \udfff"}` + "\n]",
			"tract: import: message 2 (line 3): invalid text: the escape \\udfff is half of a UTF-16 surrogate pair, not a character, at byte offset 65 of the input\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := s.forTest(t)
			if tc.env != nil {
				s = s.withEnv(tc.env...)
			}
			file := s.writeFile("in.json", tc.in)
			for _, args := range [][]string{{"import", file}, {"import"}} {
				var r result
				if len(args) == 2 {
					r = s.tract(append(tc.args, args...)...)
				} else {
					r = s.tractStdin(tc.in, append(tc.args, args...)...)
				}
				requireExit(t, r, exitUsage)
				assert.Contains(t, r.Stderr, tc.err)
				assert.Contains(t, r.Stderr, tc.hint)
				assert.Contains(t, r.Stderr, "Run 'tract import --help' for usage.")
			}
			s.requireUnchanged(before)
		})
	}
	r := s.tractStdin("caf\xe9", "commit", "--role", "user")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: commit: invalid text: the text is not valid UTF-8 (byte 3)\n", "commit refuses what import refuses")
	// A lone surrogate escape in --meta is said as import says it.
	r = s.tract("commit", "--role", "user", "-m", "x", "--meta", `{"k":"\ud800"}`)
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: commit: metadata must be a JSON object: the escape \\ud800 is half of a UTF-16 surrogate pair, not a character, at byte 6\n")
	s.requireUnchanged(before)
}

// An import refused after many batches (its pack half written) leaves
// nothing behind either: no commits, no unfinished pack.
func TestLimits_ImportRefusedAfterManyBatches(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "before")
	before := s.snapshot()
	path := s.writeLines("big.jsonl", 16_000, 300) // two batches and more
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"role\":\"user\",\"content\":\"bad \xff\"}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := s.tract("import", path)
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: import: message 16001 (line 16001): invalid text: not valid UTF-8")
	s.requireUnchanged(before)
	assert.NotContains(t, s.ok("fsck").Stdout, "unfinished")
}

// A model answer over the message size limit ends the turn like a model
// failure: an error commit that says why, and the remedy on stderr.
func TestLimits_ModelAnswerOverTheLimit(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer(strings.Repeat("very long answer ", 100)))
	s := chatEnv(newSandbox(t), srv).withEnv("TRACT_MAX_MESSAGE_SIZE", "1KiB")
	s.initRepo()

	r := s.tract("chat", "tell me everything")
	requireExit(t, r, exitUsage)
	assert.Contains(t, r.Stderr, "tract: chat: the model's answer (attempt 1) is 1.7 KiB (1700 bytes), over the message size limit (1 KiB)\n")
	assert.Contains(t, r.Stderr, "--max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE")
	log := s.log()
	require.Len(t, log, 2)
	assert.Equal(t, "error", log[0].Kind)
	assert.True(t, strings.HasPrefix(log[0].Text, "model answer refused: the model's answer (attempt 1) is 1.7 KiB"), log[0].Text)
	assert.Equal(t, "tell me everything", log[1].Text)
}

func TestLimits_Help(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	r := s.ok("--help")
	assert.Contains(t, r.Stdout, "--max-message-size SIZE")
	assert.Contains(t, r.Stdout, "(default 16MiB)")
	r = s.ok("import", "--help")
	assert.Contains(t, r.Stdout, "--max-input SIZE")
	assert.Contains(t, r.Stdout, "(default $TRACT_MAX_INPUT, else 4GiB)")
	assert.Contains(t, r.Stdout, "--max-message-size", "the global flag is listed")
	assert.Contains(t, s.ok("help", "commands").Stdout, "The text of one message holds at most 16 MiB")
}
