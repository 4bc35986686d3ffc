package repl_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/repl"
)

const testKey = "sk-test-0123456789abcdef"

// harness is a session on a fresh repository whose model is an llmtest
// server; configure adjusts the session's Config.
type harness struct {
	t   *testing.T
	tr  *tract.Tract
	srv *llmtest.Server
	s   *repl.Session
	out *bytes.Buffer
	dir string
	// clientErr, when set, is what the session's Client returns.
	clientErr error
}

func newHarness(t *testing.T, configure ...func(*repl.Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	tr, err := tract.Init(filepath.Join(dir, "tract.db"), tract.WithNoSync())
	require.NoError(t, err)
	h := &harness{t: t, tr: tr, srv: llmtest.NewServer(t, llmtest.WithAPIKey(testKey)), out: &bytes.Buffer{}, dir: dir}
	t.Cleanup(func() {
		rep, err := h.tr.Fsck(context.Background())
		if assert.NoError(t, err) {
			assert.True(t, rep.OK(), "fsck: %v", rep.Problems)
		}
		assert.NoError(t, h.tr.Close())
	})
	client, err := llm.NewOpenAI(llm.WithBaseURL(h.srv.URL()), llm.WithAPIKey(testKey), llm.WithModel("m"),
		llm.WithMaxRetries(0), llm.WithSleep(func(context.Context, time.Duration) error { return nil }))
	require.NoError(t, err)
	cfg := repl.Config{
		Tract: tr, Model: "m", Provider: "openai", Out: h.out,
		Client: func(string) (llm.Client, error) {
			if h.clientErr != nil {
				return nil, h.clientErr
			}
			return client, nil
		},
		Redact: func(s string) string { return strings.ReplaceAll(s, testKey, "[REDACTED]") },
	}
	for _, c := range configure {
		c(&cfg)
	}
	h.s = repl.New(cfg)
	return h
}

// do runs lines, each of which must succeed.
func (h *harness) do(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		require.NoError(h.t, h.s.Handle(context.Background(), l), "line %q", l)
	}
}

// fail runs line and returns its error, which must not be nil.
func (h *harness) fail(line string) error {
	h.t.Helper()
	err := h.s.Handle(context.Background(), line)
	require.Error(h.t, err, "line %q", line)
	return err
}

// shape is the branch as "role kind text", oldest first.
func (h *harness) shape() []string {
	h.t.Helper()
	cs, err := h.tr.Log(context.Background())
	require.NoError(h.t, err)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[len(cs)-1-i] = string(c.Role) + " " + string(c.Kind) + " " + c.Text
	}
	return out
}

func (h *harness) head() tract.Hash {
	h.t.Helper()
	_, hd, err := h.tr.Head(context.Background())
	require.NoError(h.t, err)
	return hd
}

