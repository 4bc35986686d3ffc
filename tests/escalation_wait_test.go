package tests

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/store/storetest"
)

// listedEscalation is what 'tract escalations --json' says of one.
type listedEscalation struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Branch string `json:"branch"`
	Task   string `json:"task"`
	Answer *struct {
		Resolution  string `json:"resolution"`
		Instruction string `json:"instruction"`
		By          string `json:"by"`
	} `json:"answer"`
}

// escalations runs 'tract escalations --json'.
func escalations(t *testing.T, s *sandbox) []listedEscalation {
	t.Helper()
	var es []listedEscalation
	require.NoError(t, json.Unmarshal([]byte(s.ok("escalations", "--json").Stdout), &es))
	return es
}

// awaitEscalation waits until a process's turn has recorded its
// escalation, and returns it.
func awaitEscalation(t *testing.T, s *sandbox) listedEscalation {
	t.Helper()
	var es []listedEscalation
	require.Eventually(t, func() bool {
		es = escalations(t, s)
		return len(es) > 0
	}, commandTimeout, 10*time.Millisecond, "no escalation was recorded")
	require.Len(t, es, 1)
	return es[0]
}

// waitingChat is the chat of process A: two attempts per round, each
// escalation waiting in the repository.
var waitingChat = []string{"chat", "--validate", "json", "--max-attempts", "2", "--task", "nightly-1", "--on-exhausted", "wait", "List three numbers as JSON"}

// Process A's chat escalates and waits; process B lists the escalation
// and answers "fix: use integers"; A's next attempt carries the fix, and A
// ends accepted; stats and events say B answered.
func TestEscalation_AnsweredByAnotherProcess(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("one, two, three"), llmtest.Answer("1.5, 2.5, 3.5"))
	srv.When("use integers", llmtest.Answer("[1, 2, 3]"))
	s := chatEnv(newSandbox(t), srv).withEnv("TRACT_ESCALATION_POLL", "5ms")
	s.initRepo()

	a := s.start(waitingChat...)
	e := awaitEscalation(t, s)
	assert.Equal(t, "pending", e.State)
	assert.Equal(t, "main", e.Branch)
	assert.Equal(t, "nightly-1", e.Task)
	list := s.ok("escalations").Stdout
	assert.Contains(t, list, e.ID+"  pending  main")
	assert.Contains(t, list, "max_retries_exceeded")
	assert.Contains(t, s.ok("escalation", "show", e.ID).Stdout, "Attempt history:")

	b := s.ok("escalation", "answer", e.ID, "fix: use integers", "--by", "process-b")
	assert.Contains(t, b.Stderr, "answered escalation "+e.ID+": fix: use integers (by process-b)")

	r := a.wait()
	requireExit(t, r, exitOK)
	assert.Equal(t, "[1, 2, 3]\n", r.Stdout)
	assert.Contains(t, r.Stderr, "escalation "+e.ID+" is in the repository")
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, reqs[2].LastMessage(), "USER INTERVENTION (high priority)")
	assert.Contains(t, reqs[2].LastMessage(), "use integers")
	assert.NotContains(t, reqs[1].LastMessage(), "use integers")

	assert.Empty(t, escalations(t, s), "the turn took the answer up")
	var stats struct {
		AnsweredBy map[string]int `json:"answered_by"`
	}
	require.NoError(t, json.Unmarshal([]byte(s.ok("stats", "--json").Stdout), &stats))
	assert.Equal(t, map[string]int{"process-b": 1}, stats.AnsweredBy)
	assert.Regexp(t, `(?m)^Answered by +process-b 1$`, s.ok("stats").Stdout)
	events := s.ok("events", "--format", "text").Stdout
	assert.Contains(t, events, `user_response="fix" escalation=`+e.ID+` answered_by="process-b"`)
	assert.Contains(t, events, "resolved status=success attempts=3")

	// A late answer is refused, naming the answer the turn went on with.
	late := s.tract("escalation", "answer", e.ID, "skip")
	requireExit(t, late, exitConflict)
	assert.Contains(t, late.Stderr, `was answered already: "fix: use integers" by process-b`)
	assert.Contains(t, late.Stderr, "its turn has gone on with the first")
}

