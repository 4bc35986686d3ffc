package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// This file fuzzes what the CLI parses itself, beyond cobra's flags:
// --expire, TRACT_LOCK_TIMEOUT and --validate.

// checkUsageError checks an error the CLI reports as a usage error.
func checkUsageError(t *testing.T, err error, input string) {
	t.Helper()
	fuzzcheck.UserError(t, err)
	if code := exitCode(err); code != exitUsage {
		t.Fatalf("%q: exit code %d, want %d (usage): %v", input, code, exitUsage, err)
	}
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"now", "0", "7d", "30d", "12h", "90m", "1h30m", "-1d", "-5m", "d", "soon", "", "1e3h", "0d", " 7d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseAge(s)
		if err != nil {
			checkUsageError(t, err, s)
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("error does not quote the value %q: %v", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: negative age %v", s, d)
		}
		// The value means what it says.
		if days, ok := strings.CutSuffix(s, "d"); ok {
			n, err := strconv.Atoi(days)
			if err != nil || time.Duration(n)*24*time.Hour != d || d/(24*time.Hour) != time.Duration(n) {
				t.Fatalf("%q gave %v", s, d)
			}
		} else if s != "now" {
			if want, err := time.ParseDuration(s); err != nil || want != d {
				t.Fatalf("%q gave %v, time.ParseDuration says %v, %v", s, d, want, err)
			}
		}
	})
}

func FuzzLockTimeout(f *testing.F) {
	for _, s := range []string{"", "10s", "1m", "500ms", "0", "-1s", "soon", "1e3s", "9999999h"} {
		f.Add(s, int64(0), false)
	}
	f.Add("", int64(-time.Second), true)
	f.Add("soon", int64(time.Minute), true)
	f.Fuzz(func(t *testing.T, env string, flag int64, flagSet bool) {
		fac := newFactory(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
			func(k string) string {
				if k == "TRACT_LOCK_TIMEOUT" {
					return env
				}
				return ""
			})
		if flagSet {
			fac.LockTimeout, fac.LockTimeoutSet = time.Duration(flag), true
		}
		d, err := fac.lockTimeout()
		if err != nil {
			checkUsageError(t, err, env)
			if !flagSet && !strings.Contains(err.Error(), "TRACT_LOCK_TIMEOUT") {
				t.Fatalf("%q: error does not name TRACT_LOCK_TIMEOUT: %v", env, err)
			}
			return
		}
		switch {
		case d < 0:
			t.Fatalf("negative lock timeout %v", d)
		case flagSet && d != time.Duration(flag):
			t.Fatalf("--lock-timeout %v gave %v", time.Duration(flag), d)
		case !flagSet && env == "" && d != 5*time.Second:
			t.Fatalf("no setting gave %v, want the default 5s", d)
		}
	})
}

// refusingClient is a model client that is never asked: parsing a spec
// does not call the judge.
type refusingClient struct{}

func (refusingClient) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("the judge was called while parsing")
}

func FuzzParseValidators(f *testing.F) {
	dir := f.TempDir()
	require.NoError(f, os.WriteFile(filepath.Join(dir, "person.json"), []byte(`{"type": "object", "required": ["name"]}`), 0o644))
	for _, s := range []string{
		"json", "json\nmaxlen:200", "schema:person.json", "schema:missing.json", "regex:^[A-Z]\nregex:(",
		"contains:Summary", "maxlen:x", "minlen:-1", "cmd:true", "cmd:no-such-command-x", "llm:is polite", "", "\n", "nope",
	} {
		f.Add(s, true)
	}
	f.Add("llm:is polite", false)
	f.Fuzz(func(t *testing.T, list string, withModel bool) {
		var specs []string
		if list != "" {
			specs = strings.Split(list, "\n")
		}
		for _, s := range specs {
			if arg, ok := strings.CutPrefix(s, "schema:"); ok && strings.ContainsAny(arg, `/\`) {
				return // a schema outside dir: do not read the machine's files
			}
		}
		fac := newFactory(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
			func(string) string { return "" })
		fac.Getwd = func() (string, error) { return dir, nil }
		var client llm.Client
		if withModel {
			client = refusingClient{}
		}
		v, err := parseValidators(fac, specs, 0, client, "judge-model")
		if err != nil {
			checkUsageError(t, err, list)
			var se *retry.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %v is not a SpecError", list, err)
			}
			return
		}
		if len(specs) == 0 {
			if v != nil {
				t.Fatalf("no specs gave validator %q", v.Name())
			}
			return
		}
		if v == nil || v.Name() != strings.Join(specs, ", ") {
			t.Fatalf("%q gave a validator named %v", list, v)
		}
	})
}
