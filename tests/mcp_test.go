package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// mcpClientScript is an agent session on the official MCP TypeScript SDK,
// over stdio (it starts 'tract mcp') or streamable HTTP (tract serve's
// /mcp). Its client validates every structured result against the
// tool's output schema with a validator that counts what it checked. It
// prints what it saw as JSON; the Go test asserts on it.
const mcpClientScript = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const env = process.env;
const ajv = new AjvJsonSchemaValidator();
const validated = {};
const counting = {
  getValidator(schema) {
    const v = ajv.getValidator(schema);
    return (data) => {
      const r = v(data);
      if (!r.valid) throw new Error('invalid structured content: ' + r.errorMessage + ': ' + JSON.stringify(data));
      validated[schema.__tool] = (validated[schema.__tool] || 0) + 1;
      return r;
    };
  },
};

function transport() {
  if (env.MCP_TRANSPORT === 'http') {
    return new StreamableHTTPClientTransport(new URL(env.MCP_URL),
      { requestInit: { headers: { Authorization: 'Bearer ' + env.MCP_TOKEN } } });
  }
  const args = ['mcp'];
  if (env.MCP_READ_ONLY === '1') args.push('--read-only');
  return new StdioClientTransport({ command: env.TRACT_BIN, args, cwd: env.REPO_DIR,
    env: JSON.parse(env.SANDBOX_ENV), stderr: 'pipe' });
}

const client = new Client({ name: 'e2e-agent', version: '1.0.0' }, { jsonSchemaValidator: counting });
await client.connect(transport());
const out = { tools: [], calls: {}, errors: {} };

const listed = await client.listTools();
for (const t of listed.tools) {
  if (t.inputSchema.type !== 'object' || !t.outputSchema || t.outputSchema.type !== 'object') {
    throw new Error('tool ' + t.name + ' lacks an object input or output schema');
  }
  // Names the schema for the counting validator, which listTools gave it
  // (it validates a tool's results against the schema it listed).
  t.outputSchema.__tool = t.name;
  out.tools.push({ name: t.name, readOnly: t.annotations?.readOnlyHint === true });
}

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.map((c) => c.text || '').join('');
  if (res.isError) {
    out.errors[name] = (out.errors[name] || []).concat([text]);
    return null;
  }
  if (JSON.stringify(res.structuredContent) !== JSON.stringify(JSON.parse(text))) {
    throw new Error(name + ': the text content is not the structured content');
  }
  out.calls[name] = (out.calls[name] || 0) + 1;
  return res.structuredContent;
}