// lastRequest is the messages of the server's last request, as "role: content".
func (h *harness) lastRequest() []string {
	h.t.Helper()
	reqs := h.srv.Requests()
	require.NotEmpty(h.t, reqs)
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

// The three shapes of the last interaction: /retry replaces each, the model
// sees the base and the new message only, and /apply moves the branch in
// one reflog entry that names the attempt and what it replaced.
func TestRetry_ReplacesEachShapeOfTheLastInteraction(t *testing.T) {
	cases := []struct {
		name  string
		setup func(h *harness)
		shape string
	}{
		{"user and answer", func(h *harness) {
			h.srv.Reply(llmtest.Answer("bad answer"))
			h.do("question")
		}, "message and answer"},
		{"user and error", func(h *harness) {
			h.srv.Reply(llmtest.Error(404, "no such model"))
			h.fail("question")
		}, "message and error"},
		{"standalone error", func(h *harness) {
			h.clientErr = errors.New("no model: set TRACT_MODEL or pass --model")
			h.fail("question")
			h.clientErr = nil
		}, "error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Reply(llmtest.Answer("first answer"))
			h.do("first")
			base := h.head()
			c.setup(h)
			replaced, target := h.shape()[2], h.head()

			h.do("/retry")
			assert.Contains(t, h.out.String(), "replacing the "+c.shape)
			h.srv.Reply(llmtest.Answer("answer one"), llmtest.Answer("answer two"))
			h.do("try one", "try two")
			assert.Equal(t, []string{"user: first", "assistant: first answer", "user: try two"}, h.lastRequest(),
				"base + the new message only")
			assert.Equal(t, target, h.head(), "attempts do not move the branch")
			assert.Contains(t, h.out.String(), "attempt on "+base.Short())

			h.do("/apply")
			assert.Equal(t, []string{"user message first", "assistant message first answer",
				"user message try two", "assistant message answer two"}, h.shape())
			assert.Equal(t, "normal", h.s.Mode())
			log, err := h.tr.Reflog(context.Background(), "HEAD")
			require.NoError(t, err)
			assert.Equal(t, repl.ActionApply, log[0].Action)
			assert.Contains(t, log[0].Message, "replaced the "+c.shape)
			assert.Regexp(t, `^apply: attempt [0-9a-f]+ replaced`, log[0].Message)
			assert.Contains(t, h.out.String(), "applied ")

			// The replaced interaction and both attempts stay listed.
			all, err := h.tr.LogAll(context.Background())
			require.NoError(t, err)
			var orphans []string
			for _, ch := range all.Orphans {
				for _, ci := range ch.Commits {
					orphans = append(orphans, string(ci.Role)+" "+string(ci.Kind)+" "+ci.Text)
				}
			}
			assert.Contains(t, orphans, replaced)
			assert.Contains(t, orphans, "user message try one")
			assert.Contains(t, orphans, "assistant message answer one")
		})
	}
}

// /apply ID picks an attempt by the id shown before its answer.
func TestApply_ByID(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a0"), llmtest.Answer("a1"), llmtest.Answer("a2"))
	h.do("q", "/retry", "one")
	first := regexp.MustCompile(`\[attempt ([0-9a-f]+)\]`).FindStringSubmatch(h.out.String())[1]
	h.do("two", "/apply "+first[:7])
	assert.Equal(t, []string{"user message one", "assistant message a1"}, h.shape())
	assert.Contains(t, h.out.String(), "applied "+first)
}

func TestRetry_NothingToRetry(t *testing.T) {
	h := newHarness(t)
	assert.ErrorIs(t, h.fail("/retry"), repl.ErrNothingToRetry, "empty branch")
	_, err := h.tr.Note(context.Background(), "a note")
	require.NoError(t, err)
	err = h.fail("/retry")
	assert.ErrorIs(t, err, repl.ErrNothingToRetry)
	assert.Contains(t, err.Error(), "system note")
	assert.Equal(t, "normal", h.s.Mode())
}

// A branch that ends in a user message with no answer or error after it
// has nothing for /retry to replace: an *UnansweredError that names the
// message.
func TestRetry_UnansweredMessage(t *testing.T) {
	h := newHarness(t)
	user, err := h.tr.Commit(context.Background(), tract.KindMessage, tract.RoleUser, "asked, never answered")
	require.NoError(t, err)
	err = h.fail("/retry")
	var unanswered *repl.UnansweredError
	require.ErrorAs(t, err, &unanswered)
	assert.Equal(t, user, unanswered.User)
	assert.ErrorIs(t, err, repl.ErrNothingToRetry)
	assert.Equal(t, "nothing to retry: the branch ends in the user message "+user.Short()+", with no answer or error to replace", err.Error())
	assert.Equal(t, "normal", h.s.Mode())
}

// /rewind drops a lone user message (a turn that ended before its answer
// or error), after yes, where /retry has nothing to replace; a branch
// that ends in no interaction has nothing to rewind, said as such (not
// "nothing to retry").
func TestRewind_LoneUserMessage(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	sys, err := h.tr.Commit(ctx, tract.KindMessage, tract.RoleSystem, "be terse")
	require.NoError(t, err)
	user, err := h.tr.Commit(ctx, tract.KindMessage, tract.RoleUser, "asked, never answered")
	require.NoError(t, err)
	h.do("/rewind")
	assert.Contains(t, h.out.String(), "rewind moves the branch from "+user.Short()+" back to "+sys.Short()+", dropping the message "+user.Short()+".\n")
	assert.Equal(t, repl.RewindQuestion+" ", h.s.Prompt(ctx), "the prompt asks, once")
	assert.NotContains(t, h.out.String(), "Type yes")
	h.do("yes")
	assert.Equal(t, sys, h.head())
	assert.Contains(t, h.out.String(), "rewound to "+sys.Short()+"; to undo: tract reset --soft "+user.Short())

	err = h.fail("/rewind")
	assert.ErrorIs(t, err, repl.ErrNothingToRewind)
	assert.NotErrorIs(t, err, repl.ErrNothingToRetry)
	assert.Contains(t, err.Error(), "nothing to rewind: ")
	assert.Contains(t, err.Error(), "/rewind ID drops the commits from ID on")
}

