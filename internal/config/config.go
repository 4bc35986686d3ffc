// Package config reads and writes tract's per-user settings file: the
// defaults 'tract config' sets, such as the model a chat asks when no
// --model is given.
//
// The file is a JSON object of strings, {"model": "llama3.2"}, at
// $TRACT_CONFIG when set, else os.UserConfigDir()/tract/config.json
// ($XDG_CONFIG_HOME/tract/config.json or ~/.config/tract/config.json on
// Linux, ~/Library/Application Support/tract/config.json on macOS). It is
// written whole to a temporary file and renamed over the old one, with
// mode 0600. Only the keys Keys lists can be set; a key the file holds
// that this version does not know (one a newer tract wrote) is kept as it
// is and otherwise ignored.
//
// # Caveats
//
// Settings are per user, never in a repository: a repository is history
// that can be copied or shared, while the model and prompt one uses are
// one's own. No secret belongs here: API keys stay in the environment.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tractdag/tract/llm"
)

// EnvPath names the environment variable that overrides the file's path.
const EnvPath = "TRACT_CONFIG"

// Key is one setting.
type Key struct {
	// Name is the key as 'tract config' takes it.
	Name string
	// Env is the environment variable that overrides the file's value.
	Env string
	// Help says what the setting does.
	Help string
	// Values, when set, are the only values the setting may take (in
	// any case; Set stores them in lower case).
	Values []string
	// Check, when set, refuses a value the setting cannot take, with an
	// error that says what it takes.
	Check func(value string) error
}

// Keys returns the settings the file may hold, sorted by name.
func Keys() []Key {
	return []Key{
		{Name: "model", Env: "TRACT_MODEL", Help: "the model chat, the REPL and compress ask"},
		{Name: "system", Env: "TRACT_SYSTEM", Help: "the system prompt of chat and the REPL"},
		{Name: "provider", Env: "TRACT_PROVIDER", Help: "openai or anthropic (else by the model's name)",
			Values: []string{llm.ProviderOpenAI, llm.ProviderAnthropic}},
		{Name: "timeout", Env: "TRACT_TIMEOUT", Help: "how long a call waits for the next byte (default 2m)",
			Check: func(v string) error { _, err := ParseTimeout(v); return err }},
	}
}

// ParseTimeout reads a timeout: a duration such as 90s, 2m or 1h30m, or a
// whole number of seconds; 0 means no bound.
func ParseTimeout(s string) (time.Duration, error) {
	v := strings.TrimSpace(s)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a timeout: give a duration such as 90s, 2m or 1h30m, or 0 for none", s)
	}
	return d, nil
}

// Lookup returns the key named name, or an *UnknownKeyError.
func Lookup(name string) (Key, error) {
	for _, k := range Keys() {
		if k.Name == name {
			return k, nil
		}
	}
	return Key{}, &UnknownKeyError{Name: name}
}

// UnknownKeyError reports a key that is not a setting.
type UnknownKeyError struct {
	Name string
}

// Error lists the keys there are.
func (e *UnknownKeyError) Error() string {
	names := make([]string, 0, len(Keys()))
	for _, k := range Keys() {
		names = append(names, k.Name)
	}
	return fmt.Sprintf("unknown setting %q: the settings are %s", e.Name, strings.Join(names, ", "))
}

// DefaultPath returns the file's path: getenv(EnvPath) when set, else
// tract/config.json under os.UserConfigDir.
func DefaultPath(getenv func(string) string) (string, error) {
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("config: no directory for settings (set %s to a file path): %w", EnvPath, err)
	}
	return filepath.Join(dir, "tract", "config.json"), nil
}

// File is the settings file, as read by Load.
type File struct {
	path   string
	values map[string]string
}

// Load reads the file at path; a missing file holds no settings. A file
// that is not a JSON object of strings is an error naming it.
func Load(path string) (*File, error) {
	f := &File{path: path, values: map[string]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(b, &f.values); err != nil {
		return nil, fmt.Errorf("config: %s is not a JSON object of strings (fix or remove it): %w", path, err)
	}
	return f, nil
}

// Path returns where the file is.
func (f *File) Path() string { return f.path }

// Get returns the value of key and whether it is set.
func (f *File) Get(key string) (string, bool) {
	v, ok := f.values[key]
	return v, ok
}

// Set sets key to value; an unknown key is an *UnknownKeyError, and an
// empty value (use Unset) or one the key does not take an error. Save
// writes the change.
func (f *File) Set(key, value string) error {
	k, err := Lookup(key)
	if err != nil {
		return err
	}
	if value == "" {
		return fmt.Errorf("config: empty value for %s: to remove the setting, unset it", key)
	}
	if !utf8.ValidString(value) {
		// The file is JSON, which would store U+FFFD in its place.
		return fmt.Errorf("config: the value for %s is not valid UTF-8", key)
	}
	if k.Values != nil {
		v := strings.ToLower(strings.TrimSpace(value))
		if !slices.Contains(k.Values, v) {
			return fmt.Errorf("config: %s cannot be %q: want %s", key, value, strings.Join(k.Values, " or "))
		}
		value = v
	}
	if k.Check != nil {
		if err := k.Check(value); err != nil {
			return fmt.Errorf("config: %s: %w", key, err)
		}
	}
	f.values[key] = value
	return nil
}

// Unset removes key and reports whether it was set. Save writes the
// change.
func (f *File) Unset(key string) (bool, error) {
	if _, err := Lookup(key); err != nil {
		return false, err
	}
	_, ok := f.values[key]
	delete(f.values, key)
	return ok, nil
}

// Settings returns the known keys that are set, sorted by name.
func (f *File) Settings() []string {
	var out []string
	for _, k := range Keys() {
		if _, ok := f.values[k.Name]; ok {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Save writes the file, creating its directory (mode 0700) if needed.
func (f *File) Save() error {
	b, err := json.MarshalIndent(f.values, "", "  ")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("config: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("config: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
