package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/record"
)

// maxConflicts bounds how often one request's record is matched again
// after another writer moved the branch it matched.
const maxConflicts = 8

// maxFailure bounds the text of an error commit: an upstream's error
// message may be long.
const maxFailure = 4 << 10

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
// for the match and to index what it wrote, never across the write or the
// upstream call, which is over when it runs: concurrent requests write
// together, each waiting for the writes in flight its match depends on.
//
// With out nil it commits the messages alone, for a validated turn to
// answer: the record is then the branch and the commit of the request's
// last message, a branch created there when none stands at it.
func (h *Handler) record(ctx context.Context, w wire, named string, req *request, ps []prefix, out *outcome) (recorded, error) {
	var final tract.ImportMessage
	var finalPrefix *prefix
	if out != nil {
		var err error
		if final, finalPrefix, err = h.finalMessage(w, ps, *out); err != nil {
			return recorded{}, err
		}
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
	for conflicts := 0; conflicts < maxConflicts; {
		if x.waitsFor(ps, named) {
			x.done.Wait()
			continue
		}
		p := x.match(named, ps, forkKey)
		if x.waitsFor(nil, p.Branch) {
			x.done.Wait()
			continue
		}
		chain, err := req.messages(p.From)
		if err != nil {
			return recorded{}, err
		}
		if out != nil {
			chain = append(chain, final)
		}
		if len(chain) == 0 && !p.Fork {
			return recorded{Branch: p.Branch, Commit: p.At}, nil // recorded already, at the branch's tip
		}
		action := "serve: " + english.Count(len(chain), "commit", "commits")
		if p.Fork {
			action = "serve: forked with " + english.Count(len(chain), "commit", "commits")
		}
		written := append([]prefix(nil), ps[p.From:]...)
		if finalPrefix != nil {
			written = append(written, *finalPrefix)
		}
		var hs []dag.Hash
		x.writeUnlocked(p.Branch, written, func() {
			if len(chain) == 0 {
				// Every message is recorded, but no branch ends there.
				_, err = h.t.CreateBranch(ctx, p.Branch, p.At.String())
				hs = []dag.Hash{p.At}
				return
			}
			hs, err = h.t.CommitChainOn(ctx, p.Branch, p.At, chain, tract.WithReflogMessage("serve", action))
		})
		if errors.Is(err, tract.ErrBranchExists) {
			// Another writer made the branch: read it, match again.
			tip, serr := h.branchTip(ctx, p.Branch)
			if serr == nil {
				serr = x.sync(ctx, h.t, p.Branch, tip)
			}
			if serr != nil {
				return recorded{}, serr
			}
			conflicts++
			continue
		}
		var conflict *tract.ConflictError
		if errors.As(err, &conflict) {
			// Another writer moved the branch: read it again, match again.
			if err := x.sync(ctx, h.t, p.Branch, conflict.Actual); err != nil {
				return recorded{}, err
			}
			conflicts++
			continue
		}
		if errors.Is(err, tract.ErrUnknownRevision) {
			// A commit the index holds was erased (reset --hard, gc):
			// read every branch again.
			x.reset()
			if err := x.load(ctx, h.t); err != nil {
				return recorded{}, err
			}
			conflicts++
			continue
		}
		if err != nil {
			return recorded{}, err
		}
		tip := hs[len(hs)-1]
		if out == nil {
			for i := range chain {
				x.add(ps[p.From+i], hs[i])
			}
			x.setTip(p.Branch, tip)
			return recorded{Branch: p.Branch, Commit: tip}, nil
		}
		for i := range chain[:len(chain)-1] {
			x.add(ps[p.From+i], hs[i])
		}
		if finalPrefix != nil {
			x.add(*finalPrefix, tip)
		} else {
			x.prefixOf[tip] = last
		}
		x.setTip(p.Branch, tip)
		return recorded{Branch: p.Branch, Commit: tip}, nil
	}
	return recorded{}, fmt.Errorf("the branch kept moving (%d conflicts)", maxConflicts)
}

// reset empties the index.
func (x *index) reset() {
	x.at, x.prefixOf = map[prefix]dag.Hash{}, map[dag.Hash]prefix{}
	x.tips, x.branchAt = map[string]dag.Hash{}, map[prefix]string{}
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
	lead := "model call failed: "
	if a := out.answer; a != nil {
		if err := h.checkAnswer(a.msg); err != nil {
			out.answer, out.failure, lead = nil, err.Error(), "model answer refused: "
		}
	}
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
	if len(text) > maxFailure {
		text = strings.ToValidUTF8(text[:maxFailure], "") + "…"
	}
	if out.answer != nil {
		text = "the upstream's answer was empty"
	}
	meta.Error = text
	raw, err := json.Marshal(meta)
	if err != nil {
		return tract.ImportMessage{}, nil, err
	}
	return tract.ImportMessage{Kind: tract.KindError, Role: tract.RoleAssistant, Content: lead + text, Meta: raw}, nil, nil
}

// checkAnswer refuses an answer the repository cannot hold (over its
// message size limit), as a validated turn refuses one.
func (h *Handler) checkAnswer(m tract.ImportMessage) error {
	text, shape, err := m.Stored()
	if err != nil || (text == "" && shape == nil) {
		return nil // empty: recorded as such
	}
	l := h.t.Limits()
	if err := l.CheckText("the answer", text); err != nil {
		return err
	}
	return l.CheckShape(shape)
}