// Each edge case of /apply has its own error and changes nothing.
func TestApply_EdgeCases(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		apply string
		want  error
	}{
		{"not in retry mode", nil, "/apply", repl.ErrNotRetrying},
		{"no attempts yet", []string{"/retry"}, "/apply", repl.ErrNoAttempts},
		{"non-hex id", []string{"/retry", "again"}, "/apply xyz", repl.ErrBadAttemptID},
		{"unknown id", []string{"/retry", "again"}, "/apply 0000000", repl.ErrUnknownAttempt},
		{"branch moved since /retry", []string{"/retry", "again", "moved"}, "/apply", repl.ErrBranchMoved},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Otherwise(llmtest.Answer("fine"))
			h.do("q")
			for _, l := range c.lines {
				if l == "moved" { // another process commits
					_, err := h.tr.User(context.Background(), "from elsewhere")
					require.NoError(t, err)
					continue
				}
				h.do(l)
			}
			before, shape := h.head(), h.shape()
			err := h.fail(c.apply)
			assert.ErrorIs(t, err, c.want)
			assert.Equal(t, before, h.head())
			assert.Equal(t, shape, h.shape())
		})
	}
}

func TestCancel_LeavesRetryModeAndKeepsAttempts(t *testing.T) {
	h := newHarness(t)
	h.srv.Otherwise(llmtest.Answer("fine"))
	h.do("q")
	before := h.head()
	h.do("/retry", "attempt text", "/cancel")
	assert.Equal(t, "normal", h.s.Mode())
	assert.Equal(t, before, h.head())
	assert.ErrorIs(t, h.fail("/cancel"), repl.ErrNotRetrying)
	all, err := h.tr.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Contains(t, all.Orphans[0].Reason, "retry: attempt")
}

// A pending error refuses normal messages, and says how to go on, but not
// retry or secret messages.
func TestPendingError_BlocksNormalSendsOnly(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a"), llmtest.Error(404, "gone"))
	h.do("one")
	h.fail("two")
	assert.Contains(t, h.s.Prompt(context.Background()), "[error ")
	err := h.fail("three")
	assert.ErrorIs(t, err, repl.ErrPendingError)
	assert.Contains(t, err.Error(), "/retry")
	assert.Contains(t, err.Error(), "/rewind")
	n := len(h.srv.Requests())

	h.srv.Reply(llmtest.Answer("secret answer"))
	h.do("/secret on", "secret q", "/secret off")
	h.srv.Reply(llmtest.Answer("retried"))
	h.do("/retry", "three again", "/apply")
	assert.Len(t, h.srv.Requests(), n+2)
	assert.Equal(t, []string{"user message one", "assistant message a", "user message three again", "assistant message retried"}, h.shape())
	assert.NotContains(t, h.s.Prompt(context.Background()), "[error")
}

// Secret turns see the base and the secret turns before them; leaving
// secret mode forgets them, and the next turn sees the branch only.
func TestSecret_ContextAndLeaving(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a0"))
	h.do("hello")
	before, shape := h.head(), h.shape()
	h.srv.Reply(llmtest.Answer("s1"), llmtest.Answer("s2"))
	h.do("/secret on", "secret one")
	assert.Equal(t, []string{"user: hello", "assistant: a0", "user: secret one"}, h.lastRequest())
	// Another process's commit after /secret on is not in the frozen base.
	_, err := h.tr.Note(context.Background(), "elsewhere")
	require.NoError(t, err)
	h.do("secret two")
	assert.Equal(t, []string{"user: hello", "assistant: a0", "user: secret one", "assistant: s1", "user: secret two"}, h.lastRequest())
	assert.Equal(t, before, parentOfHead(t, h), "nothing of the secret turns is on the branch")
	h.do("/secret")
	assert.Contains(t, h.out.String(), "secret mode is on")
	h.do("/secret off")
	assert.Contains(t, h.out.String(), "2 secret turns forgotten")
	h.srv.Reply(llmtest.Answer("a1"))
	h.do("back")
	assert.Equal(t, []string{"user: hello", "assistant: a0", "user: back"}, h.lastRequest())
	assert.Equal(t, append(append(shape, "system note elsewhere"), "user message back", "assistant message a1"), h.shape())
}

