package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// SearchOptions are the inputs of 'tract search'.
type SearchOptions struct {
	Factory *Factory
	Query   string
	Limit   int
	JSON    bool
}

func newCmdSearch(f *Factory, runF func(*SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find commits holding words, newest first, in every branch",
		Long: `Find the commits whose text or diagnosis holds every word of QUERY, in
every branch and among orphaned attempts, newest first. Words are letters
and digits, matched whole and regardless of case; a word ending in '*' is
a prefix ('valid*' matches "validation"). One line a commit, as 'log
--oneline', the words marked on a terminal.`,
		Example: `  tract search integer overflow
  tract search 'valid*' -n 5
  tract search timeout --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("search needs a query: the words to find, such as 'tract search invalid json'")
			}
			if len(args) > search.MaxTerms {
				return usageErrorf("a query has at most %d words, got %d arguments", search.MaxTerms, len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			if opts.Limit < 0 {
				return usageErrorf("-n must be 0 (no limit) or more, got %d", opts.Limit)
			}
			if _, err := parseSearchQuery(opts.Query); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return searchRun(cmd, opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "max-count", "n", 0, "show the `N` newest matches (or -N, as in git)")
	markCountShorthand(cmd, "max-count")
	addJSONFlag(cmd, &opts.JSON, "print JSON", "search")
	return cmd
}

// parseSearchQuery parses a query, a usage error when it has no word.
func parseSearchQuery(q string) (search.Query, error) {
	parsed, err := search.ParseQuery(q)
	switch {
	case errors.Is(err, search.ErrEmptyQuery):
		return parsed, usageErrorf("search %q: the query has no word to find (words are letters and digits)", q)
	case errors.Is(err, search.ErrTooManyTerms):
		return parsed, usageErrorf("search %q: a query has at most %d words", q, search.MaxTerms)
	}
	return parsed, err
}

func searchRun(cmd *cobra.Command, opts *SearchOptions) error {
	f := opts.Factory
	ctx := cmd.Context()
	q, err := parseSearchQuery(opts.Query)
	if err != nil {
		return err
	}
	p := palette{f.IO.Color}
	return withTract(f, func(t *tract.Tract) error {
		seq := t.Search(ctx, q, tract.SearchLimit(opts.Limit))
		return withPager(f, func() error {
			if opts.JSON {
				return writeSearchJSON(f.IO.Out, q, seq)
			}
			w, done := fitOut(f)
			defer done()
			n := 0
			for c, err := range seq {
				if err != nil {
					return err
				}
				if _, err := fmt.Fprintln(w, searchLine(p, q, c)); err != nil {
					return err
				}
				n++
			}
			if n == 0 {
				fmt.Fprintf(f.IO.ErrOut, "No commit holds %s.\n", q)
			}
			return nil
		})
	})
}

// searchLine renders a match as 'log --oneline' does, the text from a
// little before its first matched word, and the diagnosis after it when
// it has one, each matched word marked. The texts pass the screen
// sanitiser (through preview) before the marks go in.
func searchLine(p palette, q search.Query, c *tract.CommitInfo) string {
	var b strings.Builder
	b.WriteString(p.hash(c.Hash.Short()))
	if len(c.Refs) > 0 {
		b.WriteString(" " + p.refs("("+strings.Join(c.Refs, ", ")+")"))
	}
	b.WriteString(" " + label(c) + ": ")
	b.WriteString(mark(p, q, preview(snippet(q, c.Text), 72)))
	if d := c.Diagnosis(); d != "" {
		b.WriteString("  " + p.bad("✗ ") + mark(p, q, preview(snippet(q, d), 80)))
	}
	return b.String()
}

// snippet cuts text to start a few words before its first matched word
// on that word's line, so that the match shows in a preview.
func snippet(q search.Query, text string) string {
	spans := q.Highlight(text)
	if len(spans) == 0 {
		return text
	}
	at := spans[0].Start
	if i := strings.LastIndexAny(text[:at], "\r\n"); i >= 0 {
		text, at = text[i+1:], at-i-1
	}
	if at <= 24 {
		return text
	}
	start := at - 20
	for start < at && (text[start]&0xc0) == 0x80 {
		start++ // a character's start
	}
	return "…" + text[start:]
}

// mark wraps the words of s that q matches in the match colour.
func mark(p palette, q search.Query, s string) string {
	if !p.on {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range q.Highlight(s) {
		b.WriteString(s[last:sp.Start])
		b.WriteString(p.match(s[sp.Start:sp.End]))
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// writeSearchJSON writes the query and the matches seq yields, streamed.
func writeSearchJSON(w io.Writer, q search.Query, seq iter.Seq2[*tract.CommitInfo, error]) error {
	query, err := json.Marshal(q.String())
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "{\n  \"query\": "+string(jsonSafe(query))+",\n  \"commits\": "); err != nil {
		return err
	}
	if err := writeJSONCommits(w, seq); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}