if (env.MCP_READ_ONLY === '1') {
  out.status = await call('status', {});
  try {
    await call('reset', { rev: 'HEAD~1' });
    out.resetRefused = false;
  } catch (e) {
    out.resetRefused = String(e.message || e);
  }
  if (out.errors.reset) out.resetRefused = out.errors.reset[0];
} else {
  out.log = await call('log', {});
  out.logAll = await call('log', { all: true });
  out.show = await call('show', { rev: env.FAILED.slice(0, 10) });
  out.compile = await call('compile', {});
  out.status = await call('status', {});
  out.search = await call('search', { query: 'colors', limit: 10 });
  out.stats = await call('stats', {});
  out.branches = await call('branches', {});
  out.escalations = await call('escalations', {});

  out.branch = await call('branch', { name: 'mcp-try', from: 'HEAD~1' });
  out.note = await call('note', { branch: 'mcp-try', text: 'trying again from the question', expect: out.branch.hash });

  // Another writer moves main between the agent's read and its reset.
  const read = out.status.head;
  out.moved = await call('note', { text: 'another writer was here' });
  out.conflict = await call('reset', { rev: 'HEAD~1', expect: read });
  out.afterConflict = await call('status', {});
  out.reset = await call('reset', { rev: read, expect: out.moved.hash });

  out.answer = await call('answer_escalation', { id: env.ESCALATION, action: 'fix', instruction: 'use integers' });
  out.secondAnswer = await call('answer_escalation', { id: env.ESCALATION, action: 'skip' });
  out.badRev = await call('show', { rev: 'no-such-branch' });

  const commit = await client.readResource({ uri: 'tract://commit/' + env.FAILED });
  out.commitResource = JSON.parse(commit.contents[0].text);
  const branchLog = await client.readResource({ uri: 'tract://branch/mcp-try' });
  out.branchResource = JSON.parse(branchLog.contents[0].text);
  const branches = await client.readResource({ uri: 'tract://branches' });
  out.branchesResource = JSON.parse(branches.contents[0].text);
}
out.validated = validated;
await client.close();
console.log(JSON.stringify(out));
`

// mcpSession is what mcpClientScript prints.
type mcpSession struct {
	Tools []struct {
		Name     string `json:"name"`
		ReadOnly bool   `json:"readOnly"`
	} `json:"tools"`
	Calls     map[string]int      `json:"calls"`
	Errors    map[string][]string `json:"errors"`
	Validated map[string]int      `json:"validated"`
	Log       struct {
		Commits []commitInfo `json:"commits"`
	} `json:"log"`
	LogAll struct {
		Orphans []struct {
			Fork    string       `json:"fork"`
			Action  string       `json:"action"`
			Commits []commitInfo `json:"commits"`
		} `json:"orphans"`
	} `json:"logAll"`
	Show    commitInfo `json:"show"`
	Compile struct {
		Messages []map[string]any `json:"messages"`
	} `json:"compile"`
	Status struct {
		Branch string `json:"branch"`
		Head   string `json:"head"`
	} `json:"status"`
	AfterConflict struct {
		Head string `json:"head"`
	} `json:"afterConflict"`
	Branch struct {
		Name string `json:"name"`
		Hash string `json:"hash"`
	} `json:"branch"`
	Note     commitInfo `json:"note"`
	Moved    commitInfo `json:"moved"`
	Conflict any        `json:"conflict"`
	Reset    struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"reset"`
	Answer struct {
		State  string `json:"state"`
		Answer struct {
			Resolution string `json:"resolution"`
			By         string `json:"by"`
		} `json:"answer"`
	} `json:"answer"`
	SecondAnswer   any        `json:"secondAnswer"`
	CommitResource commitInfo `json:"commitResource"`
	BranchResource struct {
		Commits []commitInfo `json:"commits"`
	} `json:"branchResource"`
	BranchesResource []json.RawMessage `json:"branchesResource"`
	ResetRefused     any               `json:"resetRefused"`
}

var (
	mcpReadTools  = []string{"branches", "compile", "escalations", "log", "search", "show", "stats", "status"}
	mcpWriteTools = []string{"answer_escalation", "branch", "note", "reset"}
)

// mcpRepository makes a repository with a purified retry (its failed
// attempt an orphan) on main, and an escalation that waits, on branch
// night. It returns the failed attempt's hash and the escalation's id.
func mcpRepository(t *testing.T, s *sandbox) (failed, escalation string) {
	t.Helper()
	srv := retryServer(t)
	srv.When("Say it in JSON", llmtest.Answer("no JSON here"))
	s = chatEnv(s, srv)
	s.initRepo()
	var res chatRecord
	require.NoError(t, json.Unmarshal([]byte(s.ok("chat", "--json", "--validate", "json", "List three colours as JSON").Stdout), &res))
	require.Equal(t, 2, res.Attempts)
	require.True(t, res.Purified)
	h := s.logAll()
	for _, o := range h.Orphans {
		for _, c := range o.Commits {
			if c.Text == badJSON {
				failed = c.Hash
			}
		}
	}
	require.NotEmpty(t, failed, "the failed attempt is an orphan")
	s.ok("branch", "night")
	requireExit(t, s.tract("chat", "--branch", "night", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "Say it in JSON"), exitWaiting)
	es := escalations(t, s)
	require.Len(t, es, 1)
	return failed, es[0].ID
}

// sandboxEnv is the sandbox's environment as JSON, for the stdio
// client to start tract mcp with.
func sandboxEnv(t *testing.T, s *sandbox) string {
	b, err := json.Marshal(s.env)
	require.NoError(t, err)
	return string(b)
}

func runMCPSession(t *testing.T, env ...string) mcpSession {
	t.Helper()
	out := runNode(t, mcpClientScript, append([]string{"TRACT_BIN=" + tractBin}, env...)...)
	var got mcpSession
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	return got
}