func parentOfHead(t *testing.T, h *harness) tract.Hash {
	cs, err := h.tr.Log(context.Background(), tract.LogLimit(2))
	require.NoError(t, err)
	return cs[1].Hash
}

// Both ways a secret turn fails (before the send, and the model call)
// write nothing and stop secret sends until /secret off.
func TestSecret_FailuresBlockFurtherSends(t *testing.T) {
	cases := []struct {
		name  string
		setup func(h *harness)
	}{
		{"before the send", func(h *harness) { h.clientErr = errors.New("no model configured") }},
		{"model call", func(h *harness) { h.srv.Reply(llmtest.Error(404, "gone")) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Reply(llmtest.Answer("a0"))
			h.do("hello", "/secret on")
			before := h.head()
			c.setup(h)
			h.fail("secret q")
			h.clientErr = nil
			n := len(h.srv.Requests())
			assert.ErrorIs(t, h.fail("again"), repl.ErrSecretBlocked)
			assert.Len(t, h.srv.Requests(), n, "no send while blocked")
			assert.Equal(t, before, h.head())
			h.srv.Reply(llmtest.Answer("s"))
			h.do("/secret off", "/secret on", "works again")
			assert.Equal(t, before, h.head())
		})
	}
}

// Secret mode writes nothing: a marker typed and answered in secret is
// nowhere in the repository file or its directory afterwards.
func TestSecret_WritesNothing(t *testing.T) {
	const marker = "ZQX-SECRET-MARKER-7731"
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a0"))
	h.do("hello")
	h.srv.Reply(llmtest.Answer("echo "+marker), llmtest.Error(404, "refused "+marker))
	h.do("/secret on", "tell me "+marker)
	h.fail("again " + marker)
	h.do("/secret off", "/log", "/status")
	h.srv.Reply(llmtest.Answer("a1"))
	h.do("after")
	require.NoError(t, h.tr.Close())
	err := filepath.WalkDir(h.dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		assert.NotContains(t, d.Name(), marker)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(b, []byte(marker)), "%s holds the marker", p)
		return nil
	})
	require.NoError(t, err)
	tr, err := tract.Open(filepath.Join(h.dir, "tract.db"))
	require.NoError(t, err)
	h.tr = tr // for the cleanup's fsck
}

func TestModes_AreMutuallyExclusive(t *testing.T) {
	h := newHarness(t)
	h.srv.Otherwise(llmtest.Answer("a"))
	h.do("q", "/retry")
	err := h.fail("/secret on")
	assert.ErrorIs(t, err, repl.ErrModeConflict)
	assert.Contains(t, err.Error(), "retry mode is on")
	h.do("/cancel", "/secret on")
	err = h.fail("/retry")
	assert.ErrorIs(t, err, repl.ErrModeConflict)
	assert.Contains(t, err.Error(), "secret mode is on")
	assert.Equal(t, "secret", h.s.Mode())
}

