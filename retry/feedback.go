package retry

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// FeedbackFormat is how the message that precedes a retry tells the model
// what went wrong.
type FeedbackFormat string

// The feedback formats.
const (
	// FeedbackPlain is a steering template that quotes the last diagnosis
	// (tract's RetryPrompt).
	FeedbackPlain FeedbackFormat = "plain"
	// FeedbackXML is a <retry_context> block that lists every earlier
	// failure of the turn (see RetryContext.XML).
	FeedbackXML FeedbackFormat = "xml"
)

// ParseFeedbackFormat returns the FeedbackFormat named s ("plain" or
// "xml"); any other name is an error.
func ParseFeedbackFormat(s string) (FeedbackFormat, error) {
	switch f := FeedbackFormat(s); f {
	case FeedbackPlain, FeedbackXML:
		return f, nil
	}
	return "", fmt.Errorf("unknown feedback format %q: use plain or xml", s)
}

// BlockedMarker starts the first line of an answer by which the model
// declares the task blocked: "BLOCKED: reason". The xml format's
// instruction invites the model to answer that way when retrying cannot
// help; see DeclaredBlocked.
const BlockedMarker = "BLOCKED:"

// DeclaredBlocked reports whether answer declares the task blocked: its
// first line that is not blank starts with BlockedMarker (leading white
// space aside, upper case as written). reason is what follows the marker,
// the rest of the answer included, trimmed; "no reason given" when
// nothing does.
func DeclaredBlocked(answer string) (reason string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeftFunc(answer, unicode.IsSpace), BlockedMarker)
	if !ok {
		return "", false
	}
	return nonEmpty(strings.TrimSpace(rest), "no reason given"), true
}

// Failure is one earlier failure of a turn as a RetryContext shows it: the
// parts of a task's failure record the model can use.
type Failure struct {
	// Attempt is the failed attempt's number, from 1.
	Attempt int
	// Timestamp is when the failure was found.
	Timestamp time.Time
	// Type classifies it.
	Type FailureType
	// Summary is its one-line summary; Details the full diagnosis.
	Summary string
	Details string
	// SuggestedFix is what a validator or an analyzer suggested, if any.
	SuggestedFix string
}

// RetryContext is what the model is told before retry attempt Attempt of
// MaxAttempts: every earlier failure, in order, what was learnt from them,
// and a person's instruction, if one was given.
type RetryContext struct {
	// Attempt is the attempt the context precedes (2 for the first retry);
	// MaxAttempts the number allowed.
	Attempt     int
	MaxAttempts int
	// Intervention is a person's instruction for this attempt, shown ahead
	// of the failures with high priority; "" when there is none.
	Intervention string
	// Failures are the earlier failures, oldest first.
	Failures []Failure
	// Learnings are what analysing the failures found (root causes), in
	// order; an <accumulated_learnings> element lists them when there are
	// any.
	Learnings []string
}

// XML renders c as a <retry_context> block, the xml feedback format:
//
//	<retry_context attempt="3" max_attempts="3">
//	  <user_intervention>
//	    <instruction priority="high">…</instruction>
//	  </user_intervention>
//	  <previous_failures>
//	    <failure attempt="1">
//	      <type>verification_failed</type>
//	      <timestamp>2026-01-26T14:30:00Z</timestamp>
//	      <error_summary>…</error_summary>
//	      <error_details>…</error_details>
//	      <suggested_fix>…</suggested_fix>
//	    </failure>
//	    …
//	  </previous_failures>
//	  <accumulated_learnings>
//	    - …
//	  </accumulated_learnings>
//	  <instruction>…</instruction>
//	</retry_context>
//
// user_intervention, error_details, suggested_fix and
// accumulated_learnings are left out when empty. The block is
// well-formed XML whatever the text inside: all text, tract's own
// instruction included, is escaped (& < > as entities, so the
// instruction's "BLOCKED: <reason>" reads "BLOCKED: &lt;reason&gt;";
// control characters other than tab and newline, which XML cannot hold,
// and invalid UTF-8 as U+FFFD). The instruction says which attempt this
// is and how to declare the task blocked (see DeclaredBlocked).
func (c RetryContext) XML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<retry_context attempt=\"%d\" max_attempts=\"%d\">\n", c.Attempt, c.MaxAttempts)
	if strings.TrimSpace(c.Intervention) != "" {
		b.WriteString("  <user_intervention>\n")
		element(&b, "    ", `instruction priority="high"`, c.Intervention)
		b.WriteString("  </user_intervention>\n")
	}
	b.WriteString("  <previous_failures>\n")
	for _, f := range c.Failures {
		fmt.Fprintf(&b, "    <failure attempt=\"%d\">\n", f.Attempt)
		element(&b, "      ", "type", string(f.Type))
		element(&b, "      ", "timestamp", f.Timestamp.UTC().Format(time.RFC3339))
		element(&b, "      ", "error_summary", f.Summary)
		if strings.TrimSpace(f.Details) != "" && f.Details != f.Summary {
			element(&b, "      ", "error_details", f.Details)
		}
		if strings.TrimSpace(f.SuggestedFix) != "" {
			element(&b, "      ", "suggested_fix", f.SuggestedFix)
		}
		b.WriteString("    </failure>\n")
	}
	b.WriteString("  </previous_failures>\n")
	if len(c.Learnings) > 0 {
		b.WriteString("  <accumulated_learnings>\n")
		for _, l := range c.Learnings {
			b.WriteString("    - " + strings.TrimSpace(escapeXML(l)) + "\n")
		}
		b.WriteString("  </accumulated_learnings>\n")
	}
	b.WriteString("  <instruction>\n")
	for _, line := range []string{
		fmt.Sprintf("This is attempt %d of %d.", c.Attempt, c.MaxAttempts),
		"Review the previous failures above and address each of them in your answer.",
		fmt.Sprintf("If retrying cannot make the task succeed, answer with a first line \"%s <reason>\" and nothing else.", BlockedMarker),
	} {
		b.WriteString("    " + escapeXML(line) + "\n")
	}
	b.WriteString("  </instruction>\n")
	b.WriteString("</retry_context>")
	return b.String()
}

// element writes <tag>text</tag> on one line, or, when text spans lines,
// with text on its own lines; text is escaped. The closing tag is tag's
// first word.
func element(b *strings.Builder, indent, tag, text string) {
	name, _, _ := strings.Cut(tag, " ")
	text = strings.TrimSpace(escapeXML(text))
	if !strings.Contains(text, "\n") {
		fmt.Fprintf(b, "%s<%s>%s</%s>\n", indent, tag, text, name)
		return
	}
	fmt.Fprintf(b, "%s<%s>\n%s\n%s</%s>\n", indent, tag, text, indent, name)
}

// escapeXML escapes s for XML text (all of it sits between tags): & < >
// as entities; a carriage return as a newline; other control characters,
// which XML 1.0 cannot hold, as U+FFFD.
func escapeXML(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return r
		case r == '\r':
			return '\n'
		case r < 0x20 || r == 0x7F || r == 0xFFFE || r == 0xFFFF:
			return unicode.ReplacementChar
		}
		return r
	}, s)
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
