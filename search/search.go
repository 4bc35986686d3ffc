// Package search matches the texts of commits: regular expressions as
// 'tract log --grep' takes them (Grep), and queries of words as 'tract
// search' takes them (Query), with the tokeniser both sides of a word
// search share (Words).
//
// A word is a run of Unicode letters and digits, lower-cased; a run
// longer than MaxWordLen bytes is cut there, at a character boundary.
// Everything else separates words.
package search

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/tractdag/tract/internal/words"
)

// MaxWordLen is the longest word, in bytes, that Words returns: a longer
// run of letters and digits is cut to its first MaxWordLen bytes.
const MaxWordLen = words.MaxLen

// MaxTerms is the most terms a query may have.
const MaxTerms = 8

// Errors of ParseQuery.
var (
	// ErrEmptyQuery is returned for a query without a word.
	ErrEmptyQuery = errors.New("the query has no word (words are letters and digits)")
	// ErrTooManyTerms is returned for a query of more than MaxTerms terms.
	ErrTooManyTerms = fmt.Errorf("the query has more than %d terms", MaxTerms)
)

// Span is a word's place in a text: the bytes text[Start:End].
type Span struct {
	Start, End int
}

// wordSpans calls fn with each word of text, lower-cased and cut to
// MaxWordLen, and its span in text (the whole run, uncut).
func wordSpans(text string, fn func(word string, s Span) bool) {
	words.Spans(text, func(w string, start, end int) bool { return fn(w, Span{start, end}) })
}

// Words returns the distinct words of text, in the order they first
// appear.
func Words(text string) []string {
	var out []string
	seen := make(map[string]bool)
	wordSpans(text, func(w string, _ Span) bool {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
		return true
	})
	return out
}

// Query is a parsed word query: a text matches when it holds every one
// of its terms (they are ANDed). A term is a word, or, written with a
// trailing '*' ("valid*"), a prefix that any word starting with it
// matches.
type Query struct {
	terms []term
}

type term struct {
	word   string
	prefix bool
}

// ParseQuery parses q: its words as Words finds them, each of which a
// '*' right after makes a prefix. A query without a word is
// ErrEmptyQuery; one of more than MaxTerms distinct terms,
// ErrTooManyTerms.
func ParseQuery(q string) (Query, error) {
	var out Query
	seen := make(map[term]bool)
	wordSpans(q, func(w string, s Span) bool {
		t := term{word: w, prefix: strings.HasPrefix(q[s.End:], "*")}
		if !seen[t] {
			seen[t] = true
			out.terms = append(out.terms, t)
		}
		return true
	})
	if len(out.terms) == 0 {
		return Query{}, fmt.Errorf("query %q: %w", q, ErrEmptyQuery)
	}
	if len(out.terms) > MaxTerms {
		return Query{}, fmt.Errorf("query %q: %w", q, ErrTooManyTerms)
	}
	return out, nil
}

// String returns the query as ParseQuery reads it back: its terms
// separated by spaces.
func (q Query) String() string {
	parts := make([]string, len(q.terms))
	for i, t := range q.terms {
		parts[i] = t.word
		if t.prefix {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, " ")
}

// Terms returns the query's words (a prefix with its trailing '*').
func (q Query) Terms() []string { return strings.Fields(q.String()) }

func (t term) matches(w string) bool {
	if t.prefix {
		return strings.HasPrefix(w, t.word)
	}
	return w == t.word
}

// Match reports whether the texts, taken together, hold every term of q.
func (q Query) Match(texts ...string) bool {
	if len(q.terms) == 0 || !q.mayMatch(texts) {
		return false
	}
	found := make([]bool, len(q.terms))
	left := len(q.terms)
	for _, text := range texts {
		wordSpans(text, func(w string, _ Span) bool {
			for i, t := range q.terms {
				if !found[i] && t.matches(w) {
					found[i] = true
					left--
				}
			}
			return left > 0
		})
		if left == 0 {
			return true
		}
	}
	return false
}

// mayMatch is Match's quick test: false when a term is sure to be
// missing, because it is ASCII and no text of pure ASCII holds it, in
// any case, as a substring (a word holds its prefix). A text with other
// characters is left to the tokeniser: lower-casing some of them gives
// ASCII letters (KELVIN SIGN gives 'k').
func (q Query) mayMatch(texts []string) bool {
	for _, t := range texts {
		if !isASCII(t) {
			return true
		}
	}
	for _, tm := range q.terms {
		if !isASCII(tm.word) {
			return true
		}
		found := false
		for _, t := range texts {
			if containsFoldASCII(t, tm.word) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether s holds sub, ASCII letters compared
// regardless of case; sub is lower-case and not empty.
func containsFoldASCII(s, sub string) bool {
	first := sub[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper -= 'a' - 'A'
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// Highlight returns the spans of text's words that a term of q matches,
// in order: what a display marks.
func (q Query) Highlight(text string) []Span {
	var out []Span
	wordSpans(text, func(w string, s Span) bool {
		for _, t := range q.terms {
			if t.matches(w) {
				out = append(out, s)
				break
			}
		}
		return true
	})
	return out
}

// Grep matches texts against regular expressions (Go's syntax, RE2), as
// 'git log --grep' does: a text matches when any pattern matches in it,
// or, with AllMatch, when every pattern matches in one of the texts.
type Grep struct {
	patterns []*regexp.Regexp
	allMatch bool
}

// GrepOption configures NewGrep.
type GrepOption func(*grepConfig)

type grepConfig struct {
	ignoreCase, allMatch bool
}

// IgnoreCase matches letters regardless of case (git's -i).
func IgnoreCase() GrepOption { return func(c *grepConfig) { c.ignoreCase = true } }

// AllMatch requires every pattern to match, rather than any (git's
// --all-match).
func AllMatch() GrepOption { return func(c *grepConfig) { c.allMatch = true } }

// PatternError is returned by NewGrep for a pattern that does not
// compile.
type PatternError struct {
	// Pattern is the pattern as given.
	Pattern string
	// Err is the regexp package's error.
	Err error
}

// Error returns the PatternError message.
func (e *PatternError) Error() string {
	return fmt.Sprintf("pattern %q: %v", e.Pattern, e.Err)
}

// Unwrap returns the regexp package's error.
func (e *PatternError) Unwrap() error { return e.Err }

// NewGrep compiles patterns (at least one). A pattern that does not
// compile is a *PatternError.
func NewGrep(patterns []string, opts ...GrepOption) (*Grep, error) {
	var cfg grepConfig
	for _, o := range opts {
		o(&cfg)
	}
	if len(patterns) == 0 {
		return nil, errors.New("grep: no pattern given")
	}
	g := &Grep{allMatch: cfg.allMatch}
	for _, p := range patterns {
		expr := p
		if cfg.ignoreCase {
			expr = "(?i)" + p
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, &PatternError{Pattern: p, Err: err}
		}
		g.patterns = append(g.patterns, re)
	}
	return g, nil
}

// Match reports whether texts (a commit's text and its diagnosis, say)
// match: any pattern in any text, or, with AllMatch, each pattern in one
// of them. An empty text is skipped (a commit without a diagnosis does
// not match "^$").
func (g *Grep) Match(texts ...string) bool {
	for _, re := range g.patterns {
		hit := false
		for _, t := range texts {
			if t != "" && re.MatchString(t) {
				hit = true
				break
			}
		}
		if hit && !g.allMatch {
			return true
		}
		if !hit && g.allMatch {
			return false
		}
	}
	return g.allMatch
}
