package refs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tractdag/tract/dag"
)

// Revision is a parsed revision expression: a base name, optionally a
// reflog position, followed by ancestry steps, e.g. "main~2^" is Base
// "main" with steps ~2 and ^1, and "HEAD@{1}~2" is Base "HEAD" at
// Reflog 1 with step ~2.
type Revision struct {
	// Base is a hash (full or abbreviated), "HEAD", "ORIG_HEAD", a branch
	// name or a full ref name; with InReflog, a ref or branch name, or
	// STRANDED.
	Base string
	// InReflog says that the revision starts at Reflog: BASE@{N} is where
	// the ref Base pointed N moves ago, the New of the reflog entry that
	// 'tract reflog' lists as BASE@{N} (0 is the newest move).
	InReflog bool
	Reflog   int
	// Steps are applied left to right.
	Steps []Step

	// What ParseRevision read: the expression as written, where each step
	// ends in it, and the canonical form of Base and Steps then (String
	// quotes src only while they are unchanged).
	src   string
	ends  []int
	canon string
}

// Step is one ancestry operator.
type Step struct {
	// Op is '~' (go back N first parents) or '^' (take the Nth parent).
	Op byte
	// N is the operator's count; "~" and "^" alone mean 1, "^0" the commit itself.
	N int
}

// String returns the expression as it was written when ParseRevision made
// the revision ("HEAD^^" stays "HEAD^^"), so that messages quote what the
// user typed. A revision built, or changed, by hand is rendered
// canonically, every count written out ("HEAD^1^1").
func (r Revision) String() string {
	c := r.canonical(len(r.Steps))
	if r.src != "" && c == r.canon {
		return r.src
	}
	return c
}

// canonical renders Base and the first n steps, every count written out.
func (r Revision) canonical(n int) string {
	var b strings.Builder
	b.WriteString(r.start())
	for _, s := range r.Steps[:n] {
		b.WriteByte(s.Op)
		b.WriteString(strconv.Itoa(s.N))
	}
	return b.String()
}

// prefix names the commit reached after the first n steps and k moves of
// step n (a "~" step), as the user would write it: "HEAD^^" then "~2".
func (r Revision) prefix(n, k int) string {
	p := r.canonical(n)
	if r.src != "" && r.canonical(len(r.Steps)) == r.canon {
		p = r.start()
		if n > 0 {
			p = r.src[:r.ends[n-1]]
		}
	}
	if k > 0 {
		p += "~" + strconv.Itoa(k)
	}
	return p
}

// start renders Base and, in a reflog, its position: "main@{2}".
func (r Revision) start() string {
	if !r.InReflog {
		return r.Base
	}
	return r.Base + "@{" + strconv.Itoa(r.Reflog) + "}"
}