func TestRewind_NeedsYes(t *testing.T) {
	h := newHarness(t)
	h.srv.Otherwise(llmtest.Answer("a"))
	h.do("one", "two", "three")
	before, shape := h.head(), h.shape()

	h.do("/rewind", "no")
	assert.Contains(t, h.out.String(), "rewind cancelled")
	assert.Equal(t, before, h.head())

	h.do("/rewind")
	assert.Contains(t, h.out.String(), "tract reset --soft "+before.Short())
	assert.Contains(t, h.s.Prompt(context.Background()), "yes")
	h.do("yes")
	assert.Equal(t, shape[:4], h.shape())
	assert.Contains(t, h.out.String(), "to undo: tract reset --soft "+before.Short())
	all, err := h.tr.LogAll(context.Background())
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1, "nothing is deleted")
	assert.Contains(t, all.Orphans[0].Reason, "rewind: dropped the message and answer")

	h.do("/rewind", "/rewind") // the second line answers the confirmation: not yes
	assert.Equal(t, shape[:4], h.shape())
	h.do("/rewind", "yes")
	assert.Equal(t, shape[:2], h.shape())
	first := h.head()
	h.do("/rewind")
	assert.Contains(t, h.out.String(), "back to the start (no commits)")
	h.do("yes")
	assert.Empty(t, h.shape(), "the first interaction is dropped: the branch is unborn again")
	assert.Contains(t, h.out.String(), "rewound to the start (no commits); to undo: tract reset --soft "+first.Short())
	assert.ErrorIs(t, h.fail("/rewind"), repl.ErrNothingToRewind, "nothing is left to rewind")
	assert.ErrorIs(t, h.fail("/rewind "+before.Short()), repl.ErrNothingToRewind, "not on the branch")
}

// The text of a standalone error commit has the API key redacted; its
// metadata names the model and provider.
func TestStandaloneError_RedactsTheKey(t *testing.T) {
	h := newHarness(t)
	h.clientErr = errors.New(`API key "` + testKey + `" has the wrong format`)
	err := h.fail("hello")
	assert.NotContains(t, err.Error(), testKey)
	cs, lerr := h.tr.Log(context.Background())
	require.NoError(t, lerr)
	require.Len(t, cs, 1)
	assert.Equal(t, tract.KindError, cs[0].Kind)
	assert.Contains(t, cs[0].Text, "[REDACTED]")
	assert.NotContains(t, cs[0].Text, testKey)
	assert.NotContains(t, string(cs[0].Meta), testKey)
	assert.Equal(t, "m", cs[0].MetaValue("model"))
	assert.Equal(t, "openai", cs[0].MetaValue("provider"))
}

// A model call that fails with the key echoed back is committed as user
// message + error with the key redacted by the client.
func TestModelError_RedactsTheKey(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Unauthorized())
	h.fail("hello")
	cs, err := h.tr.Log(context.Background())
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, tract.KindError, cs[0].Kind)
	assert.NotContains(t, cs[0].Text+string(cs[0].Meta), testKey)
}

func TestCommands_HelpStatusUnknown(t *testing.T) {
	h := newHarness(t)
	h.do("/help")
	for _, c := range []string{"/retry", "/apply", "/cancel", "/secret", "/rewind", "/log", "/show", "/status", "/model", "/system", "/help", "/exit"} {
		assert.Contains(t, h.out.String(), "  "+c)
	}
	err := h.fail("/frobnicate")
	assert.ErrorIs(t, err, repl.ErrUnknownCommand)
	assert.Contains(t, err.Error(), "/retry /apply")
	assert.ErrorIs(t, h.s.Handle(context.Background(), "/exit"), repl.ErrExit)

	h.srv.Reply(llmtest.Answer("hi there"))
	h.do("/model other", "/system be brief", "hi", "/status", "/log 5")
	assert.Equal(t, "other", h.srv.Requests()[0].Model)
	assert.Equal(t, []string{"system: be brief", "user: hi"}, h.lastRequest())
	out := h.out.String()
	assert.Contains(t, out, "branch: main at ")
	assert.Contains(t, out, "mode: normal")
	assert.Contains(t, out, "model: other")
	assert.Contains(t, out, "context: 3 messages")
	assert.Contains(t, out, "assistant message  hi there")
	cs, err := h.tr.Log(context.Background())
	require.NoError(t, err)
	h.do("/show " + cs[0].Hash.Short())
	assert.Contains(t, h.out.String(), "commit "+cs[0].Hash.String())
}

