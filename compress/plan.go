package compress

import (
	"fmt"
	"slices"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
)

// Item is one commit of the range to compress, as much of it as planning
// and summarizing need.
type Item struct {
	// Hash names the commit; it is listed in the Sources of the summary
	// that replaces it.
	Hash dag.Hash
	Kind dag.Kind
	Role dag.Role
	// Text is the commit's content.
	Text string
	// Pinned marks a commit pinned explicitly (through its metadata or an
	// option of the caller): it is kept whatever its kind or role.
	Pinned bool
}

// Group is a stretch of the new chain: either one pinned item that is kept
// as it is, or a run of items that one summary replaces.
type Group struct {
	// Keep is true for a pinned item, kept in place; Items then holds
	// exactly that item. When Keep is false, Items is the run that one
	// summary replaces, oldest first.
	Keep  bool
	Items []Item
}

// Sources returns the hashes of g's items, in order.
func (g Group) Sources() []dag.Hash {
	hs := make([]dag.Hash, len(g.Items))
	for i, it := range g.Items {
		hs[i] = it.Hash
	}
	return hs
}

// PlanResult is what Plan decided for a range.
type PlanResult struct {
	// Groups is the new chain in order: kept items and runs to summarize.
	// At least one group has Keep false.
	Groups []Group
	// Dropped holds the items of kind error and note, in order; they are
	// left out of the new chain and are not summarized.
	Dropped []Item
}

// Summarized returns how many groups are to be summarized (have Keep false).
func (p *PlanResult) Summarized() int {
	n := 0
	for _, g := range p.Groups {
		if !g.Keep {
			n++
		}
	}
	return n
}

// PlanOption changes how Plan decides what is pinned.
type PlanOption func(*planConfig)

type planConfig struct {
	pin func(Item) bool
}

// defaultPinRoles are the roles Plan pins when no option says otherwise.
var defaultPinRoles = []dag.Role{dag.RoleSystem}

// PinRoles makes Plan pin the items whose role is one of roles, instead of
// the default (system messages only). PinRoles() with no roles pins
// nothing by role; explicitly pinned items are still kept.
func PinRoles(roles ...dag.Role) PlanOption {
	roles = slices.Clone(roles)
	return func(c *planConfig) {
		c.pin = func(it Item) bool { return slices.Contains(roles, it.Role) }
	}
}

// PinFunc makes Plan pin the items for which pin returns true, instead of
// the default rule (system messages). Explicitly pinned items are kept
// whatever pin says; items of kind error and note are dropped before pin is
// asked.
func PinFunc(pin func(Item) bool) PlanOption {
	return func(c *planConfig) { c.pin = pin }
}

// Plan lays out the new chain for a range of items, oldest first. Each item
// is, in this order of precedence:
//
//  1. kept in place, when it is explicitly pinned (Item.Pinned);
//  2. dropped, when its kind is error or note: it is listed in
//     PlanResult.Dropped and neither kept nor summarized;
//  3. kept in place, when the pin rule says so (by default: role system;
//     see PinRoles and PinFunc);
//  4. otherwise summarized: each maximal run of such items, with dropped
//     items skipped over, becomes one group that one summary replaces.
//
// Each kept item is a group of its own. Plan returns ErrEmptyRange for no
// items, and an error wrapping ErrNothingToSummarize when no item is left to
// summarize. It does not modify items.
func Plan(items []Item, opts ...PlanOption) (*PlanResult, error) {
	if len(items) == 0 {
		return nil, ErrEmptyRange
	}
	cfg := planConfig{pin: func(it Item) bool { return slices.Contains(defaultPinRoles, it.Role) }}
	for _, o := range opts {
		o(&cfg)
	}

	p := &PlanResult{}
	var run []Item // the run of items to summarize being collected
	flush := func() {
		if len(run) > 0 {
			p.Groups = append(p.Groups, Group{Items: run})
			run = nil
		}
	}
	kept := 0
	for _, it := range items {
		switch {
		case it.Pinned:
		case it.Kind == dag.KindError || it.Kind == dag.KindNote:
			p.Dropped = append(p.Dropped, it)
			continue
		case cfg.pin != nil && cfg.pin(it):
		default:
			run = append(run, it)
			continue
		}
		flush()
		p.Groups = append(p.Groups, Group{Keep: true, Items: []Item{it}})
		kept++
	}
	flush()

	if p.Summarized() == 0 {
		return nil, fmt.Errorf("%w: every commit of the range (%s) is pinned (%d) or dropped as an error or note (%d)",
			ErrNothingToSummarize, english.Count(len(items), "commit", "commits"), kept, len(p.Dropped))
	}
	return p, nil
}
