package tract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/tool"
)

// toolModel is an in-process model: each request gets the next of its
// answers, and is kept for the test to inspect.
type toolModel struct {
	mu       sync.Mutex
	answers  []func(req llm.Request) (*llm.Response, error)
	requests []llm.Request
}

func (m *toolModel) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if len(m.answers) == 0 {
		return nil, errors.New("toolModel: no answer left")
	}
	next := m.answers[0]
	m.answers = m.answers[1:]
	return next(req)
}

// say answers text; call answers tool calls, each "name" and its JSON
// arguments, with ids call_N counted from first.
func say(text string) func(llm.Request) (*llm.Response, error) {
	return func(llm.Request) (*llm.Response, error) {
		return &llm.Response{Content: text, Model: chatModel, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}, nil
	}
}

func call(first int, nameArgs ...string) func(llm.Request) (*llm.Response, error) {
	return func(llm.Request) (*llm.Response, error) {
		var calls []llm.ToolCall
		for i := 0; i < len(nameArgs); i += 2 {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("call_%d", first+i/2), Type: "function",
				Function: llm.FunctionCall{Name: nameArgs[i], Arguments: nameArgs[i+1]}})
		}
		return &llm.Response{ToolCalls: calls, Model: chatModel, Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 1, TotalTokens: 6}}, nil
	}
}

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city to look up"`
}

type weather struct {
	City string `json:"city"`
	Sky  string `json:"sky"`
}

// lookupTool is a tool that counts its runs.
func lookupTool(runs *int) tool.Tool {
	return tract.Tool("lookup", "Looks up the weather of a city.", func(_ context.Context, in weatherArgs) (weather, error) {
		*runs++
		if in.City == "Atlantis" {
			return weather{}, errors.New("no such city")
		}
		return weather{City: in.City, Sky: "sunny"}, nil
	})
}

// wireJSON is the JSON of msgs, one per line.
func wireJSON(t *testing.T, msgs []llm.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// roles are the kind/role of cs (newest first, as Log gives them).
func roles(cs []*tract.CommitInfo) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Kind)+"/"+string(c.Role))
	}
	return out
}