// ParseRevision splits a revision expression into its base, reflog
// position and steps. It checks syntax only; Resolve finds the commit.
func ParseRevision(s string) (Revision, error) {
	bad := func(why string) (Revision, error) {
		return Revision{}, fmt.Errorf("%w %q: %s", ErrBadRevision, s, why)
	}
	if s == "" {
		return bad("the revision is empty; name a branch, a commit hash or HEAD")
	}
	i := strings.IndexAny(s, "~^")
	if i < 0 {
		i = len(s)
	}
	rev := Revision{Base: s[:i], src: s}
	if rev.Base == "" {
		return bad("a revision needs a name or hash before '~' or '^'")
	}
	if name, at, ok := strings.Cut(rev.Base, "@{"); ok {
		n, err := strconv.Atoi(strings.TrimSuffix(at, "}"))
		switch {
		case name == "":
			return bad("name a ref before @{N}: HEAD@{1}, main@{2}")
		case !strings.HasSuffix(at, "}") || err != nil || n < 0 || strings.ContainsAny(at, "+-"):
			return Revision{}, &ReflogPositionError{Rev: s, Ref: name}
		case n > 1_000_000_000:
			return bad("the count is too large")
		}
		rev.Base, rev.InReflog, rev.Reflog = name, true, n
	}
	for rest := s[i:]; rest != ""; {
		op := rest[0]
		rest = rest[1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n := 1
		if j > 0 {
			v, err := strconv.Atoi(rest[:j])
			if err != nil || v > 1_000_000_000 {
				return bad("the count is too large")
			}
			n = v
		}
		if j < len(rest) && rest[j] != '~' && rest[j] != '^' {
			return bad(fmt.Sprintf("unexpected %q after %c (use REV~N or REV^N)", rest[j:], op))
		}
		rev.Steps = append(rev.Steps, Step{Op: op, N: n})
		rest = rest[j:]
		rev.ends = append(rev.ends, len(s)-len(rest))
	}
	rev.canon = rev.canonical(len(rev.Steps))
	return rev, nil
}

// Resolver is what Resolve needs from a repository.
type Resolver interface {
	// ResolveRef returns the commit the full ref name points at, following
	// symbolic refs; ok is false when the ref does not exist or is unborn.
	ResolveRef(name string) (h dag.Hash, ok bool, err error)
	// CommitsWithPrefix returns up to limit commits whose lowercase hex hash
	// starts with prefix.
	CommitsWithPrefix(prefix string, limit int) ([]dag.Hash, error)
	// Commit returns a stored commit or an error wrapping ErrNotFound.
	Commit(h dag.Hash) (*dag.Commit, error)
}

// ReflogResolver is a Resolver that reads reflogs: ResolveRevision needs
// one for a revision in a reflog (REF@{N}).
type ReflogResolver interface {
	Resolver
	// ReflogTail returns the newest n entries of the reflog of the full
	// ref name (or Stranded), oldest first: fewer when it has fewer, none
	// when it has no reflog. A reflog grows with every move of its ref, so
	// it is read from its end.
	ReflogTail(name string, n int) ([]Entry, error)
}

// ChainResolver is a Resolver that follows many first parents in one
// call (store.Resolver of a database: one query): ResolveRevision uses it
// for a step such as ~5000.
type ChainResolver interface {
	Resolver
	// FirstParents returns up to n commits of the first-parent chain
	// from h, h first; fewer when the chain ends at a root.
	FirstParents(h dag.Hash, n int) ([]dag.Hash, error)
}

// ReflogPositionError is returned for a revision whose "@{…}" is not a
// position in a reflog, REF@{N} with N a count of moves back from 0
// ("main@{yesterday}", "HEAD@{-1}"). It matches ErrBadRevision.
type ReflogPositionError struct {
	// Rev is the revision as given; Ref is the name before its "@{".
	Rev, Ref string
}

// Error says what is understood instead.
func (e *ReflogPositionError) Error() string {
	return fmt.Sprintf("%v %q: only REF@{N} is understood, N counting moves back in REF's reflog", ErrBadRevision, e.Rev)
}

// Unwrap returns ErrBadRevision.
func (e *ReflogPositionError) Unwrap() error { return ErrBadRevision }

// AmbiguousError is returned for an abbreviated hash that matches several commits.
type AmbiguousError struct {
	// Prefix is the abbreviation the user gave.
	Prefix string
	// Candidates are (some of) the commits it matches.
	Candidates []dag.Hash
}

// Error returns the AmbiguousError message.
func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Candidates))
	for i, h := range e.Candidates {
		names[i] = h.String()[:16]
	}
	return fmt.Sprintf("ambiguous revision %q: it matches %d commits (%s); use more characters",
		e.Prefix, len(e.Candidates), strings.Join(names, ", "))
}

// maxCandidates bounds how many matches an AmbiguousError lists.
const maxCandidates = 10

// Resolve parses and resolves a revision expression to a commit hash.
func Resolve(r Resolver, expr string) (dag.Hash, error) {
	rev, err := ParseRevision(expr)
	if err != nil {
		return dag.Hash{}, err
	}
	return ResolveRevision(r, rev)
}

// ResolveRevision resolves a parsed revision. Names are tried in the order
// HEAD, ORIG_HEAD, full ref name, branch, then hash or abbreviated hash.
// A revision in a reflog (REF@{N}) needs r to be a ReflogResolver.
func ResolveRevision(r Resolver, rev Revision) (dag.Hash, error) {
	var h dag.Hash
	var err error
	if rev.InReflog {
		h, err = resolveReflog(r, rev)
	} else {
		h, err = resolveBase(r, rev.Base)
	}
	if err != nil {
		return dag.Hash{}, err
	}
	for i, s := range rev.Steps {
		if s.Op == '^' && s.N == 0 {
			continue
		}
		count, nth := s.N, 0
		if s.Op == '^' {
			count, nth = 1, s.N-1
		}
		skipped := 0
		if cr, ok := r.(ChainResolver); ok && count > 1 {
			// All but the last step at once; the last one below, as
			// one step is, so that a chain too short fails the same.
			hs, err := cr.FirstParents(h, count)
			if err != nil {
				return dag.Hash{}, fmt.Errorf("resolve %s: %w", rev, err)
			}
			skipped = len(hs) - 1
			h = hs[skipped]
		}
		for k := skipped; k < count; k++ {
			c, err := r.Commit(h)
			if err != nil {
				return dag.Hash{}, fmt.Errorf("resolve %s: %w", rev, err)
			}
			if nth >= len(c.Parents) {
				return dag.Hash{}, fmt.Errorf("%w %q: commit %s (%s) has %s",
					ErrUnknownRevision, rev.String(), h.Short(), rev.prefix(i, k), parents(len(c.Parents)))
			}
			h = c.Parents[nth]
		}
	}
	return h, nil
}