// Two processes answer one escalation at once: one answer wins, the other
// gets a conflict that names it.
func TestEscalation_TwoAnswersOneWins(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("not JSON"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	r := s.tract("chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "Say it in JSON")
	requireExit(t, r, exitWaiting)
	e := awaitEscalation(t, s)
	assert.Contains(t, r.Stderr, "tract escalation answer "+e.ID)
	assert.Contains(t, r.Stderr, "tract chat --resume "+e.ID)

	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, answer := range [][]string{{"retry", "--by", "first"}, {"abort", "--by", "second"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.start(append([]string{"escalation", "answer", e.ID}, answer...)...).wait()
		}()
	}
	wg.Wait()
	var won, lost []result
	for _, r := range results {
		if r.Code == exitOK {
			won = append(won, r)
		} else {
			lost = append(lost, r)
		}
	}
	require.Len(t, won, 1, "%v", results)
	require.Len(t, lost, 1, "%v", results)
	requireExit(t, lost[0], exitConflict)
	e = escalations(t, s)[0]
	require.NotNil(t, e.Answer)
	assert.Equal(t, "answered", e.State)
	assert.Contains(t, lost[0].Stderr, "escalation "+e.ID+" was answered already: \""+e.Answer.Resolution+"\" by "+e.Answer.By)
	assert.Contains(t, won[0].Stderr, "(by "+e.Answer.By+")")
}

// A process killed while its escalation waits leaves the escalation and
// the branch as they were; 'tract chat --resume ID' finishes the turn,
// with the escalation's validators and attempts per round.
func TestEscalation_ResumeAfterTheWaitingProcessIsKilled(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("one"), llmtest.Answer("two"), llmtest.Answer("three"), llmtest.Answer("[1, 2, 3]"))
	s := chatEnv(newSandbox(t), srv).withEnv("TRACT_ESCALATION_POLL", "5ms")
	s.initRepo()

	a := s.start(waitingChat...)
	e := awaitEscalation(t, s)
	require.NoError(t, a.cmd.Process.Kill())
	a.wait()
	assert.Equal(t, "pending", escalations(t, s)[0].State, "a killed process leaves the escalation pending")

	// Resuming before the answer waits for it; with exit it says so.
	early := s.tract("chat", "--resume", e.ID, "--on-exhausted", "exit")
	requireExit(t, early, exitWaiting)

	s.ok("escalation", "answer", e.ID, "retry")
	r := s.tract("chat", "--resume", e.ID)
	requireExit(t, r, exitOK)
	assert.Equal(t, "[1, 2, 3]\n", r.Stdout)
	assert.Contains(t, r.Stderr, "escalation "+e.ID+" answered \"retry\" by ")
	assert.Contains(t, r.Stderr, "attempt 3/4: failed", "the escalation's validator judged the resumed round")
	assert.Contains(t, r.Stderr, "attempt 4/4: passed")
	assert.Contains(t, r.Stderr, "accepted after 4 attempts; purified 3 failed attempts off the branch")
	require.Len(t, srv.Requests(), 4)

	log := s.log()
	require.Len(t, log, 2, "the branch keeps the message and the accepted answer")
	assert.Equal(t, "[1, 2, 3]", log[0].Text)
	assert.Empty(t, escalations(t, s))

	again := s.tract("chat", "--resume", e.ID)
	requireExit(t, again, exitConflict)
	assert.Contains(t, again.Stderr, "its turn has gone on with the answer already")
	assert.True(t, strings.Contains(s.ok("events", "--format", "text").Stdout, "resolved status=success attempts=4"))
}

// A pending escalation is a ref like any other to the rest of tract: fsck
// finds it sound, gc keeps it (and the attempt under it) however old,
// 'tract branch' lists no such ref, and its reflog tells its story.
func TestEscalation_PendingAmongTheOtherCommands(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("not JSON"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	requireExit(t, s.tract("chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "Say it in JSON"), exitWaiting)
	e := awaitEscalation(t, s)
	for _, args := range [][]string{{"chat", "--resume", ""}, {"escalation", "show", ""}, {"escalation", "answer", ""}} {
		got, _ := s.complete(args...)
		assert.Equal(t, []string{e.ID}, got, "completion of %v", args)
	}
	got, _ := s.complete("escalation", "answer", e.ID, "")
	assert.Equal(t, []string{"retry", "skip", "abort", "fix"}, got)
	assert.Contains(t, s.ok("reflog", "refs/escalations/"+e.ID).Stdout, "escalation: max_retries_exceeded after 1 attempts, waiting for an answer")
	// The message and the attempt are on no branch any more: only the
	// escalation's ref keeps them.
	s.ok("reset", "--unborn")

	s.ok("gc", "--expire", "now")
	s.ok("fsck")
	assert.NotContains(t, s.ok("branch").Stdout, e.ID, "an escalation is no branch")
	show := s.ok("escalation", "show", e.ID).Stdout
	assert.Contains(t, show, "Last answer:\n  not JSON")
	assert.Contains(t, show, "Answer with: tract escalation answer "+e.ID)
	all := s.ok("log", "--all").Stdout
	assert.Contains(t, all, "Say it in JSON", "gc kept the turn under the pending escalation")
}

// A new message on a branch whose last commit an escalation waits on is
// warned about, and sent.
func TestEscalation_NewMessageWarnsOfAWaitingEscalation(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("not JSON"), llmtest.Answer("fine"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	requireExit(t, s.tract("chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "Say it in JSON"), exitWaiting)
	e := awaitEscalation(t, s)
	r := s.ok("chat", "Something else")
	assert.Contains(t, r.Stderr, "warning: escalation "+e.ID+" (pending) waits on the branch's last commit")
	assert.Equal(t, "fine\n", r.Stdout)
	requireExit(t, s.tract("chat", "--resume", e.ID, "--on-exhausted", "exit"), exitWaiting)
	s.ok("escalation", "answer", e.ID, "retry")
	moved := s.tract("chat", "--resume", e.ID)
	requireExit(t, moved, exitConflict)
	assert.Contains(t, moved.Stderr, "branch main moved from")
	assert.Contains(t, moved.Stderr, "the escalation note was kept off the branch")
	// The escalation stays answered: with the branch back at the turn's
	// last attempt, the resume goes on.
	assert.Equal(t, "answered", escalations(t, s)[0].State)
	s.ok("reset", "--soft", "HEAD~2")
	srv.Reply(llmtest.Answer(`"fine"`))
	r = s.ok("chat", "--resume", e.ID)
	assert.Equal(t, "\"fine\"\n", r.Stdout)
	assert.Empty(t, escalations(t, s))
}

// A waiting chat outlasts another process that holds the repository
// longer than the lock timeout: a look that finds it locked is no
// failure, and the next one finds the answer.
func TestEscalation_WaitOutlastsALockedRepository(t *testing.T) {
	fileOnly(t, "the file lock")
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("no"))
	srv.When("failed validation", llmtest.Answer("[1, 2, 3]"))
	s := chatEnv(newSandbox(t), srv).withEnv("TRACT_ESCALATION_POLL", "5ms", "TRACT_LOCK_TIMEOUT", "20ms")
	db := s.initRepo()
	a := s.start("chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "wait", "List three numbers as JSON")
	// The chat's own line says it waits: other processes looking for the
	// escalation meanwhile would hold the file against the chat's writes,
	// whose 20 ms a loaded machine can miss.
	id := a.awaitStderr(regexp.MustCompile(`waiting for an answer: tract escalation answer (\S+) `))[1]

	release := storetest.HoldWrite(t, openAPI(t, db).Store())
	time.Sleep(150 * time.Millisecond) // a few of the chat's looks find the repository locked
	release()
	// The answer waits for the lock as long as it takes: its 20 ms were
	// the chat's looks' to miss, and a loaded machine can take longer.
	s.withEnv("TRACT_LOCK_TIMEOUT", "10s").ok("escalation", "answer", id, "retry")
	r := a.wait()
	requireExit(t, r, exitOK)
	assert.Equal(t, "[1, 2, 3]\n", r.Stdout)
}
