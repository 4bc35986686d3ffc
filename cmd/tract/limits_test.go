package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

func TestFactory_Limits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flag  string // "" when --max-message-size is not given
		env   string
		want  int64 // 0: tract's default
		usage string
	}{
		{name: "neither", want: 0},
		{name: "flag", flag: "64MiB", want: 64 << 20},
		{name: "env", env: "512KiB", want: 512 << 10},
		{name: "flag over env", flag: "1000", env: "512KiB", want: 1000},
		{name: "bad flag", flag: "lots", usage: `--max-message-size "lots" is not a size`},
		{name: "a dash", flag: "-", usage: `--max-message-size "-" is not a size`},
		{name: "zero flag", flag: "0", usage: "must be 1 byte or more"},
		{name: "bad env", env: "16 MB please", usage: `TRACT_MAX_MESSAGE_SIZE="16 MB please" is not a size`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := testFactory(t, map[string]string{"TRACT_MAX_MESSAGE_SIZE": tc.env})
			f.MaxMessageSize, f.MaxMessageSizeSet = tc.flag, tc.flag != ""
			got, err := f.limits()
			if tc.usage != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.usage)
				assert.Equal(t, exitUsage, exitCode(err))
				_, err = f.options()
				assert.Equal(t, exitUsage, exitCode(err), "opening refuses it too")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tract.Limits{MessageSize: tc.want}, got)
		})
	}
}

// counting is an endless reader of 'x' that counts what it gave.
type counting struct{ n int64 }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

// Text from standard input is read up to the limit and a newline, never
// more, whatever waits behind it.
func TestReadText_StopsAtTheLimit(t *testing.T) {
	env := map[string]string{"TRACT_MAX_MESSAGE_SIZE": "1KiB"}
	for _, tc := range []struct {
		name string
		in   string
		want string // "" when too large
		size int64
		more bool
	}{
		{"at the limit", strings.Repeat("a", 1024), strings.Repeat("a", 1024), 0, false},
		{"at the limit and a newline", strings.Repeat("a", 1024) + "\n", strings.Repeat("a", 1024), 0, false},
		{"one byte over", strings.Repeat("a", 1025), "", 1025, false},
		{"over and a newline", strings.Repeat("a", 1025) + "\n", "", 1024, true},
		{"far over", strings.Repeat("a", 5000), "", 1024, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := testFactory(t, env)
			f.IO.In = strings.NewReader(tc.in)
			got, err := readText(f, "", false)
			if tc.want != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			var tl *tract.TooLargeError
			require.ErrorAs(t, err, &tl)
			assert.Equal(t, tract.TooLargeError{What: "standard input", Size: tc.size, More: tc.more, Limit: 1024, Which: tract.LimitMessageSize}, *tl)
		})
	}
	t.Run("endless", func(t *testing.T) {
		f, _, _ := testFactory(t, nil)
		in := &counting{}
		f.IO.In = in
		_, err := readText(f, "-", true)
		var tl *tract.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.True(t, tl.More)
		assert.Equal(t, tract.DefaultMaxMessageSize, tl.Limit)
		assert.LessOrEqual(t, in.n, tract.DefaultMaxMessageSize+64<<10, "read no more than the limit and a buffer")
		assert.EqualError(t, err, "standard input is more than 16 MiB, over the message size limit (16 MiB)")
	})
	t.Run("a failing reader", func(t *testing.T) {
		f, _, _ := testFactory(t, nil)
		f.IO.In = io.MultiReader(strings.NewReader("abc"), iotestErr{})
		_, err := readText(f, "-", true)
		assert.EqualError(t, err, "read standard input: disk on fire")
	})
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestTooLarge_HintAndExitCode(t *testing.T) {
	for _, tc := range []struct {
		which tract.SizeLimit
		hint  string
	}{
		{tract.LimitMessageSize, "--max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE"},
		{tract.LimitLineSize, "4 times the message size limit and 1 MiB of metadata"},
		{tract.LimitInputSize, "--max-input SIZE or TRACT_MAX_INPUT"},
		{tract.LimitMetaSize, "Metadata may hold at most 1 MiB: keep larger data in the text."},
	} {
		err := &tract.TooLargeError{What: "it", Size: 2 << 20, Limit: 1 << 20, Which: tc.which}
		wrapped := &usageError{errors.Join(errors.New("import"), err)}
		for _, e := range []error{err, wrapped} {
			assert.Contains(t, errorHint(e), tc.hint, "%s", tc.which)
			assert.Equal(t, exitUsage, exitCode(e))
		}
	}
}

func TestNewCmdImport_Flags(t *testing.T) {
	got, err := parse(t, newCmdImport, "--max-input", "16GiB", "--branch", "b", "in.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "16GiB", got.MaxInput)
	assert.True(t, got.MaxInputSet)
	assert.Equal(t, "in.jsonl", got.File)

	got, err = parse(t, newCmdImport)
	require.NoError(t, err)
	assert.False(t, got.MaxInputSet)
}