// The check: an agent on the official TypeScript SDK lists the
// tools with their schemas, calls each one and gets results its client
// validates against their output schemas; log shows the purified retry's
// orphaned attempt; branch and note move refs; a reset whose expect
// another writer made stale returns the conflict; one answer to an
// escalation wins. Over stdio and over tract serve's HTTP.
func TestMCP_TypeScriptClientSession(t *testing.T) {
	t.Parallel()
	nodeModules(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			failed, escalation := mcpRepository(t, s)
			env := []string{"MCP_TRANSPORT=" + transport, "REPO_DIR=" + s.dir, "SANDBOX_ENV=" + sandboxEnv(t, s),
				"FAILED=" + failed, "ESCALATION=" + escalation}
			if transport == "http" {
				_, addr := startServe(t, s.withEnv("TRACT_SERVE_TOKEN", "mcp-secret"))
				env = append(env, "MCP_URL=http://"+addr+"/mcp", "MCP_TOKEN=mcp-secret")
			}
			got := runMCPSession(t, env...)

			var names []string
			for _, tl := range got.Tools {
				names = append(names, tl.Name)
				assert.Equal(t, slices.Contains(mcpReadTools, tl.Name), tl.ReadOnly, tl.Name)
			}
			slices.Sort(names)
			assert.Equal(t, slices.Sorted(slices.Values(append(slices.Clone(mcpReadTools), mcpWriteTools...))), names)
			for _, name := range names {
				assert.Positive(t, got.Calls[name], "%s was called and succeeded", name)
				assert.Equal(t, got.Calls[name], got.Validated[name], "the client validated each result of %s against its output schema", name)
			}

			// log: the branch, and with all the purified attempt beside it.
			require.NotEmpty(t, got.Log.Commits)
			assert.Equal(t, goodJSON, got.Log.Commits[0].Text)
			found := false
			for _, o := range got.LogAll.Orphans {
				for _, c := range o.Commits {
					if c.Hash == failed {
						found = true
						assert.Equal(t, "purify", o.Action)
						assert.Equal(t, badJSON, c.Text)
						assert.Contains(t, string(c.Meta), `"diagnosis"`)
					}
				}
			}
			assert.True(t, found, "log with all lists the orphaned attempt %s", failed)
			assert.Equal(t, failed, got.Show.Hash)
			assert.Equal(t, failed, got.CommitResource.Hash)
			assert.Len(t, got.Compile.Messages, 2)
			assert.Len(t, got.BranchesResource, 2+1, "main, night and mcp-try")

			// branch and note moved refs, as the CLI sees them.
			assert.Equal(t, "mcp-try", got.Branch.Name)
			tip := decodeJSON[commitInfo](t, s.ok("show", "--json", "mcp-try"))
			assert.Equal(t, got.Note.Hash, tip.Hash)
			assert.Equal(t, "note", tip.Kind)
			assert.Equal(t, []string{got.Branch.Hash}, tip.Parents)
			require.NotEmpty(t, got.BranchResource.Commits)
			assert.Equal(t, got.Note.Hash, got.BranchResource.Commits[0].Hash, "tract://branch/mcp-try reads the branch's history")

			// The conflicting reset: a tool error naming the move; nothing moved.
			assert.Nil(t, got.Conflict)
			require.Len(t, got.Errors["reset"], 1)
			assert.Contains(t, got.Errors["reset"][0], "branch main moved from "+got.Status.Head[:8]+" to "+got.Moved.Hash[:8])
			assert.Contains(t, got.Errors["reset"][0], "Nothing was written")
			assert.Equal(t, got.Moved.Hash, got.AfterConflict.Head)
			assert.Equal(t, got.Moved.Hash, got.Reset.From)
			assert.Equal(t, got.Status.Head, got.Reset.To)
			head := decodeJSON[commitInfo](t, s.ok("show", "--json", "main"))
			assert.Equal(t, got.Status.Head, head.Hash, "the reset with the right expect went through")

			// One answer wins.
			assert.Equal(t, "answered", got.Answer.State)
			assert.Equal(t, "fix", got.Answer.Answer.Resolution)
			assert.Equal(t, "mcp:e2e-agent", got.Answer.Answer.By)
			assert.Nil(t, got.SecondAnswer)
			require.Len(t, got.Errors["answer_escalation"], 1)
			assert.Contains(t, got.Errors["answer_escalation"][0], "answered already")
			es := escalations(t, s)
			require.Len(t, es, 1)
			require.NotNil(t, es[0].Answer)
			assert.Equal(t, "use integers", es[0].Answer.Instruction)

			require.Len(t, got.Errors["show"], 1)
			assert.Contains(t, got.Errors["show"][0], "no-such-branch")
			s.fsckOK()
		})
	}
}

