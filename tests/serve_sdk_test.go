package tests

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// The official SDKs for Node, end to end: each case runs a small module
// (openAISDK, anthropicSDK) against 'tract serve' in front of the
// scripted upstream, then reads what it recorded with the CLI once the
// server has stopped.

// sdkUpstreamKey is tract's key for the upstream; the clients hold keys of
// their own, which the upstream never sees.
const sdkUpstreamKey = "sk-upstream-sdk-31"

// The shared part of both modules: the case named by SDK_CASE, its
// result printed as JSON. ask(messages, {headers, body}) makes one call
// and returns {text, message, branch, commit, attempts}; failure(e) is
// what a call's error says.
const sdkCommon = `
const headersOf = (response) => ({
  branch: response.headers.get('x-tract-branch'),
  commit: response.headers.get('x-tract-commit'),
  attempts: response.headers.get('x-tract-attempts'),
});
const failure = (e, errorType) => ({ error: {
  name: e.constructor.name, typed: e instanceof errorType, status: e.status,
  message: String(e.message), commit: e.headers?.get?.('x-tract-commit') ?? null,
}});
const interleaved = async (user, assistant) => {
  // Two conversations, each call of one sent with a call of the other.
  const a = [user('Conversation A')], b = [user('Conversation B')];
  const first = await Promise.all([ask(a), ask(b)]);
  a.push(assistant(first[0]), user('A again'));
  b.push(assistant(first[1]), user('B again'));
  const second = await Promise.all([ask(a), ask(b)]);
  return { calls: [first[0], first[1], second[0], second[1]] };
};
const fork = async (user, assistant) => {
  const c = [user('U1')];
  const r1 = await ask(c);
  c.push(assistant(r1), user('U2'));
  const r2 = await ask(c);
  // The second question edited: the conversation leaves the first after A1.
  const r3 = await ask([user('U1'), assistant(r1), user('V2')]);
  return { calls: [r1, r2, r3] };
};
const run = async (cases) => {
  const out = await cases[process.env.SDK_CASE]();
  for (const c of out.calls ?? []) delete c.message;
  console.log(JSON.stringify(out));
};
`

// openAISDK drives the OpenAI SDK (OPENAI_BASE_URL, OPENAI_API_KEY).
const openAISDK = `import OpenAI from 'openai';
const client = new OpenAI({ maxRetries: 0 });
const model = 'gpt-test';
const ask = async (messages, opts = {}) => {
  const { data, response } = await client.chat.completions
    .create({ model, messages, ...opts.body }, { headers: opts.headers }).withResponse();
  const message = data.choices[0].message;
  return { text: message.content, message, ...headersOf(response) };
};
const user = (content) => ({ role: 'user', content });
const assistant = (r) => r.message; // as agents resend it: refusal, annotations and all
const tools = [{ type: 'function', function: { name: 'weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
` + sdkCommon + `
await run({
  plain: async () => ({ calls: [await ask([user('Capital of France?')])] }),
  streamed: async () => {
    const stream = await client.chat.completions.create({ model, stream: true,
      stream_options: { include_usage: true }, messages: [user('Count to four.')] });
    let text = '', usage = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    return { calls: [{ text }], usage };
  },
  validated: async () => ({ calls: [await ask([user('An order as JSON.')], { headers: { 'X-Tract-Validate': 'json' } })] }),
  validatedStream: async () => {
    const { data: stream, response } = await client.chat.completions.create({ model, stream: true,
      messages: [user('An order as JSON.')] }, { headers: { 'X-Tract-Validate': 'json' } }).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    return { calls: [{ text, ...headersOf(response) }] };
  },
  exhausted: async () => {
    try {
      await ask([user('An order as JSON.')], { headers: { 'X-Tract-Validate': 'json', 'X-Tract-Max-Attempts': '2' } });
      return {};
    } catch (e) { return failure(e, OpenAI.UnprocessableEntityError); }
  },
  tools: async () => {
    const messages = [user('Weather in Oslo?')];
    const first = await ask(messages, { body: { tools } });
    const call = first.message.tool_calls[0];
    messages.push(first.message, { role: 'tool', tool_call_id: call.id,
      content: JSON.parse(call.function.arguments).city === 'Oslo' ? '-3C' : 'unknown city' });
    const second = await ask(messages, { body: { tools } });
    return { tool: { name: call.function.name, arguments: call.function.arguments }, calls: [first, second] };
  },
  interleaved: () => interleaved(user, assistant),
  fork: () => fork(user, assistant),
});
`

