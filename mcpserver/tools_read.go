package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/search"
)

// LogInput is the input of the log tool.
type LogInput struct {
	Rev        string `json:"rev,omitempty" jsonschema:"the revision whose first-parent history to list: a branch, a hash (4 or more hex digits), HEAD, HEAD~2, main^; default HEAD. Not with all"`
	All        bool   `json:"all,omitempty" jsonschema:"list every commit a branch or HEAD reaches, and the orphaned chains beside them: failed attempts a validated retry purified away, with their diagnoses, and chains a reset or compress left"`
	Limit      int    `json:"limit,omitempty" jsonschema:"at most this many commits, newest first (default 50, at most 1000); with all, also at most this many orphaned chains, the newest, each of at most this many commits"`
	Grep       string `json:"grep,omitempty" jsonschema:"keep only the commits whose text or diagnosis this regular expression (Go's RE2 syntax) matches"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"grep ignores case"`
}

// LogResult is the output of the log tool: the object of log --json
// (log --all --json with all), and whether the limit left commits out.
type LogResult struct {
	Commits []*tract.CommitInfo  `json:"commits" jsonschema:"commit records, newest first"`
	Orphans []*tract.OrphanChain `json:"orphans" jsonschema:"with all: the chains of commits no branch or HEAD reaches, in the order their tips were made, each with fork (the commit it hangs off), its commits (newest first) and what orphaned it (action, reason, when); [] without all"`
	// Truncated says the limit left commits or chains out.
	Truncated bool `json:"truncated,omitempty" jsonschema:"the limit left commits or chains out: raise limit, or narrow with rev or grep"`
}

// ShowInput is the input of the show tool.
type ShowInput struct {
	Rev string `json:"rev,omitempty" jsonschema:"the commit: a hash (4 or more hex digits), a branch, HEAD, HEAD~1…; default HEAD"`
}

// CompileInput is the input of the compile tool.
type CompileInput struct {
	Rev          string `json:"rev,omitempty" jsonschema:"compile the chain ending at this revision; default HEAD"`
	IncludeNotes bool   `json:"include_notes,omitempty" jsonschema:"include note commits, which the model is not sent by default"`
}

// CompileResult is the output of the compile tool: the messages compile
// --json prints, under "messages".
type CompileResult struct {
	Messages []tract.Message `json:"messages" jsonschema:"the OpenAI chat messages the model is sent, oldest first"`
}

// StatusInput is the input of the status tool.
type StatusInput struct {
	Branch string `json:"branch,omitempty" jsonschema:"report on this branch instead of where HEAD is"`
}

// SearchInput is the input of the search tool.
type SearchInput struct {
	Query string `json:"query" jsonschema:"the words to find, all of them, in any order, whole and regardless of case; a word ending in * is a prefix (valid* matches validation)"`
	Limit int    `json:"limit,omitempty" jsonschema:"the newest this many matches (default 50, at most 1000)"`
}

// SearchResult is the output of the search tool: search --json's object.
type SearchResult struct {
	Query   string              `json:"query" jsonschema:"the query as parsed"`
	Commits []*tract.CommitInfo `json:"commits" jsonschema:"the matching commits of every branch and of the orphaned chains, newest first"`
}

// StatsInput is the input of the stats tool.
type StatsInput struct {
	Task  string `json:"task,omitempty" jsonschema:"only the tasks whose id starts with this prefix"`
	Since string `json:"since,omitempty" jsonschema:"only the turns since then: an RFC 3339 time (2026-01-26T14:00:00Z) or an age (90m, 12h, 7d)"`
}

// BranchesResult is the output of the branches tool: branch --json's
// array, under "branches".
type BranchesResult struct {
	Branches []tract.Branch `json:"branches" jsonschema:"every branch, by name: name, hash (its tip), current (HEAD is on it)"`
}

// EscalationsInput is the input of the escalations tool.
type EscalationsInput struct {
	ID string `json:"id,omitempty" jsonschema:"only this escalation (it is an error if it does not wait any more)"`
}

// EscalationsResult is the output of the escalations tool: escalations
// --json's array, under "escalations".
type EscalationsResult struct {
	Escalations []tract.PendingEscalation `json:"escalations" jsonschema:"the escalations waiting in the repository, oldest first: pending, or answered and not yet taken up by their turn"`
}

