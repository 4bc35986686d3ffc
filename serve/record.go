package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/record"
)

// maxConflicts bounds how often one request's record is matched again
// after another writer moved the branch it matched.
const maxConflicts = 8

// outcome is how a proxied call ended: an answer, or a failure recorded
// as an error commit.
type outcome struct {
	answer *answer
	// failure is the error commit's text when there is no answer.
	failure string
	model   string
	elapsed time.Duration
}

// recorded is where a request's record went.
type recorded struct {
	Branch string
	Commit dag.Hash
}

// record commits a request's new messages and its outcome, matching the
// messages against the index (see index.match). It holds the index's lock
// for the match and the write, never across the upstream call, which is
// over when it runs.
func (h *Handler) record(ctx context.Context, w wire, named string, msgs []tract.ImportMessage, ps []prefix, out outcome) (recorded, error) {
	final, finalPrefix, err := h.finalMessage(w, ps, out)
	if err != nil {
		return recorded{}, err
	}
	last := prefix{}
	if len(ps) > 0 {
		last = ps[len(ps)-1]
	}
	forkKey := func(from int) prefix {
		switch {
		case from < len(ps):
			return ps[from]
		case finalPrefix != nil:
			return *finalPrefix
		}
		return dag.Sum([]byte(last.String() + "\x00error\x00" + strconv.FormatInt(h.now().UnixNano(), 10)))
	}
	x := h.idx
	x.mu.Lock()
	defer x.mu.Unlock()
	for range maxConflicts {
		p := x.match(named, ps, forkKey)
		chain := append(append(make([]tract.ImportMessage, 0, len(msgs)-p.From+1), msgs[p.From:]...), final)
		action := "serve: " + english.Count(len(chain), "commit", "commits")
		if p.Fork {
			action = "serve: forked with " + english.Count(len(chain), "commit", "commits")
		}
		hs, err := h.t.CommitChainOn(ctx, p.Branch, p.At, chain, tract.WithReflogMessage("serve", action))
		var conflict *tract.ConflictError
		if errors.As(err, &conflict) {
			// Another writer moved the branch: read it again, match again.
			if err := x.sync(ctx, h.t, p.Branch, conflict.Actual); err != nil {
				return recorded{}, err
			}
			continue
		}
		if err != nil {
			return recorded{}, err
		}
		for i := range chain[:len(chain)-1] {
			x.add(ps[p.From+i], hs[i])
		}
		tip := hs[len(hs)-1]
		if finalPrefix != nil {
			x.add(*finalPrefix, tip)
		} else {
			x.prefixOf[tip] = last
		}
		x.setTip(p.Branch, tip)
		return recorded{Branch: p.Branch, Commit: tip}, nil
	}
	return recorded{}, fmt.Errorf("record: the branch kept moving (%d conflicts)", maxConflicts)
}

// add indexes commit c, the last message of prefix p.
func (x *index) add(p prefix, c dag.Hash) {
	if _, ok := x.at[p]; !ok {
		x.at[p] = c
	}
	x.prefixOf[c] = p
}

// finalMessage returns the commit that ends a request's record: the
// answer with its model and usage, or an error commit; and, for an
// answer, the prefix of the conversation it ends.
func (h *Handler) finalMessage(w wire, ps []prefix, out outcome) (tract.ImportMessage, *prefix, error) {
	meta := record.Meta{Model: out.model, Provider: w.provider(), DurationMS: out.elapsed.Milliseconds()}
	if a := out.answer; a != nil && (a.msg.Content != "" || a.msg.Parts != nil || len(a.msg.ToolCalls) > 0) {
		if a.model != "" {
			meta.Model = a.model
		}
		meta.Usage = a.usage
		m := a.msg
		raw, err := json.Marshal(meta)
		if err != nil {
			return m, nil, err
		}
		m.Meta = raw
		id, err := identity(m)
		if err != nil {
			return m, nil, err
		}
		var last prefix
		if len(ps) > 0 {
			last = ps[len(ps)-1]
		}
		p := next(last, id)
		return m, &p, nil
	}
	text := out.failure
	if out.answer != nil {
		text = "the upstream's answer was empty"
	}
	meta.Error = text
	raw, err := json.Marshal(meta)
	if err != nil {
		return tract.ImportMessage{}, nil, err
	}
	return tract.ImportMessage{Kind: tract.KindError, Role: tract.RoleAssistant, Content: "model call failed: " + text, Meta: raw}, nil, nil
}

// prefixes returns the prefix of each of msgs' leading runs.
func prefixes(msgs []tract.ImportMessage) ([]prefix, error) {
	ps := make([]prefix, len(msgs))
	var p prefix
	for i, m := range msgs {
		id, err := identity(m)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		p = next(p, id)
		ps[i] = p
	}
	return ps, nil
}