// anthropicSDK drives the Anthropic SDK (ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY).
const anthropicSDK = `import Anthropic from '@anthropic-ai/sdk';
const client = new Anthropic({ maxRetries: 0 });
const model = 'claude-test';
const ask = async (messages, opts = {}) => {
  const { data, response } = await client.messages
    .create({ model, max_tokens: 256, messages, ...opts.body }, { headers: opts.headers }).withResponse();
  const text = data.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  return { text, message: data, ...headersOf(response) };
};
const user = (content) => ({ role: 'user', content });
const assistant = (r) => ({ role: 'assistant', content: r.message.content });
const tools = [{ name: 'weather', description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
` + sdkCommon + `
await run({
  plain: async () => ({ calls: [await ask([user('Capital of France?')])] }),
  streamed: async () => {
    const stream = client.messages.stream({ model, max_tokens: 256, messages: [user('Count to four.')] });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    return { calls: [{ text }], usage: final.usage };
  },
  validated: async () => ({ calls: [await ask([user('An order as JSON.')], { headers: { 'X-Tract-Validate': 'json' } })] }),
  validatedStream: async () => {
    const { data: stream, response } = await client.messages.create({ model, max_tokens: 256, stream: true,
      messages: [user('An order as JSON.')] }, { headers: { 'X-Tract-Validate': 'json' } }).withResponse();
    let text = '';
    for await (const ev of stream) if (ev.type === 'content_block_delta') text += ev.delta.text ?? '';
    return { calls: [{ text, ...headersOf(response) }] };
  },
  exhausted: async () => {
    try {
      await ask([user('An order as JSON.')], { headers: { 'X-Tract-Validate': 'json', 'X-Tract-Max-Attempts': '2' } });
      return {};
    } catch (e) { return failure(e, Anthropic.UnprocessableEntityError); }
  },
  tools: async () => {
    const messages = [user('Weather in Oslo?')];
    const first = await ask(messages, { body: { tools } });
    const call = first.message.content.find((b) => b.type === 'tool_use');
    messages.push(assistant(first), { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id,
      content: call.input.city === 'Oslo' ? '-3C' : 'unknown city' }] });
    const second = await ask(messages, { body: { tools } });
    return { tool: { name: call.name, arguments: JSON.stringify(call.input) }, calls: [first, second] };
  },
  interleaved: () => interleaved(user, assistant),
  fork: () => fork(user, assistant),
});
`

// sdkResult is what a case's module prints.
type sdkResult struct {
	Calls []struct {
		Text, Branch, Commit, Attempts string
	} `json:"calls"`
	Usage map[string]any `json:"usage"`
	Tool  *struct {
		Name, Arguments string
	} `json:"tool"`
	Error *struct {
		Name    string `json:"name"`
		Typed   bool   `json:"typed"`
		Status  int    `json:"status"`
		Message string `json:"message"`
		Commit  string `json:"commit"`
	} `json:"error"`
}

// sdkRun is one case run: its result, the upstream and the sandbox, whose
// server has stopped.
type sdkRun struct {
	sdk string
	out sdkResult
	srv *llmtest.Server
	s   *sandbox
}

