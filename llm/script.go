package llm

import (
	"strings"
	"sync"
)

// Script is the reply script shared by Scripted and llmtest.Server: a
// queue of replies, rules that answer whenever the last message contains a
// text, and a fallback. Next picks a request's reply from
//
//  1. the first rule (When) whose text occurs in the last message (the
//     text MatchText gives: the tool results, when the request ends in
//     them); rules stay and may answer many times;
//  2. else the next reply of the queue (Reply), consumed once;
//  3. else the fallback (Otherwise).
//
// The zero Script is empty and ready to use. Its methods are safe for
// concurrent use; a Script must not be copied after first use.
type Script[R any] struct {
	mu       sync.Mutex // guards the fields below
	queue    []R
	rules    []*scriptRule[R]
	fallback *R
}

type scriptRule[R any] struct {
	contains string
	reply    R
	hits     int
}

// Reply appends replies to the queue.
func (s *Script[R]) Reply(replies ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// When adds a rule: answer reply whenever the last message contains the
// text contains. Rules are checked in the order added, before the queue.
func (s *Script[R]) When(contains string, reply R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &scriptRule[R]{contains: contains, reply: reply})
}

// Otherwise sets the answer to requests that neither a rule nor the queue
// answers.
func (s *Script[R]) Otherwise(reply R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &reply
}

// Remaining returns how many queued replies were not consumed yet.
func (s *Script[R]) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Next picks the reply to a request whose last message is lastMessage:
// the first matching rule, else the next queued reply (consuming it), else
// the fallback. false means the script has no answer.
func (s *Script[R]) Next(lastMessage string) (R, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if strings.Contains(lastMessage, r.contains) {
			r.hits++
			return r.reply, true
		}
	}
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r, true
	}
	if s.fallback != nil {
		return *s.fallback, true
	}
	var zero R
	return zero, false
}

// MatchText returns the text of a conversation that a Script's rules
// are matched against: the last message's text (Message.Text), or, when
// the conversation ends in tool results (messages of role "tool"), the
// texts of all of them since the last other message, one per line, in
// order: a reply may then depend on what the tools the model called
// returned, whichever of its parallel calls returned it.
func MatchText(msgs []Message) string {
	n := len(msgs)
	if n == 0 {
		return ""
	}
	if msgs[n-1].Role != "tool" {
		return msgs[n-1].Text()
	}
	first := n - 1
	for first > 0 && msgs[first-1].Role == "tool" {
		first--
	}
	texts := make([]string, 0, n-first)
	for _, m := range msgs[first:] {
		texts = append(texts, m.Text())
	}
	return strings.Join(texts, "\n")
}

// Unused returns what a finished test should have used: the queued replies
// never consumed, in order, and the texts of the rules that never matched,
// in the order added.
func (s *Script[R]) Unused() (replies []R, rules []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	replies = append(replies, s.queue...)
	for _, r := range s.rules {
		if r.hits == 0 {
			rules = append(rules, r.contains)
		}
	}
	return replies, rules
}
