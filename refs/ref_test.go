package refs_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/refs"
)

func TestValidateBranchName_AcceptsGitStyleNames(t *testing.T) {
	for _, name := range []string{
		"main", "feature/x", "feature/x/y", "v1.2", "fix-123", "a_b", "UPPER", "日本語",
		"x.y", "a-", "@@", "a@", "@a", "a@b", "stranded", "STRANDED/x", "refs/heads/x", "HEADS", "head",
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
		{"STRANDED", "reserved for the reflog"},
		{"@", "'@' alone is reserved"},
		{"--x", "cannot start with '-'"},
		{"a/b.lock", "'.lock'"},
		{"@{", "'@{'"},
		{"esc\x1b[0m", "control characters"},
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
		{"caf\xe9", "valid UTF-8"},
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

// One limit on every backend: 255 bytes (git's practical one, a ref
// being a file name there), counted in bytes, not characters; the error
// quotes only the start of a long name.
func TestValidateBranchName_Length(t *testing.T) {
	for _, name := range []string{strings.Repeat("a", 255), strings.Repeat("日", 85), "x/" + strings.Repeat("b", 253)} {
		assert.NoError(t, refs.ValidateBranchName(name), "%d bytes", len(name))
	}
	for _, n := range []int{256, 4096, 32760, 40000} {
		name := strings.Repeat("a", n)
		err := refs.ValidateBranchName(name)
		require.ErrorIs(t, err, refs.ErrInvalidName, "%d bytes", n)
		assert.Equal(t, fmt.Sprintf(`invalid branch name "%s…": a name is at most 255 bytes, and this one has %d`, strings.Repeat("a", 64), n), err.Error())
	}
	err := refs.ValidateBranchName(strings.Repeat("日", 86)) // 258 bytes, 86 characters
	require.ErrorIs(t, err, refs.ErrInvalidName)
	assert.Contains(t, err.Error(), `"`+strings.Repeat("日", 21)+`…"`, "cut at a character boundary")
	assert.Contains(t, err.Error(), "has 258")
}

func TestShortName(t *testing.T) {
	assert.Equal(t, "main", refs.ShortName("main"))
	assert.Equal(t, strings.Repeat("x", 64), refs.ShortName(strings.Repeat("x", 64)))
	assert.Equal(t, strings.Repeat("x", 64)+"…", refs.ShortName(strings.Repeat("x", 65)))
	assert.True(t, utf8.ValidString(refs.ShortName(strings.Repeat("é", 100))))
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

func FuzzDecodeRef(f *testing.F) {
	h := dag.Sum([]byte("hello"))
	for _, b := range [][]byte{
		refs.Ref{Name: "HEAD", Target: "refs/heads/main"}.Encode(),
		refs.Ref{Name: "refs/heads/main", Hash: h}.Encode(),
		[]byte("ref: "), []byte("ref:"), {}, h[:31], append(h[:], 0),
	} {
		f.Add("HEAD", b)
	}
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		r, err := refs.DecodeRef(name, b)
		if err != nil {
			fuzzcheck.UserError(t, err)
			return
		}
		if r.Name != name {
			t.Fatalf("ref named %q decodes as %q", name, r.Name)
		}
		if got := r.Encode(); !bytes.Equal(got, b) {
			t.Fatalf("Encode(DecodeRef(b)) != b:\n b   %q\n got %q", b, got)
		}
	})
}

// oneBranch is a repository with one branch and one commit.
type oneBranch struct {
	name string
	tip  dag.Hash
}

func (r oneBranch) ResolveRef(name string) (dag.Hash, bool, error) {
	return r.tip, name == refs.BranchRef(r.name), nil
}

func (oneBranch) CommitsWithPrefix(string, int) ([]dag.Hash, error) { return nil, nil }

func (r oneBranch) Commit(h dag.Hash) (*dag.Commit, error) {
	return nil, fmt.Errorf("commit %s: %w", h.Short(), refs.ErrNotFound)
}

// A branch may be named like a full ref; the full ref wins, as in git.
func TestResolve_BranchNamedLikeAFullRef(t *testing.T) {
	tip := dag.Sum([]byte("tip"))
	h, err := refs.Resolve(oneBranch{name: "refs/x", tip: tip}, "refs/x")
	require.NoError(t, err)
	assert.Equal(t, tip, h)
}

func FuzzValidateBranchName(f *testing.F) {
	for _, s := range []string{
		"main", "feature/x", "v1.2", "日本語", "@", "a@b", "refs/heads/x", "", "HEAD", "-x", "a..b", "a@{1}",
		"a/", "a.", "a b", "a\x01", "a~1", "a^", "a:b", "//", "a//b", ".a", "a/.b", "a.lock", "a/b.lock/c",
	} {
		f.Add(s)
	}
	tip := dag.Sum([]byte("tip"))
	f.Fuzz(func(t *testing.T, name string) {
		err := refs.ValidateBranchName(name)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, refs.ErrInvalidName) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidName", name, err)
			}
			return
		}
		// A valid name can be shown (JSON keeps only valid UTF-8) and
		// named in a revision, which finds the branch.
		if !utf8.ValidString(name) {
			t.Fatalf("accepted %q, which is not valid UTF-8", name)
		}
		rev, err := refs.ParseRevision(name)
		if err != nil || rev.Base != name || len(rev.Steps) != 0 {
			t.Fatalf("branch %q parses as revision %+v, %v", name, rev, err)
		}
		if short, ok := refs.BranchName(refs.BranchRef(name)); !ok || short != name {
			t.Fatalf("branch %q comes back as %q", name, short)
		}
		h, err := refs.Resolve(oneBranch{name: name, tip: tip}, name)
		if err != nil || h != tip {
			t.Fatalf("branch %q does not resolve to its tip: %v, %v", name, h, err)
		}
	})
}