// branch returns the texts of branch's first-parent chain, oldest first.
func (r *sdkRun) branch(name string) []string {
	r.s.t.Helper()
	cs := decodeJSON[history](r.s.t, r.s.ok("log", "--json", name)).Commits
	out := texts(cs)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// tip returns branch's tip.
func (r *sdkRun) tip(name string) string {
	r.s.t.Helper()
	cs := decodeJSON[history](r.s.t, r.s.ok("log", "--json", "-n", "1", name)).Commits
	require.Len(r.s.t, cs, 1)
	return cs[0].Hash
}

// branches returns the repository's branch names.
func (r *sdkRun) branches() []string {
	r.s.t.Helper()
	var bs []struct {
		Name string `json:"name"`
	}
	require.NoError(r.s.t, json.Unmarshal([]byte(r.s.ok("branch", "--json").Stdout), &bs))
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// model is the model name the case's module asks for.
func (r *sdkRun) model() string {
	if r.sdk == "anthropic" {
		return "claude-test"
	}
	return "gpt-test"
}

var sdkCases = []struct {
	name     string
	upstream func(srv *llmtest.Server)
	check    func(t *testing.T, r *sdkRun)
}{
	{"plain", func(srv *llmtest.Server) { srv.Reply(llmtest.Answer("Paris.")) }, func(t *testing.T, r *sdkRun) {
		require.Len(t, r.out.Calls, 1)
		c := r.out.Calls[0]
		assert.Equal(t, "Paris.", c.Text)
		assert.True(t, strings.HasPrefix(c.Branch, "serve/"), c.Branch)
		assert.Equal(t, []string{"Capital of France?", "Paris."}, r.branch(c.Branch))
		assert.Equal(t, r.tip(c.Branch), c.Commit, "X-Tract-Commit is the answer's commit")
		var show struct {
			Meta map[string]any `json:"meta"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.s.ok("show", "--json", c.Commit).Stdout), &show))
		assert.Equal(t, r.model(), show.Meta["model"])
		assert.Equal(t, r.sdk, show.Meta["provider"])
		reqs := r.srv.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, r.sdk, reqs[0].Wire)
	}},
	{"streamed", func(srv *llmtest.Server) { srv.Reply(llmtest.Answer("one two three four")) }, func(t *testing.T, r *sdkRun) {
		assert.Equal(t, "one two three four", r.out.Calls[0].Text)
		assert.NotEmpty(t, r.out.Usage)
		bs := r.branches()
		require.Len(t, bs, 1)
		assert.Equal(t, []string{"Count to four.", "one two three four"}, r.branch(bs[0]))
		var show struct {
			Meta map[string]any `json:"meta"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.s.ok("show", "--json", bs[0]).Stdout), &show))
		assert.NotNil(t, show.Meta["usage"], "the stream's usage is recorded")
		require.Len(t, r.srv.Requests(), 1)
		assert.True(t, r.srv.Requests()[0].Stream)
	}},
	{"validated", func(srv *llmtest.Server) {
		srv.Reply(llmtest.Answer(`Here it is: {"id": 7`), llmtest.Answer(`{"id": 7}`))
	}, func(t *testing.T, r *sdkRun) {
		c := r.out.Calls[0]
		assert.Equal(t, `{"id": 7}`, c.Text, "the SDK sees the accepted answer alone")
		assert.Equal(t, "2", c.Attempts)
		assert.Equal(t, []string{"An order as JSON.", `{"id": 7}`}, r.branch(c.Branch), "purified")
		assert.Equal(t, r.tip(c.Branch), c.Commit)
		all := r.s.logAll()
		var orphaned []string
		for _, o := range all.Orphans {
			orphaned = append(orphaned, texts(o.Commits)...)
		}
		assert.Contains(t, orphaned, `Here it is: {"id": 7`, "the failed attempt is kept beside the branch")
		assert.Contains(t, strings.Join(orphaned, "\n"), "failed validation", "with its steering")
		reqs := r.srv.Requests()
		require.Len(t, reqs, 2)
		assert.Contains(t, reqs[1].LastMessage(), "failed validation")
	}},
	{"validatedStream", func(srv *llmtest.Server) {
		srv.Reply(llmtest.Answer(`Here it is: {"id": 7`), llmtest.Answer(`{"id": 7}`))
	}, func(t *testing.T, r *sdkRun) {
		c := r.out.Calls[0]
		assert.Equal(t, `{"id": 7}`, c.Text, "the SDK's stream carries the accepted answer alone")
		assert.Equal(t, "2", c.Attempts)
		assert.Equal(t, r.tip(c.Branch), c.Commit, "a validated stream has its commit in its headers")
		assert.Equal(t, []string{"An order as JSON.", `{"id": 7}`}, r.branch(c.Branch))
	}},
	{"exhausted", func(srv *llmtest.Server) { srv.Reply(llmtest.Answer("no"), llmtest.Answer("still no")) }, func(t *testing.T, r *sdkRun) {
		e := r.out.Error
		require.NotNil(t, e, "the SDK raised no error")
		assert.True(t, e.Typed, "the SDK raised %s, not its UnprocessableEntityError", e.Name)
		assert.Equal(t, 422, e.Status)
		assert.Contains(t, e.Message, "no answer passed validation in 2 attempts")
		assert.Contains(t, e.Message, "attempt 1: json")
		assert.Contains(t, e.Message, "attempt 2: json")
		require.Len(t, e.Commit, 64)
		assert.Contains(t, e.Message, "the last attempt is commit "+e.Commit)
		assert.Contains(t, r.s.ok("show", e.Commit).Stdout, "still no")
	}},
	{"tools", func(srv *llmtest.Server) {
		srv.Reply(llmtest.Calls(llmtest.Call("weather", `{"city":"Oslo"}`)), llmtest.Answer("Cold: -3C."))
	}, func(t *testing.T, r *sdkRun) {
		require.NotNil(t, r.out.Tool)
		assert.Equal(t, "weather", r.out.Tool.Name)
		assert.JSONEq(t, `{"city":"Oslo"}`, r.out.Tool.Arguments)
		require.Len(t, r.out.Calls, 2)
		first, second := r.out.Calls[0], r.out.Calls[1]
		assert.Equal(t, "Cold: -3C.", second.Text)
		assert.Equal(t, first.Branch, second.Branch, "the resent call and its result extend the branch")
		assert.Equal(t, r.tip(second.Branch), second.Commit)
		reqs := r.srv.Requests()
		require.Len(t, reqs, 2)
		for _, req := range reqs {
			require.Len(t, req.Tools, 1, "the tool definition passes through")
			assert.Equal(t, "weather", req.Tools[0].Name)
		}
		msgs := reqs[1].Messages
		require.Len(t, msgs, 3)
		require.Len(t, msgs[1].ToolCalls, 1)
		assert.Equal(t, "tool", msgs[2].Role)
		assert.Equal(t, msgs[1].ToolCalls[0].ID, msgs[2].ToolCallID)
		assert.Equal(t, "-3C", msgs[2].Text())

		var compiled []struct {
			Role      string `json:"role"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
			Content    any    `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.s.ok("compile", "--json", second.Branch).Stdout), &compiled))
		require.Len(t, compiled, 4, "user, the call, its result, the answer")
		require.Len(t, compiled[1].ToolCalls, 1)
		assert.Equal(t, "weather", compiled[1].ToolCalls[0].Function.Name)
		assert.Equal(t, msgs[1].ToolCalls[0].ID, compiled[1].ToolCalls[0].ID)
		assert.Equal(t, compiled[1].ToolCalls[0].ID, compiled[2].ToolCallID)
		assert.Equal(t, "-3C", compiled[2].Content)
		assert.Equal(t, "Cold: -3C.", compiled[3].Content)
	}},
	{"interleaved", func(srv *llmtest.Server) {
		srv.When("Conversation A", llmtest.Answer("A1"))
		srv.When("Conversation B", llmtest.Answer("B1"))
		srv.When("A again", llmtest.Answer("A2"))
		srv.When("B again", llmtest.Answer("B2"))
	}, func(t *testing.T, r *sdkRun) {
		cs := r.out.Calls
		require.Len(t, cs, 4)
		assert.Equal(t, []string{"A1", "B1", "A2", "B2"}, []string{cs[0].Text, cs[1].Text, cs[2].Text, cs[3].Text})
		assert.Equal(t, cs[0].Branch, cs[2].Branch)
		assert.Equal(t, cs[1].Branch, cs[3].Branch)
		assert.NotEqual(t, cs[0].Branch, cs[1].Branch)
		assert.ElementsMatch(t, []string{cs[0].Branch, cs[1].Branch}, r.branches())
		assert.Equal(t, []string{"Conversation A", "A1", "A again", "A2"}, r.branch(cs[0].Branch))
		assert.Equal(t, []string{"Conversation B", "B1", "B again", "B2"}, r.branch(cs[1].Branch))
		all := r.s.logAll()
		assert.Len(t, all.Commits, 8, "nothing stored twice")
		assert.Empty(t, all.Orphans)
	}},
	{"fork", func(srv *llmtest.Server) {
		srv.Reply(llmtest.Answer("A1"), llmtest.Answer("A2"), llmtest.Answer("B2"))
	}, func(t *testing.T, r *sdkRun) {
		cs := r.out.Calls
		require.Len(t, cs, 3)
		assert.Equal(t, cs[0].Branch, cs[1].Branch)
		assert.NotEqual(t, cs[1].Branch, cs[2].Branch, "the edited conversation forks")
		assert.ElementsMatch(t, []string{cs[0].Branch, cs[2].Branch}, r.branches())
		assert.Equal(t, []string{"U1", "A1", "U2", "A2"}, r.branch(cs[1].Branch))
		assert.Equal(t, []string{"U1", "A1", "V2", "B2"}, r.branch(cs[2].Branch))
		assert.Equal(t, r.tip(cs[0].Branch+"~2"), r.tip(cs[2].Branch+"~2"), "the fork shares U1 and A1")
		all := r.s.logAll()
		assert.Len(t, all.Commits, 6, "U1 and A1 stored once")
	}},
}