func addReadTools(s *mcp.Server, r *repo) {
	addTool(s, "log", "History of a branch, or of everything with orphaned attempts",
		"List commits newest first: the first-parent history from HEAD (or rev); with all, every commit of every branch and the "+
			"orphaned chains beside them, such as the failed attempts a validated retry purified off the branch, each with the "+
			"validator's diagnosis in meta.diagnosis and its failure record in meta.failure.",
		reads, r.log)
	addTool(s, "show", "One commit: text, metadata, failure record",
		"Show one commit: its text, kind, role, parents, refs and metadata (provenance of an accepted answer, the failure "+
			"record and diagnosis of a failed attempt, the task id).",
		reads, r.show)
	addTool(s, "compile", "What the model is sent",
		"Compile the messages the model is sent for the chain ending at HEAD (or rev): messages, steering and summaries, "+
			"as OpenAI chat messages; notes and error commits are left out.",
		reads, r.compile)
	addTool(s, "status", "Where HEAD is, and the size of the context",
		"Report the current branch (or whether HEAD is detached), the commit HEAD resolves to, the length of its chain, "+
			"the messages and estimated tokens the model is sent, ORIG_HEAD, and the repository.",
		reads, r.status)
	addTool(s, "search", "Find commits by words, anywhere",
		"Find the commits whose text or diagnosis holds every word of query, on every branch and among orphaned attempts, "+
			"newest first.",
		reads, r.search)
	addTool(s, "stats", "How the validated tasks went",
		"Summarise the validated turns and tasks: first-attempt successes, retries, fixes, escalations, skips and aborts, "+
			"mean attempts, tokens on failed and accepted answers, failure types and the most common diagnoses.",
		reads, r.stats)
	addTool(s, "branches", "List the branches",
		"List every branch with its tip and whether HEAD is on it.",
		reads, r.branches)
	addTool(s, "escalations", "Turns waiting for an answer",
		"List the escalations waiting in the repository: turns whose attempts ran out and that wait for an answer "+
			"(retry, skip, abort, or fix with an instruction), with their task, reason, attempts, failure records and "+
			"question. answer_escalation answers one.",
		reads, r.escalations)
}

func (r *repo) log(ctx context.Context, _ *mcp.CallToolRequest, in LogInput) (*LogResult, error) {
	n, err := limit(in.Limit)
	if err != nil {
		return nil, err
	}
	if in.All && in.Rev != "" {
		return nil, &InputError{Field: "rev", Problem: "is not taken with all, which lists every commit: give one of them"}
	}
	if in.IgnoreCase && in.Grep == "" {
		return nil, &InputError{Field: "ignore_case", Problem: "changes how grep matches: give grep too"}
	}
	var grep *search.Grep
	if in.Grep != "" {
		var gopts []search.GrepOption
		if in.IgnoreCase {
			gopts = append(gopts, search.IgnoreCase())
		}
		if grep, err = search.NewGrep([]string{in.Grep}, gopts...); err != nil {
			return nil, &InputError{Field: "grep", Problem: fmt.Sprintf("%q is not a regular expression (Go's RE2 syntax): %v", in.Grep, err)}
		}
	}
	out := &LogResult{Commits: []*tract.CommitInfo{}, Orphans: []*tract.OrphanChain{}}
	if in.All {
		return out, r.logAll(ctx, out, n, grep)
	}
	opts := []tract.LogOption{tract.LogLimit(n + 1)}
	if in.Rev != "" {
		opts = append(opts, tract.LogFrom(in.Rev))
	}
	if grep != nil {
		opts = append(opts, tract.LogGrep(grep))
	}
	for c, err := range r.t.LogSeq(ctx, opts...) {
		if err != nil {
			return nil, err
		}
		if len(out.Commits) == n {
			out.Truncated = true
			break
		}
		out.Commits = append(out.Commits, c)
	}
	return out, nil
}