// The scenario: the model calls a tool, answers wrongly, is
// steered, calls the tool again and answers well. The branch keeps the
// accepted attempt's tool step; the failed attempt hangs beside it with
// its own.
func TestChatTools_SteeredAnswerKeepsItsToolStepsOnTheBranch(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		call(1, "lookup", `{"city":"Paris"}`),
		say("It is sunny."),
		call(2, "lookup", `{"city":"Paris"}`),
		say(`{"sky":"sunny"}`),
	}}
	tr := newChatTract(t, m)
	ctx := context.Background()
	runs := 0
	res, err := tr.Chat(ctx, "Weather in Paris, as JSON?", tract.Tools(lookupTool(&runs)), tract.Validate(retry.JSON()))
	require.NoError(t, err)

	assert.Equal(t, `{"sky":"sunny"}`, res.Text)
	assert.Equal(t, 2, res.Attempts)
	assert.True(t, res.Purified)
	assert.Equal(t, 2, runs)
	assert.Equal(t, llm.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36}, res.Usage, "every model call counts, tool steps included")

	// Every request offered the tool, its schema inferred from weatherArgs.
	require.Len(t, m.requests, 4)
	for _, req := range m.requests {
		require.Len(t, req.Tools, 1)
		assert.Equal(t, "lookup", req.Tools[0].Name)
		assert.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string","description":"the city to look up"}},"required":["city"],"additionalProperties":false}`,
			string(req.Tools[0].Parameters))
	}
	// The second request carries the call and its result; the third, the
	// failed answer and the steering after it.
	assert.Equal(t, []string{
		`{"role":"user","content":"Weather in Paris, as JSON?"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"city\":\"Paris\"}"}}]}`,
		`{"role":"tool","content":"{\"city\":\"Paris\",\"sky\":\"sunny\"}","tool_call_id":"call_1"}`,
	}, wireJSON(t, m.requests[1].Messages))
	assert.Len(t, m.requests[2].Messages, 5)
	assert.Contains(t, m.requests[2].Messages[4].Content, "failed validation")

	// The branch: user → tool call → tool result → answer.
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	require.Len(t, res.ToolSteps, 1)
	step := res.ToolSteps[0]
	assert.Equal(t, 2, step.Attempt)
	assert.Equal(t, log[2].Hash, step.Commit, "the clean copy on the branch")
	assert.Equal(t, []tract.Hash{log[1].Hash}, step.Results)
	assert.Equal(t, "call_2", step.Calls[0].ID)
	assert.Equal(t, `{"city":"Paris","sky":"sunny"}`, step.Calls[0].Result)

	// Compile gives back the OpenAI shapes exactly.
	msgs, err := tr.Compile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`{"role":"user","content":"Weather in Paris, as JSON?"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{\"city\":\"Paris\"}"}}]}`,
		`{"role":"tool","content":"{\"city\":\"Paris\",\"sky\":\"sunny\"}","tool_call_id":"call_2"}`,
		`{"role":"assistant","content":"{\"sky\":\"sunny\"}"}`,
	}, wireJSON(t, msgs))

	// LogAll shows the attempts, tool steps included, off the branch.
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	orphan := all.Orphans[0]
	assert.Equal(t, "purify", orphan.Action)
	assert.Equal(t, log[3].Hash, orphan.Fork, "the attempts fork from the user message")
	assert.Equal(t, []string{
		"message/assistant", "message/tool", "message/assistant", // attempt 2 and its tool step
		"steering/user",
		"message/assistant", "message/tool", "message/assistant", // attempt 1 and its tool step
	}, roles(orphan.Commits))
	assert.Equal(t, "It is sunny.", orphan.Commits[4].Text)
	assert.Equal(t, map[string]any{"attempt": 1.0, "step": 1.0, "tool": "lookup"}, withoutDuration(orphan.Commits[5].MetaValue("tool_step")))

	// The turn's events count two attempts: tool steps are none.
	evs, err := tr.Events(ctx, tract.EventFilter{})
	require.NoError(t, err)
	var attempts []int
	for _, e := range evs {
		if e.Event == "attempt" {
			attempts = append(attempts, e.Attempt)
		}
	}
	assert.Equal(t, []int{1, 2}, attempts)
	assert.Equal(t, "success", evs[len(evs)-1].Resolution)

	// The branch's last turn is the user message's, answered.
	turn, err := tr.LastTurn(ctx)
	require.NoError(t, err)
	assert.Equal(t, tract.TurnAnswered, turn.State)
	assert.Equal(t, res.User, turn.User)
	assert.Equal(t, 4, turn.Commits)
}

// withoutDuration drops duration_ms from a tool_step record (it is
// measured).
func withoutDuration(v any) any {
	if m, ok := v.(map[string]any); ok {
		delete(m, "duration_ms")
	}
	return v
}

// A validator is given the tool trace of the answer it judges: here it
// rejects an answer that no lookup stands behind.
func TestChatTools_ValidatorSeesTheToolTrace(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		say("Sunny, I guess."),
		call(1, "lookup", `{"city":"Oslo"}`),
		say("Sunny in Oslo."),
	}}
	tr := newChatTract(t, m)
	runs := 0
	var seen [][]tool.Call
	looked := retry.ValidatorFunc("looked-up", func(ctx context.Context, _ string) (bool, string, error) {
		calls := tool.Trace(ctx)
		seen = append(seen, calls)
		if !slices.ContainsFunc(calls, func(c tool.Call) bool { return c.Name == "lookup" && c.Failure == "" }) {
			return false, "call lookup before you answer", nil
		}
		return true, "", nil
	})
	res, err := tr.Chat(context.Background(), "Weather in Oslo?", tract.Tools(lookupTool(&runs)), tract.Validate(looked))
	require.NoError(t, err)
	assert.Equal(t, "Sunny in Oslo.", res.Text)
	assert.Equal(t, []string{"call lookup before you answer"}, res.Diagnoses)
	require.Len(t, seen, 2)
	assert.Empty(t, seen[0])
	require.Len(t, seen[1], 1)
	assert.Equal(t, `{"city":"Oslo","sky":"sunny"}`, seen[1][0].Result)
	assert.Equal(t, []int{0, 1}, []int{res.History[0].ToolSteps, res.History[1].ToolSteps})
}

