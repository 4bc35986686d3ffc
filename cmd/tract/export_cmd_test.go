package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/export"
)

func TestNewCmdExport_Flags(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	def := func(o ExportOptions) ExportOptions {
		if o.Format == "" {
			o.Format = export.OpenAI
		}
		if o.Weights == "" {
			o.Weights = export.WeightsRecorded
		}
		return o
	}
	cases := []struct {
		args    []string
		want    ExportOptions
		wantErr string
	}{
		{args: nil, want: def(ExportOptions{})},
		{args: []string{"feature~1", "-o", "x.jsonl", "--weight", "assistant-last"},
			want: def(ExportOptions{Rev: "feature~1", Output: "x.jsonl", Weights: export.WeightsAssistantLast})},
		{args: []string{"--all", "-f", "trl-kto", "--task", "t-1", "--validator", "cmd", "--min-attempts", "2", "--since", at.Format(time.RFC3339)},
			want: def(ExportOptions{All: true, Format: export.TRLKTO, Task: "t-1", Validator: "cmd", MinAttempts: 2, Since: at})},
		{args: []string{"--branch", "a", "--branch", "b", "--format", "openai-preference", "--until", at.Format(time.RFC3339)},
			want: def(ExportOptions{Branches: []string{"a", "b"}, Format: export.OpenAIPreference, Until: at})},
		{args: []string{"--format", "csv"}, wantErr: `unknown export format "csv"`},
		{args: []string{"--weight", "all"}, wantErr: `unknown weighting "all"`},
		{args: []string{"-f", "trl-preference", "--weight", "none"}, wantErr: "--weight applies to the openai format"},
		{args: []string{"--all", "main"}, wantErr: "give it or a revision"},
		{args: []string{"--branch", "a", "main"}, wantErr: "--branch selects what to export"},
		{args: []string{"--branch", ""}, wantErr: "--branch"},
		{args: []string{"--min-attempts", "-2"}, wantErr: "--min-attempts must be 0 or more"},
		{args: []string{"--until", "yesterday"}, wantErr: `--until "yesterday"`},
		{args: []string{"a", "b"}, wantErr: "at most one revision"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parse(t, newCmdExport, tc.args...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.True(t, isUsage(err), "a usage error: %v", err)
				return
			}
			require.NoError(t, err)
			got.Factory = nil
			assert.Equal(t, tc.want, *got)
		})
	}
}

// Export and import through the commands with fake streams: data on
// stdout, the summary on stderr; the openai file imports back.
func TestRun_ExportImport(t *testing.T) {
	f, out, errOut := testFactory(t, nil)
	db := filepath.Join(t.TempDir(), "t.db")
	exec := func(stdin string, args ...string) int {
		out.Reset()
		errOut.Reset()
		f.IO.In = strings.NewReader(stdin)
		root := newRootCmd(f)
		root.SetArgs(append([]string{"--db", db}, args...))
		cmd, err := root.ExecuteContextC(context.Background())
		if err != nil {
			return printError(f, cmd, err)
		}
		return exitOK
	}
	require.Equal(t, exitOK, exec("", "init"))
	require.Equal(t, exitOK, exec(`[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]`, "import"))

	require.Equal(t, exitOK, exec("", "export"))
	const line = `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}` + "\n"
	assert.Equal(t, line, out.String())
	assert.Equal(t, "Exported 1 conversation (openai)\n", errOut.String())

	require.Equal(t, exitOK, exec("", "export", "-f", "trl-kto"))
	assert.Empty(t, out.String(), "no validated turn")
	assert.Equal(t, "Exported 0 lines from 0 validated turns (trl-kto)\n", errOut.String())

	require.Equal(t, exitOK, exec(line+line, "import", "--format", "openai", "--name", "copy"))
	assert.Equal(t, "Imported 2 conversations (4 messages) onto branches copy-1 … copy-2\n", errOut.String())
	require.Equal(t, exitOK, exec("", "export", "--branch", "copy-2"))
	assert.Equal(t, line, out.String())

	assert.Equal(t, exitUsage, exec(line, "import", "--format", "openai", "--name", "copy"))
	assert.Contains(t, errOut.String(), "branch already exists: copy-1")
	assert.Contains(t, errOut.String(), "--name NAME")
	assert.Equal(t, exitUsage, exec("", "import", "--format", "openai"))
	assert.Contains(t, errOut.String(), "no conversations to import")
}