// logAll fills out with the whole repository as log --all --json lists
// it: at most n reachable commits, and the newest n orphaned chains with
// at most n commits each, keeping only what grep (when not nil) matches.
func (r *repo) logAll(ctx context.Context, out *LogResult, n int, grep *search.Grep) error {
	o, err := r.t.Outline(ctx)
	if err != nil {
		return err
	}
	// collect reads the commits of hs that grep keeps, at most n of them.
	collect := func(hs []tract.Hash) ([]*tract.CommitInfo, error) {
		cs := []*tract.CommitInfo{}
		for c, err := range o.Infos(ctx, hs) {
			if err != nil {
				return nil, err
			}
			if grep != nil && !grep.Match(c.Text, c.Diagnosis()) {
				continue
			}
			if len(cs) == n {
				out.Truncated = true
				break
			}
			cs = append(cs, c)
		}
		return cs, nil
	}
	if out.Commits, err = collect(o.Commits); err != nil {
		return err
	}
	// The newest chains first, then put back in the order log --all keeps.
	for i := len(o.Orphans) - 1; i >= 0; i-- {
		if len(out.Orphans) == n {
			out.Truncated = true
			break
		}
		ch := o.Orphans[i]
		cs, err := collect(ch.Commits)
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			continue
		}
		out.Orphans = append(out.Orphans, &tract.OrphanChain{Fork: ch.Fork, Commits: cs, Action: ch.Action, Reason: ch.Reason, When: ch.When})
	}
	slices.Reverse(out.Orphans)
	return nil
}

func (r *repo) show(ctx context.Context, _ *mcp.CallToolRequest, in ShowInput) (*tract.CommitInfo, error) {
	rev := in.Rev
	if rev == "" {
		rev = "HEAD"
	}
	return r.t.Show(ctx, rev)
}

func (r *repo) compile(ctx context.Context, _ *mcp.CallToolRequest, in CompileInput) (*CompileResult, error) {
	var opts []tract.CompileOption
	if in.Rev != "" {
		opts = append(opts, tract.CompileAt(in.Rev))
	}
	if in.IncludeNotes {
		opts = append(opts, tract.IncludeNotes())
	}
	msgs, err := r.t.Compile(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if msgs == nil {
		msgs = []tract.Message{}
	}
	return &CompileResult{Messages: msgs}, nil
}

func (r *repo) status(ctx context.Context, _ *mcp.CallToolRequest, in StatusInput) (*tract.Status, error) {
	return r.on(in.Branch).Status(ctx)
}

func (r *repo) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*SearchResult, error) {
	n, err := limit(in.Limit)
	if err != nil {
		return nil, err
	}
	q, err := search.ParseQuery(in.Query)
	if err != nil {
		return nil, &InputError{Field: "query", Problem: fmt.Sprintf("%q: %v (words are letters and digits; at most %d of them)", in.Query, err, search.MaxTerms)}
	}
	out := &SearchResult{Query: q.String(), Commits: []*tract.CommitInfo{}}
	for c, err := range r.t.Search(ctx, q, tract.SearchLimit(n)) {
		if err != nil {
			return nil, err
		}
		out.Commits = append(out.Commits, c)
	}
	return out, nil
}

func (r *repo) stats(ctx context.Context, _ *mcp.CallToolRequest, in StatsInput) (*tract.Stats, error) {
	since, err := parseSince(in.Since, time.Now())
	if err != nil {
		return nil, err
	}
	return r.t.Stats(ctx, tract.StatsFilter{TaskPrefix: in.Task, Since: since})
}

// parseSince reads a time as an RFC 3339 time or an age before now: a
// number and a unit, s, m, h or d ("" is the zero time).
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	bad := &InputError{Field: "since", Problem: fmt.Sprintf("%q: give an RFC 3339 time such as 2026-01-26T14:00:00Z, or an age such as 90m, 12h or 7d", s)}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != days {
			return time.Time{}, bad
		}
		return now.AddDate(0, 0, -n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, bad
	}
	return now.Add(-d), nil
}

func (r *repo) branches(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*BranchesResult, error) {
	bs, err := r.t.Branches(ctx)
	if err != nil {
		return nil, err
	}
	if bs == nil {
		bs = []tract.Branch{}
	}
	return &BranchesResult{Branches: bs}, nil
}

func (r *repo) escalations(ctx context.Context, _ *mcp.CallToolRequest, in EscalationsInput) (*EscalationsResult, error) {
	if in.ID != "" {
		e, err := r.t.EscalationByID(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		return &EscalationsResult{Escalations: []tract.PendingEscalation{*e}}, nil
	}
	es, err := r.t.Escalations(ctx)
	if err != nil {
		return nil, err
	}
	if es == nil {
		es = []tract.PendingEscalation{}
	}
	return &EscalationsResult{Escalations: es}, nil
}
