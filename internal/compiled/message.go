package compiled

import (
	"fmt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/ingest"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/store"
)

// Message is a compiled message as the cache keeps it: as small as a
// message was before shapes (llm.Message has grown fields that almost
// every message leaves empty), so that a long chain's cache stays small.
type Message struct {
	content string
	shaped  *shaped // the whole message, for a commit with a shape
	role    uint8   // Role.Code
}

// shaped is a message whose commit has a shape, and that commit.
type shaped struct {
	msg    llm.Message
	commit dag.Hash
}

// Message returns m as a message of the caller's (a shaped one copied
// deeply).
func (m Message) Message() llm.Message {
	if m.shaped != nil {
		return m.shaped.msg.Clone()
	}
	return llm.Message{Role: string(dag.RoleFromCode(m.role)), Content: m.content}
}

// Messages returns the messages of cached, each the caller's (a shaped
// one is copied deeply: changing it changes nothing in the cache), with
// room for a few more: a turn's tool steps append theirs in place.
func Messages(cached []Message) []llm.Message {
	out := make([]llm.Message, len(cached), len(cached)+8)
	for i, c := range cached {
		out[i] = c.Message()
	}
	return out
}

// Page turns the commits of links into messages: sent[i] says whether
// links[i] is sent to a model, and msgs holds those messages, in order.
// It reads their texts in one call, and the metadata of those whose
// metadata may hold a shape in another.
func Page(tx store.Tx, links []store.ChainLink, notes bool) (msgs []Message, sent []bool, err error) {
	all, err := store.ChainCommits(tx, links, func(l store.ChainLink) bool {
		_, ok := dag.SentRole(l.Header.Kind, l.Header.Role, notes)
		return ok && l.Header.Shaped
	})
	if err != nil {
		return nil, nil, err
	}
	var shapes []*dag.Commit
	for _, c := range all {
		if c != nil {
			shapes = append(shapes, c)
		}
	}
	return With(tx, links, notes, shapes)
}

// With is Page given the commits whose metadata may hold a shape, in
// order.
func With(tx store.Tx, links []store.ChainLink, notes bool, shapes []*dag.Commit) (msgs []Message, sent []bool, err error) {
	sent = make([]bool, len(links))
	blobs, owners := make([]dag.Hash, 0, len(links)), make([]dag.Hash, 0, len(links))
	for i, l := range links {
		if _, ok := dag.SentRole(l.Header.Kind, l.Header.Role, notes); ok {
			sent[i] = true
			blobs, owners = append(blobs, l.Header.Blob), append(owners, l.Hash)
		}
	}
	texts, err := store.ReadTexts(tx, blobs, owners)
	if err != nil {
		return nil, nil, err
	}
	msgs = make([]Message, 0, len(texts))
	for i, l := range links {
		if !sent[i] {
			continue
		}
		text := texts[len(msgs)]
		role, _ := dag.SentRole(l.Header.Kind, l.Header.Role, notes)
		code, _ := role.Code() // a stored commit's role is valid
		m := Message{content: text, role: code}
		if l.Header.Shaped {
			c := shapes[0]
			shapes = shapes[1:]
			sm, err := ingest.CommitMessage(c, role, text)
			if err != nil {
				return nil, nil, fmt.Errorf("commit %s: %w", l.Hash.Short(), err)
			}
			if sm.Parts != nil || sm.ToolCalls != nil || sm.Extra != nil || sm.Name != "" || sm.ToolCallID != "" {
				m = Message{shaped: &shaped{msg: sm, commit: l.Hash}, role: code}
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, sent, nil
}

// One turns commit c, whose hash is h, into a message; ok is false for
// commits that are not sent to a model.
func One(tx store.Tx, h dag.Hash, c *dag.Commit, notes bool) (Message, bool, error) {
	msgs, sent, err := With(tx, []store.ChainLink{{Hash: h, Header: c.Header()}}, notes, []*dag.Commit{c})
	if err != nil || !sent[0] {
		return Message{}, false, err
	}
	return msgs[0], true, nil
}