// Each case on each SDK: its own repository, upstream and server, the
// module run against it, the server stopped, then the repository read.
func TestServe_SDKs(t *testing.T) {
	t.Parallel()
	nodeModules(t)
	for _, sdk := range []struct{ name, script string }{{"openai", openAISDK}, {"anthropic", anthropicSDK}} {
		t.Run(sdk.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range sdkCases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					srv := llmtest.NewServer(t, llmtest.WithAPIKey(sdkUpstreamKey))
					c.upstream(srv)
					s := newSandbox(t).withEnv("OPENAI_BASE_URL", srv.URL(), "OPENAI_API_KEY", sdkUpstreamKey,
						"ANTHROPIC_BASE_URL", srv.AnthropicURL(), "ANTHROPIC_API_KEY", sdkUpstreamKey)
					s.initRepo()
					b, addr := startServe(t, s)
					stdout := runNode(t, sdk.script, "SDK_CASE="+c.name,
						"OPENAI_BASE_URL=http://"+addr+"/v1", "OPENAI_API_KEY=sk-client-own-key",
						"ANTHROPIC_BASE_URL=http://"+addr, "ANTHROPIC_API_KEY=sk-ant-client-own-key")
					require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
					res := b.wait()
					requireExit(t, res, exitOK)
					assert.NotContains(t, res.Stderr, "record a call", "every call was recorded")
					r := &sdkRun{sdk: sdk.name, srv: srv, s: s}
					require.NoError(t, json.Unmarshal([]byte(stdout), &r.out), stdout)
					c.check(t, r)
					s.fsckOK()
				})
			}
		})
	}
}