// parents says how many parents a commit has: "no parent", "1 parent", …
func parents(n int) string {
	switch n {
	case 0:
		return "no parent"
	case 1:
		return "1 parent"
	}
	return strconv.Itoa(n) + " parents"
}

func resolveBase(r Resolver, name string) (dag.Hash, error) {
	candidates := []string{name}
	switch {
	case name == HEAD || name == OrigHead:
	case strings.HasPrefix(name, "refs/"):
		// A full ref name, else a branch whose name starts with "refs/".
		candidates = append(candidates, BranchRef(name))
	default:
		candidates = []string{BranchRef(name)}
	}
	for _, ref := range candidates {
		h, ok, err := r.ResolveRef(ref)
		if err != nil {
			return dag.Hash{}, err
		}
		if ok {
			return h, nil
		}
	}
	if name == HEAD {
		return dag.Hash{}, fmt.Errorf("%w %q: the current branch has no commits yet", ErrUnknownRevision, name)
	}
	if dag.IsHexPrefix(name) {
		hs, err := r.CommitsWithPrefix(strings.ToLower(name), maxCandidates)
		if err != nil {
			return dag.Hash{}, err
		}
		switch len(hs) {
		case 1:
			return hs[0], nil
		case 0:
		default:
			return dag.Hash{}, &AmbiguousError{Prefix: name, Candidates: hs}
		}
	}
	hint := "not a branch, ref or commit hash"
	if len(name) < dag.MinPrefixLen && dag.IsHexPrefix(name+"0000"[:dag.MinPrefixLen-len(name)]) {
		hint = fmt.Sprintf("abbreviated hashes need at least %d characters", dag.MinPrefixLen)
	}
	return dag.Hash{}, fmt.Errorf("%w %q: %s", ErrUnknownRevision, name, hint)
}

// ReflogRefs returns the full names of the refs whose reflog name may
// mean, in the order to try them: HEAD, ORIG_HEAD and Stranded stand for
// themselves; a name starting with "refs/" is a full ref name, else a
// branch whose name starts so; any other name is a branch.
func ReflogRefs(name string) []string {
	switch {
	case name == HEAD || name == OrigHead || name == Stranded:
		return []string{name}
	case strings.HasPrefix(name, "refs/"):
		return []string{name, BranchRef(name)}
	}
	return []string{BranchRef(name)}
}

// resolveReflog finds where the ref rev.Base names pointed rev.Reflog
// moves ago: the New of that reflog entry, counting from the newest.
// Names are tried as resolveBase tries them; STRANDED names its reflog.
func resolveReflog(r Resolver, rev Revision) (dag.Hash, error) {
	rr, ok := r.(ReflogResolver)
	if !ok {
		return dag.Hash{}, fmt.Errorf("%w %q: reflogs cannot be read here", ErrUnknownRevision, rev.String())
	}
	name := rev.Base
	var es []Entry
	for _, ref := range ReflogRefs(name) {
		var err error
		if es, err = rr.ReflogTail(ref, rev.Reflog+1); err != nil {
			return dag.Hash{}, err
		}
		if len(es) > 0 {
			break
		}
	}
	switch {
	case len(es) == 0:
		return dag.Hash{}, fmt.Errorf("%w %q: %s has no reflog", ErrUnknownRevision, rev.String(), name)
	case len(es) == 1 && rev.Reflog > 0:
		return dag.Hash{}, fmt.Errorf("%w %q: the reflog of %s has 1 entry, %s@{0}",
			ErrUnknownRevision, rev.String(), name, name)
	case len(es) <= rev.Reflog:
		return dag.Hash{}, fmt.Errorf("%w %q: the reflog of %s has %d entries, %s@{0} to %s@{%d}",
			ErrUnknownRevision, rev.String(), name, len(es), name, name, len(es)-1)
	}
	e := es[0] // the oldest of the newest Reflog+1
	if e.New.IsZero() {
		return dag.Hash{}, fmt.Errorf("%w %q: %s pointed at no commit then (%s)", ErrUnknownRevision, rev.String(), name, e.Message)
	}
	return e.New, nil
}

// IsNotFound reports whether err means a ref or commit does not exist.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnknownRevision)
}
