package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm"
)

// fakeTB records what Verify reports.
type fakeTB struct{ errs []string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func complete(t *testing.T, c llm.Client, last string) string {
	t.Helper()
	resp, err := c.Complete(context.Background(), llm.Request{Messages: userMsg(last)})
	require.NoError(t, err)
	return resp.Content
}

func TestScripted_QueueInOrder(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "first"}).Reply(llm.Reply{Content: "second"})
	assert.Equal(t, "first", complete(t, s, "a"))
	assert.Equal(t, "second", complete(t, s, "b"))
	assert.Equal(t, 0, s.Remaining())

	_, err := s.Complete(context.Background(), llm.Request{Messages: userMsg("c")})
	assert.ErrorContains(t, err, `no scripted reply for request 3 (last message "c")`)
}

// The typical validated-generation script: an invalid answer first, then a
// valid one once the steering message arrives.
func TestScripted_RulesBeforeQueue(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "not json"}).
		When("failed validation", llm.Reply{Content: `{"ok":true}`})

	assert.Equal(t, "not json", complete(t, s, "give me JSON"))
	assert.Equal(t, `{"ok":true}`, complete(t, s, "Your previous response failed validation: …"))
	assert.Equal(t, `{"ok":true}`, complete(t, s, "failed validation again"), "rules answer more than once")

	tb := &fakeTB{}
	s.Verify(tb)
	assert.Empty(t, tb.errs)
}

func TestScripted_FirstMatchingRuleWins(t *testing.T) {
	s := llm.NewScripted().
		When("b", llm.Reply{Content: "rule b"}).
		When("abc", llm.Reply{Content: "rule abc"}).
		Otherwise(llm.Reply{Content: "fallback"})
	assert.Equal(t, "rule b", complete(t, s, "abc"))
	assert.Equal(t, "fallback", complete(t, s, "xyz"))
}

func TestScripted_ReturnsScriptedErrors(t *testing.T) {
	want := &llm.ServerError{APIError: llm.APIError{StatusCode: 503, Attempts: 5}}
	s := llm.NewScripted(llm.Reply{Err: want})
	_, err := s.Complete(context.Background(), llm.Request{Messages: userMsg("x")})
	var se *llm.ServerError
	require.ErrorAs(t, err, &se)
	assert.Same(t, want, se)
}

func TestScripted_StreamsInPieces(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "héllo wörld"})
	var pieces []string
	resp, err := s.Complete(context.Background(), llm.Request{Messages: userMsg("x"), OnDelta: func(d string) { pieces = append(pieces, d) }})
	require.NoError(t, err)
	assert.Len(t, pieces, 3)
	assert.Equal(t, "héllo wörld", strings.Join(pieces, ""))
	assert.Equal(t, "héllo wörld", resp.Content)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Equal(t, "scripted", resp.Model)
	assert.Positive(t, resp.Usage.TotalTokens, "estimated")
}

func TestScripted_RecordsRequests(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "a", Usage: llm.Usage{TotalTokens: 42}})
	msgs := userMsg("question")
	temp := 0.5
	resp, err := s.Complete(context.Background(), llm.Request{Model: "m", Messages: msgs, Temperature: &temp})
	require.NoError(t, err)
	assert.Equal(t, llm.Usage{TotalTokens: 42}, resp.Usage)
	assert.Equal(t, "m", resp.Model)
	msgs[1].Content = "changed by the caller"

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "question", reqs[0].Messages[1].Content, "the record is a copy")
	assert.Equal(t, "m", reqs[0].Model)
	assert.Equal(t, &temp, reqs[0].Temperature)
}

func TestScripted_VerifyReportsLeftovers(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "used"}, llm.Reply{Content: "unused"}).When("never", llm.Reply{})
	complete(t, s, "x")
	_, _ = s.Complete(context.Background(), llm.Request{Messages: userMsg("y")}) // consumes "unused"
	_, err := s.Complete(context.Background(), llm.Request{Messages: userMsg("z")})
	require.Error(t, err)

	tb := &fakeTB{}
	s.Verify(tb)
	assert.Equal(t, []string{
		`llm.Scripted: rule When("never") never matched`,
		`llm.Scripted: unscripted request, last message "z"`,
	}, tb.errs)

	tb = &fakeTB{}
	llm.NewScripted(llm.Reply{Content: "left"}).Verify(tb)
	assert.Equal(t, []string{`llm.Scripted: reply "left" was never consumed`}, tb.errs)
}

func TestScripted_DelayHonoursContext(t *testing.T) {
	s := llm.NewScripted(llm.Reply{Content: "slow", Delay: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := s.Complete(ctx, llm.Request{Messages: userMsg("x")})
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
}

func TestScripted_ConcurrentUse(t *testing.T) {
	s := llm.NewScripted().Otherwise(llm.Reply{Content: "x"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := s.Complete(context.Background(), llm.Request{Messages: userMsg("q")})
			assert.NoError(t, err)
			_ = s.Requests()
		})
	}
	wg.Wait()
	assert.Len(t, s.Requests(), 8)
}