// Read-only mode: the writing tools are not listed, and a call to one
// fails; over stdio (tract mcp --read-only) and HTTP (tract serve
// --mcp-read-only).
func TestMCP_ReadOnlyRefusesWrites(t *testing.T) {
	t.Parallel()
	nodeModules(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			s.initRepo()
			s.commit("user", "hello")
			s.commit("assistant", "hi")
			before := s.snapshot()
			env := []string{"MCP_TRANSPORT=" + transport, "MCP_READ_ONLY=1", "REPO_DIR=" + s.dir, "SANDBOX_ENV=" + sandboxEnv(t, s)}
			if transport == "http" {
				_, addr := startServe(t, s.withEnv("TRACT_SERVE_TOKEN", "ro-secret"), "--mcp-read-only")
				env = append(env, "MCP_URL=http://"+addr+"/mcp", "MCP_TOKEN=ro-secret")
			}
			got := runMCPSession(t, env...)
			var names []string
			for _, tl := range got.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			assert.Equal(t, mcpReadTools, names)
			assert.Equal(t, "main", got.Status.Branch)
			refused, ok := got.ResetRefused.(string)
			require.True(t, ok, "the reset was refused: %v", got.ResetRefused)
			assert.Contains(t, refused, "reset")
			s.requireUnchanged(before)
		})
	}
}

// /mcp of tract serve requires the server's token in a header (the web
// view's login cookie is not an agent's), and refuses a Host that is not
// loopback (DNS rebinding) and cross-origin browser requests.
func TestMCP_ServeGuardsTheEndpoint(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	_, addr := startServe(t, s.withEnv("TRACT_SERVE_TOKEN", "guard-secret"))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login, err := noRedirect.PostForm("http://"+addr+"/login", url.Values{"token": {"guard-secret"}, "next": {"/"}})
	require.NoError(t, err)
	login.Body.Close()
	require.Len(t, login.Cookies(), 1)
	cookie := login.Cookies()[0]
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	post := func(header ...string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(initialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
				continue
			}
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"a wrong token", []string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"the token", []string{"Authorization", "Bearer guard-secret"}, http.StatusOK},
		{"the token as x-api-key", []string{"x-api-key", "guard-secret"}, http.StatusOK},
		{"the login cookie", []string{"Cookie", cookie.Name + "=" + cookie.Value}, http.StatusUnauthorized},
		{"a foreign Host", []string{"Authorization", "Bearer guard-secret", "Host", "evil.example:80"}, http.StatusForbidden},
		{"a cross-origin browser", []string{"Authorization", "Bearer guard-secret", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, post(tt.header...).StatusCode)
		})
	}
}

// A client connected to /mcp keeps a stream of server events open; tract
// serve still stops at once on SIGTERM, closing the MCP sessions instead
// of waiting its grace out.
func TestMCP_ServeStopsWithASessionOpen(t *testing.T) {
	t.Parallel()
	dir := nodeModules(t)
	s := newSandbox(t)
	s.initRepo()
	b, addr := startServe(t, s)
	script := filepath.Join(filepath.Dir(dir), "test-open-session.mjs")
	require.NoError(t, os.WriteFile(script, []byte(`
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const client = new Client({ name: 'idle-agent', version: '1' }, {});
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL)));
await client.listTools();
console.log('connected');
await new Promise((r) => setTimeout(r, 60000));
`), 0o600))
	t.Cleanup(func() { os.Remove(script) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", script)
	node.Dir = filepath.Dir(script)
	node.Env = append(os.Environ(), "MCP_URL=http://"+addr+"/mcp")
	stdout, err := node.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, node.Start())
	t.Cleanup(func() { cancel(); _ = node.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "connected\n", line)

	start := time.Now()
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	r := b.wait()
	requireExit(t, r, exitOK)
	assert.Less(t, time.Since(start), 10*time.Second, "tract serve waited for the MCP session to end:\n%s", r)
	assert.Contains(t, r.Stderr, "tract serve: stopped")
}
