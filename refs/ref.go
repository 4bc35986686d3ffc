package refs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tractdag/tract/dag"
)

// Well-known ref names.
const (
	// HEAD names the current branch (attached) or commit (detached).
	HEAD = "HEAD"
	// OrigHead is set to the old position by every operation that moves
	// HEAD backwards or rewrites history (reset, purify, compress).
	OrigHead = "ORIG_HEAD"
	// BranchPrefix starts the full name of every branch.
	BranchPrefix = "refs/heads/"
	// SidePrefix starts the full name of the temporary ref of a side
	// chain under construction (see tract's SideChain).
	SidePrefix = "refs/side/"
	// EscalationPrefix starts the full name of the ref of an escalation
	// that waits in the repository for its answer (refs/escalations/ID,
	// see package escalation): it names the escalation's note, then its
	// answer, until the turn takes the answer up.
	EscalationPrefix = "refs/escalations/"
	// SalvagedPrefix starts the full name of the ref a salvage makes for
	// a chain of surviving commits that no other ref reaches.
	SalvagedPrefix = "refs/salvaged/"
	// DefaultBranch is the branch HEAD points at in a new repository.
	DefaultBranch = "main"
	// MaxBranchNameBytes is the longest branch name, in bytes, a new
	// branch may have, on every backend: git's practical limit (a ref is
	// a file name there), far below what any store can hold.
	MaxBranchNameBytes = 255
)

// Sentinel errors of package refs.
var (
	// ErrNotFound is returned for a ref that does not exist.
	ErrNotFound = errors.New("ref not found")
	// ErrInvalidName is returned for a branch name that breaks the naming rules.
	ErrInvalidName = errors.New("invalid branch name")
	// ErrUnknownRevision is returned when a revision names nothing.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrBadRevision is returned for revision syntax that cannot be parsed.
	ErrBadRevision = errors.New("bad revision syntax")
	// ErrReferenceChanged is returned by a compare-and-swap whose expected
	// old value no longer matches: another writer moved the ref first.
	ErrReferenceChanged = errors.New("reference has changed")
)

// Ref is a named pointer: either to a commit (Hash) or, when Target is set,
// symbolically to another ref (HEAD attached to a branch).
type Ref struct {
	// Name is the full ref name, e.g. "HEAD" or "refs/heads/main".
	Name string
	// Hash is the commit a direct ref points at.
	Hash dag.Hash
	// Target is the full name of the ref a symbolic ref points at.
	Target string
}

// IsSymbolic reports whether r points at another ref.
func (r Ref) IsSymbolic() bool { return r.Target != "" }

// BranchRef returns the full ref name of branch name.
func BranchRef(name string) string { return BranchPrefix + name }

// BranchName returns the short branch name of a full ref name, and whether
// full is a branch ref at all.
func BranchName(full string) (string, bool) {
	return strings.CutPrefix(full, BranchPrefix)
}

// Encode returns the stored form of a ref's value: "ref: TARGET" for a
// symbolic ref, 32 hash bytes for a direct one.
func (r Ref) Encode() []byte {
	if r.IsSymbolic() {
		return []byte("ref: " + r.Target)
	}
	return append([]byte(nil), r.Hash[:]...)
}

// DecodeRef parses a stored ref value.
func DecodeRef(name string, b []byte) (Ref, error) {
	if t, ok := strings.CutPrefix(string(b), "ref: "); ok && t != "" {
		return Ref{Name: name, Target: t}, nil
	}
	if len(b) != dag.HashSize {
		return Ref{}, fmt.Errorf("ref %s: stored value of %d bytes is neither a hash nor a symbolic ref", name, len(b))
	}
	return Ref{Name: name, Hash: dag.Hash(b)}, nil
}

// ValidateBranchName checks a short branch name against git's rules
// (git check-ref-format --branch), and that it is valid UTF-8: no spaces
// or control characters, none of ~ ^ : ? * [ \, no "..", no "@{", not
// "@" alone, no leading "-" or ".", no empty path component, no component
// ending in ".lock", no trailing "/" or ".", and at most
// MaxBranchNameBytes bytes. The names tract gives refs
// and reflogs of its own, HEAD, ORIG_HEAD and STRANDED, are reserved: a
// branch so named would be hidden behind them. The error says which rule
// the name breaks.
//
// Only new names are checked: a branch a tract with looser rules created
// (a "STRANDED" or "@") can still be switched to, used with --branch,
// listed and deleted, and is reached as refs/heads/NAME where the
// reserved name means something else ('tract reflog refs/heads/STRANDED').
// So is a longer name a store that took one holds.
func ValidateBranchName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidName, ShortName(name), why)
	}
	switch {
	case name == "":
		return bad("the name is empty")
	case len(name) > MaxBranchNameBytes:
		return bad(fmt.Sprintf("a name is at most %d bytes, and this one has %d", MaxBranchNameBytes, len(name)))
	case !utf8.ValidString(name):
		// JSON output could not show it, nor a revision name it back.
		return bad("a name must be valid UTF-8")
	case name == HEAD || name == OrigHead:
		return bad("the name is reserved")
	case name == Stranded:
		return bad("the name is reserved for the reflog of results conflicts kept off their branches")
	case name == "@":
		return bad("'@' alone is reserved (git reads it as HEAD)")
	case strings.HasPrefix(name, "-"):
		return bad("a name cannot start with '-'")
	case strings.Contains(name, ".."):
		return bad("a name cannot contain '..'")
	case strings.Contains(name, "@{"):
		return bad("a name cannot contain '@{'")
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return bad("a name cannot end with '/' or '.'")
	}
	for _, r := range name {
		switch {
		case r == ' ' || r == '\t':
			return bad("a name cannot contain spaces")
		case r < 0x20 || r == 0x7f:
			return bad("a name cannot contain control characters")
		case strings.ContainsRune("~^:?*[\\", r):
			return bad(fmt.Sprintf("a name cannot contain %q", r))
		}
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "":
			return bad("a name cannot contain an empty component ('//')")
		case strings.HasPrefix(part, "."):
			return bad("a name component cannot start with '.'")
		case strings.HasSuffix(part, ".lock"):
			return bad("a name component cannot end with '.lock'")
		}
	}
	return nil
}

// shortNameBytes is how much of a long name ShortName keeps.
const shortNameBytes = 64

// ShortName returns name for an error message: a name longer than 64
// bytes is cut to its first 64 (at a character boundary) followed by
// "…", so that a name of kilobytes does not fill the screen.
func ShortName(name string) string {
	if len(name) <= shortNameBytes {
		return name
	}
	cut := shortNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}
