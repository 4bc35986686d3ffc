package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'tract import' of messages into a repository file calls ImportMemory
// once, with the environment, when its memory is bounded: an input of
// more than a batch into a repository without commits. An import into one
// with commits (the index is built as the import is published), an input
// of one batch, an import in the openai format, and the commands around
// them do not.
func TestRun_ImportCallsImportMemory(t *testing.T) {
	env := map[string]string{"GOGC": "77"}
	getenv := func(k string) string { return env[k] }
	var calls []string
	io := func(in string) *IOStreams {
		return &IOStreams{In: strings.NewReader(in), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
			ImportMemory: func(getenv func(string) string) { calls = append(calls, getenv("GOGC")) }}
	}
	var long strings.Builder // more than a batch
	for i := 0; long.Len() <= 2*importBatchBytes; i++ {
		fmt.Fprintf(&long, `{"role":"user","content":"message %d %s"}`+"\n", i, strings.Repeat("x", 300))
	}
	for _, tc := range []struct {
		name   string
		before []string // an import before
		input  string
		args   []string
		want   []string
	}{
		{"empty repository, more than a batch", nil, long.String(), nil, []string{"77"}},
		{"a repository with commits", []string{`{"role":"user","content":"hi"}`}, long.String(), nil, nil},
		{"one batch", nil, `{"role":"user","content":"hi"}` + "\n", nil, nil},
		{"openai format", nil, `{"messages":[{"role":"user","content":"hello"}]}` + "\n", []string{"--format", "openai"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			db := filepath.Join(t.TempDir(), "t.db")
			require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "init"}, io(""), getenv))
			for _, in := range tc.before {
				require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "import"}, io(in), getenv))
			}
			require.Empty(t, calls)
			require.Equal(t, exitOK, run(context.Background(), append([]string{"--db", db, "import"}, tc.args...), io(tc.input), getenv))
			require.Equal(t, exitOK, run(context.Background(), []string{"--db", db, "log", "-n", "1"}, io(""), getenv))
			assert.Equal(t, tc.want, calls)
		})
	}
}

// importMemory sets the memory limit and leaves the collector's percent,
// unless the environment sets GOGC or GOMEMLIMIT.
func TestImportMemory(t *testing.T) {
	limit := restoreGC(t)
	for _, tc := range []struct {
		env       map[string]string
		wantLimit int64
	}{
		{nil, importMemoryLimit},
		{map[string]string{"GOGC": "200"}, limit},
		{map[string]string{"GOMEMLIMIT": "2GiB"}, limit},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(limit)
		importMemory(func(k string) string { return tc.env[k] })
		assert.Equal(t, 100, debug.SetGCPercent(100), "%v", tc.env)
		assert.Equal(t, tc.wantLimit, debug.SetMemoryLimit(-1), "%v", tc.env)
	}
}
