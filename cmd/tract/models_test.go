package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

func TestNewCmdModels_Flags(t *testing.T) {
	got, err := parse(t, newCmdModels, "--provider", "anthropic", "--json")
	require.NoError(t, err)
	assert.Equal(t, "anthropic", got.ModelFlags.Provider)
	assert.True(t, got.JSON)

	_, err = parse(t, newCmdModels, "--provider", "nope")
	assert.Equal(t, exitUsage, exitCode(err))
	_, err = parse(t, newCmdModels, "extra")
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestModelFlags_ChatAndCompress(t *testing.T) {
	chat, err := parse(t, newCmdChat, "--provider", "anthropic", "--max-tokens", "512", "--structured", "off", "hi")
	require.NoError(t, err)
	assert.Equal(t, ModelFlags{Provider: "anthropic", MaxTokens: 512, Structured: "off"}, chat.ModelFlags)

	chat, err = parse(t, newCmdChat, "hi")
	require.NoError(t, err)
	assert.Equal(t, ModelFlags{Structured: "auto"}, chat.ModelFlags, "auto by default")

	comp, err := parse(t, newCmdCompress, "--provider", "openai", "--max-tokens", "100")
	require.NoError(t, err)
	assert.Equal(t, ModelFlags{Provider: "openai", MaxTokens: 100, Structured: "auto"}, comp.ModelFlags)

	for _, args := range [][]string{{"--structured", "yes", "hi"}, {"--max-tokens", "-1", "hi"}, {"--provider", "x", "hi"}} {
		_, err = parse(t, newCmdChat, args...)
		assert.Equal(t, exitUsage, exitCode(err), "%v", args)
	}
}

func TestModelFlags_Schema(t *testing.T) {
	f, _, _ := testFactory(t, nil)
	dir, _ := f.Getwd()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a b.json"), []byte(`{"type":"object"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list.json"), []byte(`[1]`), 0o644))

	cases := []struct {
		name     string
		mode     string
		specs    []string
		want     string // the schema's name; "" none
		wantExit int
	}{
		{"one schema", "auto", []string{"json", "schema:a b.json"}, "a_b", 0},
		{"off", "off", []string{"schema:a b.json"}, "", 0},
		{"two schemas send none", "auto", []string{"schema:a b.json", "schema:a b.json"}, "", 0},
		{"no schema", "auto", []string{"json"}, "", 0},
		{"missing file", "auto", []string{"schema:missing.json"}, "", exitUsage},
		{"not an object", "auto", []string{"schema:list.json"}, "", exitUsage},
	}
	for _, tc := range cases {
		mf := ModelFlags{Structured: tc.mode}
		s, err := mf.schema(f, tc.specs)
		if tc.wantExit != 0 {
			assert.Equal(t, tc.wantExit, exitCode(err), tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		if tc.want == "" {
			assert.Nil(t, s, tc.name)
			continue
		}
		require.NotNil(t, s, tc.name)
		assert.Equal(t, tc.want, s.Name, tc.name)
	}
}

func TestModelsRun(t *testing.T) {
	srv := llmtest.NewServer(t).Models("m-1", "m-2")
	f, out, _ := testFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL()})
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())

	require.NoError(t, modelsRun(cmd, &ModelsOptions{Factory: f}))
	assert.Equal(t, "m-1\nm-2\n", out.String())

	out.Reset()
	require.NoError(t, modelsRun(cmd, &ModelsOptions{Factory: f, JSON: true}))
	assert.JSONEq(t, `[{"id":"m-1","object":"model","created":1700000000,"owned_by":"scriptserver"},
		{"id":"m-2","object":"model","created":1700000000,"owned_by":"scriptserver"}]`, out.String())
}

func TestModelsRun_EmptyList(t *testing.T) {
	srv := llmtest.NewServer(t)
	f, out, _ := testFactory(t, map[string]string{"OPENAI_BASE_URL": srv.URL()})
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())

	require.NoError(t, modelsRun(cmd, &ModelsOptions{Factory: f}))
	assert.Empty(t, out.String())
	require.NoError(t, modelsRun(cmd, &ModelsOptions{Factory: f, JSON: true}))
	assert.Equal(t, "[]\n", out.String())
}
