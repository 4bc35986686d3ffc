package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
)

// prefix identifies a conversation up to one of its messages: the hash of
// the previous message's prefix and the message's canonical form (see
// canonical). The empty conversation's prefix is the zero value.
type prefix = dag.Hash

// next returns the prefix of the conversation p followed by m.
func next(p prefix, m llm.Message) prefix {
	b := append(append(make([]byte, 0, 64+len(m.Content)+64), p[:]...), canonical(m)...)
	return dag.Sum(b)
}

// canonical returns the part of a message that identifies it in a
// conversation: its role, content (text or parts), name, tool calls and
// tool call id. Other members (a response's "refusal": null, say) and
// whether an empty content was null or "" do not matter: a client that
// resends an answer rarely resends those as the server wrote them.
func canonical(m llm.Message) []byte {
	type call struct {
		ID   string `json:"i"`
		Name string `json:"n"`
		Args string `json:"a"`
	}
	c := struct {
		Role       string     `json:"r"`
		Content    string     `json:"c,omitempty"`
		Parts      []llm.Part `json:"p,omitempty"`
		Name       string     `json:"n,omitempty"`
		Calls      []call     `json:"t,omitempty"`
		ToolCallID string     `json:"id,omitempty"`
	}{Role: m.Role, Content: m.Content, Parts: m.Parts, Name: m.Name, ToolCallID: m.ToolCallID}
	for _, tc := range m.ToolCalls {
		c.Calls = append(c.Calls, call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	b, err := json.Marshal(c)
	if err != nil {
		// Parts that cannot be marshalled were refused when the request
		// was read; this keeps prefixes distinct all the same.
		return []byte(fmt.Sprintf("%#v", m))
	}
	return b
}

// index maps conversations to the commits that hold them: the prefix of
// every message on a branch to its commit, and the position of every
// branch's tip. It is built from the repository's branches when the
// Handler starts and kept up to date by the Handler's own writes; a
// branch another writer moved is read again when a write to it meets the
// conflict.
type index struct {
	// mu guards the maps below. The Handler holds it to match a request
	// and to index what it wrote, not across the write itself (nor across
	// an upstream call), so that the writes of concurrent requests go to
	// the repository together (one transaction and one sync for all of
	// them, see tract.Tract.CommitChainOn); a request that extends what
	// another is writing, or would write to the same branch, waits for
	// that write (see writing, inFlight), so that the requests of one
	// process are still matched against each other's commits.
	mu sync.Mutex
	// done is signalled when a write ends.
	done sync.Cond
	// writing holds the branches a request is writing to; inFlight the
	// prefixes of the messages being written, with how many writes hold
	// each.
	writing  map[string]bool
	inFlight map[prefix]int
	// at maps a prefix to the commit of its last message.
	at map[prefix]dag.Hash
	// prefixOf maps a commit on a branch to the prefix of the messages
	// its chain compiles to, itself included (an error or note commit
	// has its parent's).
	prefixOf map[dag.Hash]prefix
	// tips maps each branch to its tip as last read or written.
	tips map[string]dag.Hash
	// branchAt maps the prefix of a branch's tip to that branch.
	branchAt map[prefix]string
}

func newIndex() *index {
	x := &index{at: map[prefix]dag.Hash{}, prefixOf: map[dag.Hash]prefix{},
		tips: map[string]dag.Hash{}, branchAt: map[prefix]string{},
		writing: map[string]bool{}, inFlight: map[prefix]int{}}
	x.done.L = &x.mu
	return x
}

// waitsFor reports whether a request of prefixes ps must wait for a
// write in flight before it is matched: one writes a message of its
// conversation, or one writes to branch (once matched).
func (x *index) waitsFor(ps []prefix, branch string) bool {
	if branch != "" && x.writing[branch] {
		return true
	}
	for _, p := range ps {
		if x.inFlight[p] > 0 {
			return true
		}
	}
	return false
}

// writeUnlocked runs write, which writes the messages of prefixes ps to
// branch, with those marked in flight and mu (held by the caller)
// released.
func (x *index) writeUnlocked(branch string, ps []prefix, write func()) {
	x.begin(branch, ps)
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.end(branch, ps)
	}()
	write()
}

// begin marks a write to branch of the messages of prefixes ps as in
// flight; end ends it.
func (x *index) begin(branch string, ps []prefix) {
	x.writing[branch] = true
	for _, p := range ps {
		x.inFlight[p]++
	}
}

func (x *index) end(branch string, ps []prefix) {
	delete(x.writing, branch)
	for _, p := range ps {
		if x.inFlight[p]--; x.inFlight[p] <= 0 {
			delete(x.inFlight, p)
		}
	}
	x.done.Broadcast()
}

// load indexes every branch of t. It reads each commit on a branch once,
// however many branches share it.
func (x *index) load(ctx context.Context, t *tract.Tract) error {
	bs, err := t.Branches(ctx)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if err := x.sync(ctx, t, b.Name, b.Hash); err != nil {
			return err
		}
	}
	return nil
}

