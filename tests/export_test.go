package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// jsonLines decodes each line of out.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %q", l)
		lines = append(lines, v)
	}
	return lines
}

// A validated turn that failed once, exported in every format; the openai
// export imported into another repository and exported again gives the
// same bytes.
func TestExport_FormatsAndRoundTrip(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("not json"), llmtest.Answer(`{"ok":true}`), llmtest.Answer("Hi."))
	s := newSandbox(t)
	s.initRepo()
	c := chatEnv(s, srv)
	requireExit(t, c.tract("chat", "--task", "t-1", "--validate", "json", "Give JSON."), exitOK)
	requireExit(t, c.tract("chat", "Hello"), exitOK)

	user := map[string]any{"role": "user", "content": "Give JSON."}
	accepted := map[string]any{"role": "assistant", "content": `{"ok":true}`}
	rejected := map[string]any{"role": "assistant", "content": "not json"}

	r := s.ok("export")
	assert.Equal(t, []map[string]any{{"messages": []any{user, accepted,
		map[string]any{"role": "user", "content": "Hello"}, map[string]any{"role": "assistant", "content": "Hi."}}}}, jsonLines(t, r.Stdout))
	assert.Contains(t, r.Stderr, "Exported 1 conversation (openai)")

	tests := []struct {
		format string
		want   []map[string]any
	}{
		{"openai-preference", []map[string]any{{"input": map[string]any{"messages": []any{user}},
			"preferred_output": []any{accepted}, "non_preferred_output": []any{rejected}}}},
		{"trl-preference", []map[string]any{{"prompt": []any{user}, "chosen": []any{accepted}, "rejected": []any{rejected}}}},
		{"trl-kto", []map[string]any{
			{"prompt": []any{user}, "completion": []any{accepted}, "label": true},
			{"prompt": []any{user}, "completion": []any{rejected}, "label": false}}},
	}
	for _, tt := range tests {
		r := s.ok("export", "--all", "--format", tt.format, "--validator", "json", "--min-attempts", "2")
		assert.Equal(t, tt.want, jsonLines(t, r.Stdout), tt.format)
	}
	assert.Empty(t, s.ok("export", "--all", "-f", "trl-kto", "--task", "other").Stdout)

	// Round trip through a file.
	file := filepath.Join(s.dir, "sft.jsonl")
	r = s.ok("export", "--all", "--weight", "assistant-last", "-o", file)
	assert.Empty(t, r.Stdout)
	first, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(first), `"weight":0`)

	other := s.withEnv("TRACT_DB", filepath.Join(s.dir, "other.db"))
	other.ok("init")
	r = other.ok("import", "--format", "openai", "--name", "sft", file)
	assert.Contains(t, r.Stderr, "Imported 1 conversation (4 messages) onto branch sft-1")
	assert.Equal(t, string(first), other.ok("export", "--all").Stdout)
	assert.Equal(t, string(first), other.ok("export", "sft-1").Stdout)
	requireExit(t, other.tract("import", "--format", "openai", "--name", "sft", file), exitUsage)
}

func TestExport_Errors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "hi")
	bad := filepath.Join(s.dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"messages":[{"role":"user","content":"a"}]}`+"\n"+`{"messages":[],"x":1}`+"\n"), 0o600))
	out := filepath.Join(s.dir, "out.jsonl")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o600))
	tests := []struct {
		args    []string
		code    int
		wantErr string
	}{
		{[]string{"export", "--format", "csv"}, exitUsage, `unknown export format "csv"`},
		{[]string{"export", "--all", "main"}, exitUsage, "--all exports the whole repository"},
		{[]string{"export", "--branch", "main", "--all"}, exitUsage, "--branch selects what to export"},
		{[]string{"export", "--format", "trl-kto", "--weight", "none"}, exitUsage, "--weight applies to the openai format"},
		{[]string{"export", "--since", "soon"}, exitUsage, `--since "soon"`},
		{[]string{"export", "--since", "1d", "--until", "2d"}, exitUsage, "must be before --until"},
		{[]string{"export", "--min-attempts", "-1"}, exitUsage, "--min-attempts must be 0 or more"},
		{[]string{"export", "--branch", "nope"}, exitNotFound, "no such branch"},
		{[]string{"export", "nope", "-o", out}, exitNotFound, "nope"},
		{[]string{"export", "-o", s.dir}, exitUsage, "write " + s.dir + ": it is a directory: name a file"},
		{[]string{"export", "-o", filepath.Join(s.dir, "none", "x.jsonl")}, exitError, "cannot create a file in " + filepath.Join(s.dir, "none")},
		{[]string{"graph", "-o", s.dir}, exitUsage, "it is a directory"},
		{[]string{"import", "--format", "openai", bad}, exitUsage, `line 2: field "x" is not supported`},
		{[]string{"import", "--format", "yaml"}, exitUsage, `--format "yaml"`},
		{[]string{"import", "--format", "openai", "--branch", "main"}, exitUsage, "not on --branch main"},
		{[]string{"import", "--name", "x"}, exitUsage, "--name names the branches of --format openai"},
	}
	for _, tt := range tests {
		r := s.tract(tt.args...)
		requireExit(t, r, tt.code)
		assertNoCrash(t, r)
		assert.Contains(t, r.Stderr, tt.wantErr, strings.Join(tt.args, " "))
	}
	old, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(old), "a failed export leaves -o FILE as it was")
	entries, err := os.ReadDir(s.dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp", "no temporary file left behind")
	}
	branches := decodeJSON[[]map[string]any](t, s.ok("branch", "--json"))
	assert.Len(t, branches, 1, "a refused import made no branch")
}

// -o FILE replaces a file whole and keeps its permissions; a new file
// gets 0600 from export and graph alike (both hold message text), as the
// repository file and the --events log do, whatever the umask.
func TestExport_OutputModes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "hi")
	kept := filepath.Join(s.dir, "kept.jsonl")
	require.NoError(t, os.WriteFile(kept, []byte("old\n"), 0o640))
	require.NoError(t, os.Chmod(kept, 0o640)) // whatever the umask
	tests := []struct {
		args []string
		file string
		mode os.FileMode
	}{
		{[]string{"export", "-o", kept}, kept, 0o640},
		{[]string{"export", "-o", filepath.Join(s.dir, "new.jsonl")}, filepath.Join(s.dir, "new.jsonl"), 0o600},
		{[]string{"graph", "-o", filepath.Join(s.dir, "g.dot")}, filepath.Join(s.dir, "g.dot"), 0o600},
		{[]string{"graph", "--format", "mermaid", "-o", filepath.Join(s.dir, "g.md")}, filepath.Join(s.dir, "g.md"), 0o600},
	}
	for _, tt := range tests {
		s.ok(tt.args...)
		st, err := os.Stat(tt.file)
		require.NoError(t, err)
		assert.Equal(t, tt.mode, st.Mode().Perm(), strings.Join(tt.args, " "))
	}
	b, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"content":"hi"`)
}
