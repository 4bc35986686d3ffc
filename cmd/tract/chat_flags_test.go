package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewCmdChat_LLMStyleFlags(t *testing.T) {
	cases := []struct {
		args        []string
		model       string
		system      string
		cont, isNew bool
		wantErr     string
	}{
		{args: []string{"-m", "gpt", "-s", "Be brief.", "hi"}, model: "gpt", system: "Be brief."},
		{args: []string{"--model", "gpt", "--system", "S", "hi"}, model: "gpt", system: "S"},
		{args: []string{"-M", "old", "hi"}, model: "old"},
		{args: []string{"-c", "hi"}, cont: true},
		{args: []string{"-n", "hi"}, isNew: true},
		{args: []string{"--new", "hi"}, isNew: true},
		{args: []string{"-c", "-n", "hi"}, wantErr: "give one of them"},
		{args: []string{"-n", "--branch", "b", "hi"}, wantErr: "--branch works on another branch"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parse(t, newCmdChat, tc.args...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Equal(t, exitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.model, got.Model)
			assert.Equal(t, tc.system, got.System)
			assert.Equal(t, tc.cont, got.Continue)
			assert.Equal(t, tc.isNew, got.New)
		})
	}
}

func TestNewCmdConfig_Args(t *testing.T) {
	cases := []struct {
		args    []string
		want    ConfigOptions
		wantErr string
	}{
		{args: []string{"set", "model", "m"}, want: ConfigOptions{Action: "set", Key: "model", Value: "m"}},
		{args: []string{"get", "model"}, want: ConfigOptions{Action: "get", Key: "model"}},
		{args: []string{"unset", "system"}, want: ConfigOptions{Action: "unset", Key: "system"}},
		{args: []string{"list", "--json"}, want: ConfigOptions{Action: "list", JSON: true}},
		{args: []string{"set", "model"}, wantErr: "a KEY and a VALUE"},
		{args: []string{"get"}, wantErr: "a KEY"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			checkParse(t, newCmdConfig, tc.args, tc.want, tc.wantErr)
		})
	}
}

// Settings resolve flag > environment > file, with the file at
// $TRACT_CONFIG.
func TestFactory_SettingPrecedence(t *testing.T) {
	env := map[string]string{"TRACT_CONFIG": t.TempDir() + "/config.json"}
	f, _, _ := testFactory(t, env)
	require.NoError(t, configRun(&ConfigOptions{Factory: f, Action: "set", Key: "model", Value: "from-file"}))

	v, err := f.setting("model", "")
	require.NoError(t, err)
	assert.Equal(t, "from-file", v)
	env["TRACT_MODEL"] = "from-env"
	v, err = f.setting("model", "")
	require.NoError(t, err)
	assert.Equal(t, "from-env", v)
	v, err = f.setting("model", "from-flag")
	require.NoError(t, err)
	assert.Equal(t, "from-flag", v)
	v, err = f.setting("system", "")
	require.NoError(t, err)
	assert.Empty(t, v)
}

func TestDemo_Output(t *testing.T) {
	f, out, _ := testFactory(t, nil)
	f.DBFlag = t.TempDir() + "/demo.db"
	require.NoError(t, demoRun(t.Context(), &DemoOptions{Factory: f}))
	for _, want := range []string{"The model is scripted", "$ tract log --all --graph", "orphaned by purify", "$ tract stats", "The repository is kept at " + f.DBFlag} {
		assert.Contains(t, out.String(), want)
	}
}

// --cmd-timeout reaches the options of chat and compress as a duration,
// 30s when not given; a value that is not a positive duration is a usage
// error.
func TestNewCmd_CmdTimeout(t *testing.T) {
	cases := []struct {
		args    []string
		want    time.Duration
		wantErr string
	}{
		{args: nil, want: 30 * time.Second},
		{args: []string{"--cmd-timeout", "2m"}, want: 2 * time.Minute},
		{args: []string{"--cmd-timeout", "1m30s"}, want: 90 * time.Second},
		{args: []string{"--cmd-timeout", "250ms"}, want: 250 * time.Millisecond},
		{args: []string{"--cmd-timeout", "soon"}, wantErr: `--cmd-timeout "soon" is not a duration`},
		{args: []string{"--cmd-timeout", "45"}, wantErr: "--cmd-timeout 45 has no unit: give 45s for seconds"},
		{args: []string{"--cmd-timeout", "0s"}, wantErr: "give a positive duration"},
		{args: []string{"--cmd-timeout", "-1m"}, wantErr: "give a positive duration"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			chat, chatErr := parse(t, newCmdChat, append(tc.args, "hi")...)
			compress, compressErr := parse(t, newCmdCompress, tc.args...)
			for _, err := range []error{chatErr, compressErr} {
				if tc.wantErr != "" {
					require.Error(t, err)
					assert.Contains(t, err.Error(), tc.wantErr)
					assert.Equal(t, exitUsage, exitCode(err))
				} else {
					require.NoError(t, err)
				}
			}
			if tc.wantErr == "" {
				assert.Equal(t, tc.want, chat.CmdTimeout)
				assert.Equal(t, tc.want, compress.CmdTimeout)
			}
		})
	}
}
