package refs_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

func TestValidateBranchName_AcceptsGitStyleNames(t *testing.T) {
	for _, name := range []string{
		"main", "feature/x", "feature/x/y", "v1.2", "fix-123", "a_b", "UPPER", "日本語",
		"x.y", "a-", "@", "a@b", "refs/heads/x", "HEADS", "head",
	} {
		assert.NoError(t, refs.ValidateBranchName(name), "%q", name)
	}
}

func TestValidateBranchName_RejectsAndSaysWhy(t *testing.T) {
	tests := []struct {
		name, why string
	}{
		{"", "empty"},
		{"HEAD", "reserved"},
		{"ORIG_HEAD", "reserved"},
		{"-x", "cannot start with '-'"},
		{"a..b", "'..'"},
		{"..", "'..'"},
		{"a@{1}", "'@{'"},
		{"x/", "cannot end with '/' or '.'"},
		{"x.", "cannot end with '/' or '.'"},
		{"my branch", "spaces"},
		{"tab\there", "spaces"},
		{"nl\nhere", "control characters"},
		{"nul\x00", "control characters"},
		{"del\x7f", "control characters"},
		{"a~1", `'~'`},
		{"a^", `'^'`},
		{"a:b", `':'`},
		{"a?", `'?'`},
		{"a*", `'*'`},
		{"a[b", `'['`},
		{`a\b`, `'\\'`},
		{"a//b", "empty component"},
		{"/a", "empty component"},
		{"x.lock", "'.lock'"},
		{"x.lock/y", "'.lock'"},
		{".hidden", "cannot start with '.'"},
		{"a/.b", "cannot start with '.'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := refs.ValidateBranchName(tt.name)
			require.Error(t, err)
			assert.ErrorIs(t, err, refs.ErrInvalidName)
			assert.Contains(t, err.Error(), tt.why)
			assert.True(t, strings.HasPrefix(err.Error(), "invalid branch name "), err.Error())
		})
	}
}

func TestBranchRefAndBranchName(t *testing.T) {
	assert.Equal(t, "refs/heads/feature/x", refs.BranchRef("feature/x"))
	name, ok := refs.BranchName("refs/heads/feature/x")
	assert.True(t, ok)
	assert.Equal(t, "feature/x", name)
	_, ok = refs.BranchName(refs.HEAD)
	assert.False(t, ok)
}

func TestRef_EncodeDecodeRoundTrip(t *testing.T) {
	h := dag.Sum([]byte("commit"))
	tests := []struct {
		name    string
		ref     refs.Ref
		encoded []byte
	}{
		{"direct", refs.Ref{Name: "refs/heads/main", Hash: h}, h[:]},
		{"detached HEAD", refs.Ref{Name: refs.HEAD, Hash: h}, h[:]},
		{"symbolic HEAD", refs.Ref{Name: refs.HEAD, Target: "refs/heads/main"}, []byte("ref: refs/heads/main")},
		// A symbolic value of exactly 32 bytes must still read as symbolic.
		{"symbolic, 32 bytes", refs.Ref{Name: refs.HEAD, Target: "refs/heads/abcdefghijklmnop"}, []byte("ref: refs/heads/abcdefghijklmnop")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.ref.Encode()
			assert.Equal(t, tt.encoded, b)
			got, err := refs.DecodeRef(tt.ref.Name, b)
			require.NoError(t, err)
			assert.Equal(t, tt.ref, got)
			assert.Equal(t, tt.ref.Target != "", got.IsSymbolic())
		})
	}
}

func TestRef_EncodeDoesNotAliasTheHash(t *testing.T) {
	r := refs.Ref{Name: "x", Hash: dag.Sum([]byte("a"))}
	b := r.Encode()
	b[0] ^= 0xff
	assert.Equal(t, dag.Sum([]byte("a")), r.Hash)
}

func TestDecodeRef_RejectsMalformedValues(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("ref: "), make([]byte, 31), make([]byte, 33), []byte("refs/heads/main")} {
		_, err := refs.DecodeRef("refs/heads/x", b)
		require.Error(t, err, "%q", b)
		assert.Contains(t, err.Error(), "neither a hash nor a symbolic ref")
		assert.Contains(t, err.Error(), "refs/heads/x")
	}
}