// A call that cannot run, or whose tool fails, is answered with a text
// that says what was wrong, committed as the call's result; the model
// then answers.
func TestChatTools_BadCallsAreAnsweredWithWhatWasWrong(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		failure          tool.Failure
		result           string
	}{
		{"tool error", "lookup", `{"city":"Atlantis"}`, tool.FailError, "error: lookup failed: no such city"},
		{"missing argument", "lookup", `{}`, tool.FailInvalidArguments,
			"error: the arguments of lookup do not match its schema: 1 schema violation: at root: missing property 'city'. Call it again with arguments that match its parameters."},
		{"wrong type", "lookup", `{"city":3}`, tool.FailInvalidArguments,
			"error: the arguments of lookup do not match its schema: 1 schema violation: at '/city': got number, want string. Call it again with arguments that match its parameters."},
		{"not JSON", "lookup", `{"city":`, tool.FailInvalidArguments,
			"error: the arguments of lookup are not valid JSON (unexpected end of JSON input). Call it again with arguments that match its parameters."},
		{"unknown tool", "forecast", `{"city":"Paris"}`, tool.FailUnknownTool,
			`error: there is no tool named "forecast"; the tools you may call are lookup, clock.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){call(1, tc.tool, tc.args), say("Sorry.")}}
			tr := newChatTract(t, m)
			runs := 0
			clock := tract.Tool("clock", "Tells the time.", func(context.Context, struct{}) (string, error) { return "noon", nil })
			res, err := tr.Chat(context.Background(), "Weather?", tract.Tools(lookupTool(&runs), clock))
			require.NoError(t, err)
			assert.Equal(t, "Sorry.", res.Text)
			require.Len(t, res.ToolSteps, 1)
			c := res.ToolSteps[0].Calls[0]
			assert.Equal(t, tc.failure, c.Failure)
			assert.Equal(t, tc.result, c.Result)
			if tc.failure != tool.FailError {
				assert.Zero(t, runs, "the tool never ran")
			}
			// The model was sent the text as the call's result, and the
			// branch keeps it.
			last := m.requests[1].Messages[2]
			assert.Equal(t, llm.Message{Role: "tool", Content: tc.result, ToolCallID: "call_1"}, last)
			log, err := tr.Log(context.Background())
			require.NoError(t, err)
			assert.Equal(t, []string{"message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
			assert.Equal(t, tc.result, log[1].Text)
			assert.Equal(t, string(tc.failure), log[1].MetaValue("tool_step").(map[string]any)["failure"])
		})
	}
}

// Several calls in one answer all run, in order, and their results are
// committed in that order after the call message.
func TestChatTools_ParallelCallsInOneAnswer(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		call(1, "lookup", `{"city":"Paris"}`, "lookup", `{"city":"Rome"}`, "lookup", `{"city":"Atlantis"}`),
		say("Sunny in both."),
	}}
	tr := newChatTract(t, m)
	runs := 0
	res, err := tr.Chat(context.Background(), "Weather in Paris and Rome?", tract.Tools(lookupTool(&runs)))
	require.NoError(t, err)
	assert.Equal(t, 3, runs)
	msgs, err := tr.Compile(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{
		`{"role":"user","content":"Weather in Paris and Rome?"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{\"city\":\"Rome\"}"}},{"id":"call_3","type":"function","function":{"name":"lookup","arguments":"{\"city\":\"Atlantis\"}"}}]}`,
		`{"role":"tool","content":"{\"city\":\"Paris\",\"sky\":\"sunny\"}","tool_call_id":"call_1"}`,
		`{"role":"tool","content":"{\"city\":\"Rome\",\"sky\":\"sunny\"}","tool_call_id":"call_2"}`,
		`{"role":"tool","content":"error: lookup failed: no such city","tool_call_id":"call_3"}`,
		`{"role":"assistant","content":"Sunny in both."}`,
	}, wireJSON(t, msgs))
	assert.Equal(t, msgs[:5], m.requests[1].Messages, "the second request is what the branch compiles to")
	require.Len(t, res.ToolSteps, 1)
	assert.Len(t, res.ToolSteps[0].Results, 3)
	// One ref move for the step: its commits landed together.
	reflog, err := tr.Reflog(context.Background(), "main")
	require.NoError(t, err)
	assert.Len(t, reflog, 3, "the user message, the tool step, the answer")
}

// A model that keeps calling tools ends the turn at MaxToolSteps with a
// *ToolStepsError: with purify, the steps leave the branch and an error
// commit on the user message records why; the calls over the limit never
// run.
func TestChatTools_StepLimit(t *testing.T) {
	for _, purify := range []bool{true, false} {
		t.Run(fmt.Sprintf("purify=%v", purify), func(t *testing.T) {
			m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
				call(1, "lookup", `{"city":"Paris"}`), call(2, "lookup", `{"city":"Rome"}`), call(3, "lookup", `{"city":"Oslo"}`),
			}}
			tr := newChatTract(t, m)
			runs := 0
			res, err := tr.Chat(context.Background(), "Weather?", tract.Tools(lookupTool(&runs)), tract.MaxToolSteps(2), tract.Purify(purify))
			var steps *tract.ToolStepsError
			require.ErrorAs(t, err, &steps)
			assert.Equal(t, 2, steps.Limit)
			assert.Equal(t, 1, steps.Attempt)
			assert.Len(t, steps.Calls, 2)
			assert.Equal(t, "call_3", steps.Pending[0].ID)
			assert.Equal(t, "chat: attempt 1: the model called tools again after 2 tool steps, the limit (MaxToolSteps); its calls of lookup were not run", err.Error())
			assert.Equal(t, 2, runs, "the calls over the limit never run")
			assert.Len(t, res.ToolSteps, 2)

			log, err := tr.Log(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "error/assistant", roles(log)[0])
			assert.True(t, strings.HasPrefix(log[0].Text, "tool steps exhausted: attempt 1:"), log[0].Text)
			if purify {
				assert.Equal(t, []string{"error/assistant", "message/user"}, roles(log))
				all, err := tr.LogAll(context.Background())
				require.NoError(t, err)
				require.Len(t, all.Orphans, 1)
				assert.Len(t, all.Orphans[0].Commits, 4, "two tool steps, off the branch")
				assert.Equal(t, "purify: hid 1 failed attempt", all.Orphans[0].Reason)
			} else {
				assert.Equal(t, []string{"error/assistant", "message/tool", "message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
			}
			turn, err := tr.LastTurn(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tract.TurnUnanswered, turn.State, "the message waits for an answer")
		})
	}
}

// A context cancelled while a tool runs stops the turn: the step is not
// committed, and with purify the earlier steps leave the branch too.
func TestChatTools_CancelledWhileAToolRuns(t *testing.T) {
	for _, purify := range []bool{true, false} {
		t.Run(fmt.Sprintf("purify=%v", purify), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
				call(1, "lookup", `{"city":"Paris"}`),
				call(2, "slow", `{}`, "lookup", `{"city":"Rome"}`),
			}}
			tr := newChatTract(t, m)
			runs := 0
			slow := tract.Tool("slow", "Takes its time.", func(ctx context.Context, _ struct{}) (string, error) {
				cancel()
				<-ctx.Done()
				return "", ctx.Err()
			})
			res, err := tr.Chat(ctx, "Weather?", tract.Tools(lookupTool(&runs), slow), tract.Purify(purify))
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, 1, runs, "no call runs after the cancel")
			require.NotNil(t, res)
			assert.Len(t, res.ToolSteps, 1)

			log, err := tr.Log(context.Background())
			require.NoError(t, err)
			if purify {
				assert.Equal(t, []string{"message/user"}, roles(log))
				all, err := tr.LogAll(context.Background())
				require.NoError(t, err)
				require.Len(t, all.Orphans, 1)
				assert.Equal(t, "purify: hid 1 failed attempt (interrupted)", all.Orphans[0].Reason)
			} else {
				assert.Equal(t, []string{"message/tool", "message/assistant", "message/user"}, roles(log), "the first step, whole; nothing of the second")
			}
			all, err := tr.LogAll(context.Background())
			require.NoError(t, err)
			n := len(all.Commits)
			for _, o := range all.Orphans {
				n += len(o.Commits)
			}
			assert.Equal(t, 3, n, "no commit of the interrupted step anywhere")
		})
	}
}

// The tool set is checked before anything is written.
func TestChatTools_BadToolSetsAreRefused(t *testing.T) {
	noop := func(context.Context, struct{}) (string, error) { return "", nil }
	for _, tc := range []struct {
		name  string
		tools []tool.Tool
		want  string
	}{
		{"bad name", []tool.Tool{tract.Tool("look up", "", noop)}, `chat: tools: tool "look up": a tool's name must be 1 to 64 letters, digits, "_" or "-"`},
		{"duplicate", []tool.Tool{tract.Tool("a", "", noop), tract.Tool("a", "", noop)}, `chat: tools: tool "a": two tools have this name; each tool needs its own`},
		{"not an object", []tool.Tool{tract.Tool("a", "", func(context.Context, string) (string, error) { return "", nil })},
			`chat: tools: tool "a": its parameters' schema must be of type "object" (the arguments are a JSON object), not "string"`},
		{"no function", []tool.Tool{tract.Tool[struct{}, string]("a", "", nil)}, `chat: tools: tool "a": it has no function`},
		{"no schema", []tool.Tool{tract.Tool("a", "", func(context.Context, chan int) (string, error) { return "", nil })},
			`chat: tools: tool "a": the schema of its arguments cannot be inferred from chan int: For[chan int](): type chan int is unsupported by jsonschema`},
		{"bad schema", []tool.Tool{tract.Tool("a", "", noop, tool.Schema(json.RawMessage(`{"type":"object","properties":{"x":{"type":"strin"}}}`)))},
			`chat: tools: tool "a": its parameters' schema: schema a is not a valid JSON Schema: "type" at "/properties/x" is "strin", want one of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &toolModel{}
			tr := newChatTract(t, m)
			_, err := tr.Chat(context.Background(), "hi", tract.Tools(tc.tools...))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), err.Error())
			assert.Empty(t, m.requests)
			log, err := tr.Log(context.Background())
			require.NoError(t, err)
			assert.Empty(t, log)
		})
	}
}

// A turn whose start waits for the model (DeferStart) and one whose
// retries start afresh from the restore point (ContextFresh) run tools as
// any turn: the branch ends in the same clean shape, and the events
// reported live are those replayed from the commits.
func TestChatTools_DeferredStartAndFreshRetries(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []tract.ChatOption
	}{
		{"deferred start", []tract.ChatOption{tract.DeferStart()}},
		{"fresh retries", []tract.ChatOption{tract.RetryContextStrategy(tract.ContextFresh)}},
		{"both", []tract.ChatOption{tract.DeferStart(), tract.RetryContextStrategy(tract.ContextFresh)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
				call(1, "lookup", `{"city":"Paris"}`),
				say("sunny"),
				call(2, "lookup", `{"city":"Paris"}`),
				say(`"sunny"`),
			}}
			tr := newChatTract(t, m)
			ctx := context.Background()
			runs := 0
			var live []tract.Event
			opts := append([]tract.ChatOption{tract.Tools(lookupTool(&runs)), tract.Validate(retry.JSON()),
				tract.OnEvent(func(e tract.Event) { live = append(live, e) })}, tc.opts...)
			res, err := tr.Chat(ctx, "Weather?", opts...)
			require.NoError(t, err)
			assert.Equal(t, `"sunny"`, res.Text)

			log, err := tr.Log(ctx)
			require.NoError(t, err)
			assert.Equal(t, []string{"message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
			assert.Equal(t, res.User, log[3].Hash)
			msgs, err := tr.Compile(ctx)
			require.NoError(t, err)
			assert.Equal(t, `{"role":"tool","content":"{\"city\":\"Paris\",\"sky\":\"sunny\"}","tool_call_id":"call_2"}`, wireJSON(t, msgs[2:3])[0])

			replayed, err := tr.Events(ctx, tract.EventFilter{})
			require.NoError(t, err)
			assert.Equal(t, live, replayed)
			var kinds []string
			for _, e := range live {
				kinds = append(kinds, string(e.Event))
			}
			assert.Equal(t, []string{"attempt", "feedback_injected", "attempt", "resolved"}, kinds)
		})
	}
}

// The stats of a turn with tool steps count its attempts only, and the
// tokens of its answer (the tool steps' calls are in ChatResult.Usage).
func TestChatTools_StatsCountAttemptsNotToolSteps(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		call(1, "lookup", `{"city":"Paris"}`), call(2, "lookup", `{"city":"Rome"}`), say("done"),
	}}
	tr := newChatTract(t, m)
	runs := 0
	_, err := tr.Chat(context.Background(), "Weather?", tract.Tools(lookupTool(&runs)))
	require.NoError(t, err)
	st, err := tr.Stats(context.Background(), tract.StatsFilter{})
	require.NoError(t, err)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	for _, want := range []string{`"total_tasks":1,`, `"first_attempt_successes":1,`, `"attempts":1,`, `"tokens_accepted":12,`} {
		assert.Contains(t, string(b), want)
	}
}

// A turn of many tool steps is still the last turn of its user message,
// however many commits it holds; after a failed one, RetryLast answers the
// message again.
func TestChatTools_LastTurnOfManySteps(t *testing.T) {
	var answers []func(llm.Request) (*llm.Response, error)
	for i := 1; i <= 6; i++ {
		answers = append(answers, call(i, "lookup", `{"city":"Paris"}`))
	}
	m := &toolModel{answers: append(answers, call(7, "lookup", `{"city":"Rome"}`), say("sunny"))}
	tr := newChatTract(t, m)
	ctx := context.Background()
	runs := 0
	_, err := tr.Chat(ctx, "Weather?", tract.Tools(lookupTool(&runs)), tract.MaxToolSteps(5), tract.Purify(false))
	require.ErrorAs(t, err, new(*tract.ToolStepsError))
	last, err := tr.LastTurn(ctx)
	require.NoError(t, err)
	assert.Equal(t, tract.TurnUnanswered, last.State)
	assert.Equal(t, 12, last.Commits, "the message, 5 steps of 2 commits, the error")

	res, err := tr.RetryLast(ctx, tract.Tools(lookupTool(&runs)))
	require.NoError(t, err)
	assert.Equal(t, "sunny", res.Text)
	assert.Len(t, res.ToolSteps, 1)
	last, err = tr.LastTurn(ctx)
	require.NoError(t, err)
	assert.Equal(t, tract.TurnAnswered, last.State)
	assert.Equal(t, 4, last.Commits)
}

// Another writer that moves the branch while a tool runs ends the turn
// with a conflict: the tool step is kept off the branch, whole.
func TestChatTools_BranchMovedWhileAToolRuns(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){call(1, "meddle", `{}`), say("done")}}
	tr := newChatTract(t, m)
	ctx := context.Background()
	meddle := tract.Tool("meddle", "Moves the branch.", func(ctx context.Context, _ struct{}) (string, error) {
		_, err := tr.User(ctx, "someone else")
		return "moved", err
	})
	_, err := tr.Chat(ctx, "Go.", tract.Tools(meddle))
	var conflict *tract.ConflictError
	require.ErrorAs(t, err, &conflict)
	kept, err := tr.Show(ctx, conflict.Kept.String())
	require.NoError(t, err)
	assert.Equal(t, "moved", kept.Text)
	assert.Equal(t, tract.RoleTool, kept.Role)

	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"someone else", "Go."}, texts(log))
	all, err := tr.LogAll(ctx)
	require.NoError(t, err)
	require.Len(t, all.Orphans, 1)
	assert.Equal(t, []string{"message/tool", "message/assistant"}, roles(all.Orphans[0].Commits), "the call and its result, together")
	assert.Len(t, m.requests, 1, "no model call after the conflict")
}

// A round the escalation hook starts again runs its own tool loop, and
// the purify after it keeps the accepted attempt's tool step.
func TestChatTools_EscalatedRoundRunsItsOwnToolLoop(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		call(1, "lookup", `{"city":"Paris"}`), say("sunny"),
		call(2, "lookup", `{"city":"Paris"}`), say(`"sunny"`),
	}}
	tr := newChatTract(t, m)
	ctx := context.Background()
	runs := 0
	asked := 0
	res, err := tr.Chat(ctx, "Weather?", tract.Tools(lookupTool(&runs)), tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		tract.OnEscalation(func(context.Context, tract.Escalation) (tract.Resolution, error) {
			asked++
			return tract.Resolution{Action: tract.ResolveRetry}, nil
		}))
	require.NoError(t, err)
	assert.Equal(t, 1, asked)
	assert.Equal(t, 2, runs)
	require.Len(t, res.ToolSteps, 1)
	assert.Equal(t, 2, res.ToolSteps[0].Attempt)
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
	assert.Equal(t, "call_2", res.ToolSteps[0].Calls[0].ID)
	assert.Equal(t, log[2].Hash, res.ToolSteps[0].Commit)
}

// A tool result the repository cannot hold is not sent: the model is told
// it was too large, and the branch keeps that.
func TestChatTools_ResultOverTheMessageSizeLimit(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){call(1, "big", `{}`), say("too much")}}
	tr, err := tract.Init(filepath.Join(t.TempDir(), "tract.db"), tract.WithNoSync(), tract.WithClient(m),
		tract.WithLimits(tract.Limits{MessageSize: 1024}))
	require.NoError(t, err)
	defer tr.Close()
	big := tract.Tool("big", "Returns a lot.", func(context.Context, struct{}) (string, error) { return strings.Repeat("x", 2000), nil })
	res, err := tr.Chat(context.Background(), "Go.", tract.Tools(big))
	require.NoError(t, err)
	want := "error: the result of big is 2.0 KiB, over the repository's message size limit (1 KiB); ask for less"
	assert.Equal(t, want, res.ToolSteps[0].Calls[0].Result)
	assert.Equal(t, tool.FailError, res.ToolSteps[0].Calls[0].Failure)
	assert.Equal(t, want, m.requests[1].Messages[2].Content)
}

// An answer a validator fixes after a tool step is accepted with its tool
// step on the branch: the fix goes back on the restore point after the
// step, as purify puts an accepted answer, and the answer as given hangs
// beside the branch with its own step.
func TestChatTools_FixedAnswerKeepsItsToolStep(t *testing.T) {
	m := &toolModel{answers: []func(llm.Request) (*llm.Response, error){
		call(1, "lookup", `{"city":"Paris"}`),
		say(`Here you go: {"sky": "sunny",}`),
	}}
	tr := newChatTract(t, m)
	ctx := context.Background()
	runs := 0
	res, err := tr.Chat(ctx, "Weather in Paris, as JSON?", tract.Tools(lookupTool(&runs)), tract.Validate(retry.FixJSON()))
	require.NoError(t, err)
	assert.Equal(t, `{"sky": "sunny"}`, res.Text)
	assert.Equal(t, "json", res.FixedBy)
	assert.Len(t, m.requests, 2, "a fix needs no other model call")
	assert.Equal(t, 1, runs)

	log, err := tr.Log(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"message/assistant", "message/tool", "message/assistant", "message/user"}, roles(log))
	assert.Equal(t, res.Commit, log[0].Hash)
	require.Len(t, res.ToolSteps, 1)
	assert.Equal(t, log[2].Hash, res.ToolSteps[0].Commit, "the step the result names is the one on the branch")

	original, err := tr.Show(ctx, res.Original.String())
	require.NoError(t, err)
	assert.Equal(t, `Here you go: {"sky": "sunny",}`, original.Text)
}
