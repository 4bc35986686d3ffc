package tract

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// GraphFormat is a language WriteGraph draws the history in.
type GraphFormat = export.GraphFormat

const (
	// GraphDot is Graphviz's DOT language ('dot -Tsvg' draws it).
	GraphDot = export.GraphDot
	// GraphMermaid is a Mermaid flowchart, which Markdown renderers such
	// as GitHub's draw in a ```mermaid block.
	GraphMermaid = export.GraphMermaid
)

// GraphFormats returns the formats WriteGraph knows.
func GraphFormats() []GraphFormat { return export.GraphFormats() }

// GraphOption configures WriteGraph.
type GraphOption func(*graphConfig)

type graphConfig struct {
	all bool
	rev string
}

// GraphAll draws every commit of the repository: every branch and every
// orphan, as 'tract log --all' lists them.
func GraphAll() GraphOption { return func(c *graphConfig) { c.all = true } }

// GraphFrom draws the history of rev instead of HEAD's.
func GraphFrom(rev string) GraphOption { return func(c *graphConfig) { c.rev = rev } }

// WriteGraph writes the history as a graph in format: by default the
// commits HEAD (or GraphFrom's revision) reaches and the orphans that
// forked from them (its turns' failed attempts, the ranges its summaries
// replaced), with GraphAll every commit. Each commit is a node labelled
// with its short hash, its role or kind and the first line of its text,
// with an edge from each parent to it, oldest at the top. Branches and
// HEAD are labels pointing at their commits; orphans are dashed; failed
// attempts are red with their diagnosis; steering, notes and error commits
// have styles of their own; a summary is drawn as a note with an edge to
// the first and the last commit of the range it replaced. It reads the
// commits' texts a page at a time as it writes; export.GraphWriter writes
// the languages.
func (t *Tract) WriteGraph(ctx context.Context, w io.Writer, format GraphFormat, opts ...GraphOption) error {
	var cfg graphConfig
	for _, o := range opts {
		o(&cfg)
	}
	g, err := export.NewGraphWriter(w, format)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	// The refs first: the outline read after them holds every commit
	// they name (commits are never deleted but by gc).
	var (
		tip     Hash
		allRefs []refs.Ref
	)
	err = t.view(ctx, func(tx store.Tx) error {
		if !cfg.all {
			if tip, err = t.tipOf(tx, cfg.rev); err != nil {
				return err
			}
		}
		allRefs, err = tx.Refs()
		return err
	})
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	o, err := t.Outline(ctx)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	topo := o.Topo()
	if !cfg.all {
		topo, err = o.history(topo, tip)
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	drawn := make(map[Hash]bool, len(topo))
	hs := make([]Hash, len(topo))
	orphan := make(map[Hash]bool)
	for k, tc := range topo {
		hs[len(topo)-1-k] = tc.Hash // oldest first
		drawn[tc.Hash] = true
		if tc.Orphan {
			orphan[tc.Hash] = true
		}
	}
	for c, err := range o.Infos(ctx, hs) {
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
		if err := g.Commit(graphCommit(c, orphan[c.Hash]), drawn); err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	slices.SortFunc(allRefs, func(a, b refs.Ref) int { return strings.Compare(refOrder(a.Name), refOrder(b.Name)) })
	for _, r := range export.GraphRefs(allRefs, drawn) {
		if err := g.Ref(r); err != nil {
			return fmt.Errorf("graph: %w", err)
		}
	}
	if err := g.Close(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	return nil
}

// graphCommit is c as the drawing takes it.
func graphCommit(c *CommitInfo, orphan bool) export.GraphCommit {
	gc := export.GraphCommit{Hash: c.Hash, Parents: c.Parents, Kind: c.Kind, Role: c.Role, Text: c.Text, Orphan: orphan}
	if r, ok := c.FailureRecord(); ok {
		gc.Diagnosis = string(r.Type) + ": " + r.Error
	} else if c.Role == RoleAssistant && c.Kind == KindMessage {
		gc.Diagnosis = c.Diagnosis()
	}
	if r, ok := c.SummaryRecord(); ok {
		gc.Sources = r.Sources
	}
	return gc
}

// history keeps of topo the commits tip reaches and the orphans forked
// from them.
func (o *Outline) history(topo []TopoCommit, tip Hash) ([]TopoCommit, error) {
	if tip.IsZero() {
		return nil, nil
	}
	anc, err := o.g.Reachable(tip)
	if err != nil {
		return nil, err
	}
	in := func(h Hash) bool {
		i, ok := o.g.Index(h)
		return ok && anc[i]
	}
	out := topo[:0]
	for _, tc := range topo {
		if in(tc.Hash) || tc.Orphan && !tc.Fork.IsZero() && in(tc.Fork) {
			out = append(out, tc)
		}
	}
	return out, nil
}