// Run reads lines from a reader: a trailing backslash continues a
// message, errors are printed, each with the advice Config.Hint gives for
// it, and the session goes on.
func TestRun_Scripted(t *testing.T) {
	h := newHarness(t, func(c *repl.Config) {
		c.Hint = func(err error) string {
			if errors.Is(err, repl.ErrNotRetrying) {
				return "(the hint of not retrying)"
			}
			return ""
		}
	})
	h.srv.Reply(llmtest.Answer("a0"), llmtest.Answer("a1"))
	var errOut bytes.Buffer
	err := h.s.Run(context.Background(), strings.NewReader("line one\\\nline two\n/nope\n/retry\nagain\n/apply\n/apply\n/exit\nnever sent\n"), &errOut)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	require.Len(t, lines, 3, errOut.String())
	assert.True(t, strings.HasPrefix(lines[0], "error: unknown command /nope"), "no hint for it: %q", lines[1])
	assert.True(t, strings.HasPrefix(lines[1], "error: not in retry mode"), lines[1])
	assert.Equal(t, "(the hint of not retrying)", lines[2])
	assert.Equal(t, "line one\nline two", h.srv.Requests()[0].LastMessage())
	assert.Equal(t, []string{"user message again", "assistant message a1"}, h.shape())
}

// /status and /model show the model the turns ask: the client's default
// when no model was named (TRACT_MODEL, a setting), with where it comes
// from, and the one /model chose after it.
func TestSession_ShowsTheModelInUse(t *testing.T) {
	h := newHarness(t, func(c *repl.Config) { c.Model, c.ModelOrigin = "", "TRACT_MODEL" })
	h.do("/status", "/model")
	assert.Equal(t, 2, strings.Count(h.out.String(), "model: m (from TRACT_MODEL)\n"), h.out.String())
	assert.NotContains(t, h.out.String(), "the client's default")

	h.out.Reset()
	h.do("/model other", "/status")
	assert.Equal(t, 2, strings.Count(h.out.String(), "model: other (from /model)\n"), h.out.String())
}

// Without a prompt (Run), a /rewind waiting for its answer asks its
// question once, after what it would do.
func TestRun_ScriptedRewindAsksOnce(t *testing.T) {
	h := newHarness(t)
	h.srv.Reply(llmtest.Answer("a0"))
	var errOut bytes.Buffer
	require.NoError(t, h.s.Run(context.Background(), strings.NewReader("hi\n/rewind\nyes\n"), &errOut))
	assert.Empty(t, errOut.String())
	assert.Equal(t, 1, strings.Count(h.out.String(), "?"), h.out.String())
	assert.Contains(t, h.out.String(), "undoes it.\n"+repl.RewindQuestion+" rewound to the start (no commits)")
	assert.Empty(t, h.shape())
}

// Counts agree with their nouns and verbs: "the attempt stays", "the 2
// attempts stay", "1 attempt on", "1 message".
func TestSession_CountsAgree(t *testing.T) {
	h := newHarness(t)
	h.srv.Otherwise(llmtest.Answer("a"))
	h.do("q", "/retry", "one", "/status")
	assert.Contains(t, h.out.String(), "mode: retry (1 attempt on ")
	h.do("/cancel")
	assert.Contains(t, h.out.String(), "left retry mode; the branch is unchanged (the attempt stays in 'tract log --all')\n")
	h.out.Reset()
	h.do("/retry", "/cancel")
	assert.Contains(t, h.out.String(), "left retry mode; the branch is unchanged\n", "no attempt: nothing to say about them")
	h.do("/retry", "one", "two", "/retry")
	assert.Contains(t, h.out.String(), "retry: attempts start again (the 2 attempts so far stay in 'tract log --all')\n")
	h.do("three", "/retry")
	assert.Contains(t, h.out.String(), "retry: attempts start again (the attempt so far stays in 'tract log --all')\n")
	h.do("/cancel", "/rewind", "yes", "/status")
	assert.Contains(t, h.out.String(), "context: 0 messages, about 0 tokens\n")
}

// /log hands each line to Config.FitLine (the command line cuts it to the
// terminal's width) and prints what it returns.
func TestLog_FitLine(t *testing.T) {
	h := newHarness(t, func(c *repl.Config) {
		c.FitLine = func(s string) string { return "[" + s[:13] + "]" }
	})
	_, err := h.tr.Commit(context.Background(), tract.KindMessage, tract.RoleUser, strings.Repeat("long text ", 20))
	require.NoError(t, err)
	h.do("/log")
	assert.Regexp(t, `^\[[0-9a-f]{8} user\]\n$`, h.out.String())
}