// sync indexes branch name, whose tip is tip (zero: the branch does not
// exist), reading its chain back to the first commit already indexed.
func (x *index) sync(ctx context.Context, t *tract.Tract, name string, tip dag.Hash) error {
	if old, ok := x.tips[name]; ok {
		if x.branchAt[x.prefixOf[old]] == name {
			delete(x.branchAt, x.prefixOf[old])
		}
		delete(x.tips, name)
	}
	if tip.IsZero() {
		return nil
	}
	var chain []*tract.CommitInfo
	if _, known := x.prefixOf[tip]; !known {
		for ci, err := range t.LogSeq(ctx, tract.LogFrom(tip.String())) {
			if err != nil {
				return fmt.Errorf("index branch %s: %w", name, err)
			}
			if _, known := x.prefixOf[ci.Hash]; known {
				break
			}
			chain = append(chain, ci)
		}
	}
	slices.Reverse(chain)
	var p prefix
	if len(chain) > 0 && len(chain[0].Parents) > 0 {
		p = x.prefixOf[chain[0].Parents[0]]
	}
	for _, ci := range chain {
		if ci.Kind.Compiled() {
			m, err := ci.Message()
			if err != nil {
				return fmt.Errorf("index branch %s: commit %s: %w", name, ci.Hash.Short(), err)
			}
			if ci.Kind == tract.KindSteering {
				m.Role = string(tract.RoleUser)
			}
			p = next(p, m)
			if _, ok := x.at[p]; !ok {
				x.at[p] = ci.Hash
			}
		}
		x.prefixOf[ci.Hash] = p
	}
	x.setTip(name, tip)
	return nil
}

// setTip records that branch name stands at tip, an indexed commit.
func (x *index) setTip(name string, tip dag.Hash) {
	if old, ok := x.tips[name]; ok && x.branchAt[x.prefixOf[old]] == name {
		delete(x.branchAt, x.prefixOf[old])
	}
	x.tips[name] = tip
	if _, taken := x.branchAt[x.prefixOf[tip]]; !taken {
		x.branchAt[x.prefixOf[tip]] = name
	}
}

// plan is where a request's commits go: the chain of messages
// msgs[From:] and the answer, on top of commit At, on Branch (which stands
// at At, or is created there when Fork is set).
type plan struct {
	Branch string
	At     dag.Hash
	From   int
	Fork   bool
}

// match returns where a request whose messages have the prefixes ps (ps[i]
// the prefix of its first i+1 messages) is recorded: on branch named
// when it is set, else on the branch whose tip it extends, else on a new
// branch forked where it leaves what is recorded. forkKey names a new
// branch's hash: the prefix of its first commit of its own. It costs
// O(len(ps)) map lookups.
func (x *index) match(named string, ps []prefix, forkKey func(from int) prefix) plan {
	// k: the longest recorded prefix; c: its last message's commit.
	k, c := 0, dag.Hash{}
	for i := len(ps); i > 0; i-- {
		if h, ok := x.at[ps[i-1]]; ok {
			k, c = i, h
			break
		}
	}
	pos := func(p prefix) (int, bool) {
		if p.IsZero() {
			return 0, true
		}
		// The tip's prefix is one of the request's when the request
		// extends it: compare from the end, where it usually is.
		for i := len(ps); i > 0; i-- {
			if ps[i-1] == p {
				return i, true
			}
		}
		return 0, false
	}
	if named != "" {
		tip, ok := x.tips[named]
		if !ok {
			return plan{Branch: named, At: c, From: k, Fork: true}
		}
		if j, ok := pos(x.prefixOf[tip]); ok {
			return plan{Branch: named, At: tip, From: j}
		}
		return plan{Branch: x.free(named + "-" + short(forkKey(k))), At: c, From: k, Fork: true}
	}
	var p prefix
	if k > 0 {
		p = ps[k-1]
	}
	// A new conversation (k == 0) always starts a branch of its own.
	if b, ok := x.branchAt[p]; ok && k > 0 {
		return plan{Branch: b, At: x.tips[b], From: k}
	}
	return plan{Branch: x.free("serve/" + short(forkKey(k))), At: c, From: k, Fork: true}
}

// free returns name, or name-2, name-3, … when a branch has it.
func (x *index) free(name string) string {
	n := name
	for i := 2; ; i++ {
		if _, taken := x.tips[n]; !taken && !x.writing[n] {
			return n
		}
		n = name + "-" + strconv.Itoa(i)
	}
}

// short is the 12 hex digits a branch name keeps of a hash.
func short(h dag.Hash) string { return hex.EncodeToString(h[:6]) }
