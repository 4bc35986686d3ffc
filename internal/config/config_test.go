package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/config"
)

func TestFile_SetSaveLoadUnset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	f, err := config.Load(path)
	require.NoError(t, err)
	assert.Empty(t, f.Settings())

	require.NoError(t, f.Set("model", "llama3.2"))
	require.NoError(t, f.Set("system", "Answer briefly.\nIn English."))
	require.NoError(t, f.Save())
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	g, err := config.Load(path)
	require.NoError(t, err)
	v, ok := g.Get("system")
	assert.True(t, ok)
	assert.Equal(t, "Answer briefly.\nIn English.", v)
	assert.Equal(t, []string{"model", "system"}, g.Settings())

	was, err := g.Unset("model")
	require.NoError(t, err)
	assert.True(t, was)
	was, err = g.Unset("model")
	require.NoError(t, err)
	assert.False(t, was)
	require.NoError(t, g.Save())
	h, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"system"}, h.Settings())
}

func TestFile_RefusesUnknownKeysAndEmptyValues(t *testing.T) {
	f, err := config.Load(filepath.Join(t.TempDir(), "config.json"))
	require.NoError(t, err)
	var unknown *config.UnknownKeyError
	require.ErrorAs(t, f.Set("modle", "x"), &unknown)
	assert.Contains(t, unknown.Error(), "the settings are model, system")
	_, err = f.Unset("api_key")
	require.ErrorAs(t, err, &unknown)
	require.Error(t, f.Set("model", ""))
	// JSON would store U+FFFD instead of what was typed.
	assert.EqualError(t, f.Set("system", "caf\xe9"), "config: the value for system is not valid UTF-8")
	_, set := f.Get("system")
	assert.False(t, set)
}

func TestFile_ProviderTakesOnlyKnownProviders(t *testing.T) {
	tests := []struct {
		value, want, err string
	}{
		{value: "openai", want: "openai"},
		{value: " Anthropic ", want: "anthropic"},
		{value: "nosuch", err: `config: provider cannot be "nosuch": want openai or anthropic`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			f, err := config.Load(filepath.Join(t.TempDir(), "config.json"))
			require.NoError(t, err)
			err = f.Set("provider", tt.value)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				_, ok := f.Get("provider")
				assert.False(t, ok, "a refused value is not kept")
				return
			}
			require.NoError(t, err)
			got, _ := f.Get("provider")
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLoad_KeepsKeysOfNewerVersionsAndRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"model":"m","future":"x"}`), 0o600))
	f, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"model"}, f.Settings())
	require.NoError(t, f.Set("model", "n"))
	require.NoError(t, f.Save())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"future": "x"`)

	require.NoError(t, os.WriteFile(path, []byte(`["not", "an object"]`), 0o600))
	_, err = config.Load(path)
	require.ErrorContains(t, err, path)
}

func TestDefaultPath(t *testing.T) {
	p, err := config.DefaultPath(func(k string) string {
		if k == config.EnvPath {
			return "/x/tract.json"
		}
		return ""
	})
	require.NoError(t, err)
	assert.Equal(t, "/x/tract.json", p)
}
