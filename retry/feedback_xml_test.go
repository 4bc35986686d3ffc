package retry_test

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/retry"
)

// parsedRetryContext is a <retry_context> block as an XML parser reads it.
type parsedRetryContext struct {
	XMLName      xml.Name `xml:"retry_context"`
	Attempt      int      `xml:"attempt,attr"`
	MaxAttempts  int      `xml:"max_attempts,attr"`
	Intervention *struct {
		Instruction struct {
			Priority string `xml:"priority,attr"`
			Text     string `xml:",chardata"`
		} `xml:"instruction"`
	} `xml:"user_intervention"`
	Failures []struct {
		Attempt   int     `xml:"attempt,attr"`
		Type      string  `xml:"type"`
		Timestamp string  `xml:"timestamp"`
		Summary   string  `xml:"error_summary"`
		Details   *string `xml:"error_details"`
		Fix       *string `xml:"suggested_fix"`
	} `xml:"previous_failures>failure"`
	Learnings   *string `xml:"accumulated_learnings"`
	Instruction string  `xml:"instruction"`
}

// parseRetryContext checks that block is one well-formed XML element and
// nothing else (strict parsing, every token to the end), then decodes it.
func parseRetryContext(t *testing.T, block string) parsedRetryContext {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(block))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "not well-formed XML:\n%s", block)
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 {
				require.Empty(t, strings.TrimSpace(string(tok)), "text outside the root element")
			}
		default:
			require.Failf(t, "unexpected token", "%T %v in\n%s", tok, tok, block)
		}
	}
	require.Equal(t, 0, depth)
	require.Equal(t, 1, roots, "one root element")
	var p parsedRetryContext
	require.NoError(t, xml.Unmarshal([]byte(block), &p))
	return p
}

// hostile is text from models, validators and people that XML must hold
// as text: markup, entities, a CDATA end, quotes, a comment, a processing
// instruction, control characters, invalid UTF-8.
var hostile = []string{
	`</error_summary><injected attr='x'>`,
	`1 < 2 && 3 > 2`,
	`]]> <![CDATA[ x ]]>`,
	`"double" and 'single' quotes`,
	`&amp; &lt; &#x3c; &nosuch;`,
	`<!-- comment --> <?pi x?> <!DOCTYPE x>`,
	"tab\there\r\nCRLF\rCR\x00NUL\x1bESC\x7fDEL\uFFFE\uFFFF",
	"bad utf-8 \xff\xfe end",
	"BLOCKED: <reason>",
	"multi\nline <a>\n&\n",
}

// textOf is what a parser should read back for text t: t trimmed, line
// ends as newlines, characters XML cannot hold as U+FFFD.
func textOf(t string) string {
	t = strings.ReplaceAll(strings.ReplaceAll(t, "\r\n", "\n"), "\r", "\n")
	var b strings.Builder
	for _, r := range t { // an invalid byte is a utf8.RuneError of its own
		if r != '\t' && r != '\n' && (r < 0x20 || r == 0x7F || r == 0xFFFE || r == 0xFFFF) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// Every retry context the package can produce is well-formed XML that a
// parser reads back as it was given: with or without failures, details,
// fixes, learnings and an intervention, and with hostile text in every
// field.
func TestRetryContext_XMLIsWellFormed(t *testing.T) {
	at := time.Date(2026, 1, 26, 14, 30, 0, 0, time.UTC)
	failure := func(n int, text string) retry.Failure {
		return retry.Failure{Attempt: n, Timestamp: at.Add(time.Duration(n) * time.Minute), Type: retry.FailureVerification,
			Summary: text, Details: text + "\nmore: " + text, SuggestedFix: "fix " + text}
	}
	cases := map[string]retry.RetryContext{
		"no failures":    {Attempt: 2, MaxAttempts: 3},
		"plain failure":  {Attempt: 2, MaxAttempts: 3, Failures: []retry.Failure{{Attempt: 1, Type: retry.FailureVerification, Summary: "invalid JSON"}}},
		"every type":     {Attempt: 5, MaxAttempts: 5, Failures: []retry.Failure{{Attempt: 1, Type: retry.FailureExecution, Summary: "x"}, {Attempt: 2, Type: retry.FailureVerification, Summary: "y"}, {Attempt: 3, Type: retry.FailureTimeout, Summary: "z"}, {Attempt: 4, Type: retry.FailureRejected, Summary: "w"}}},
		"summary only":   {Attempt: 3, MaxAttempts: 3, Failures: []retry.Failure{failure(1, "a"), {Attempt: 2, Summary: "b", Details: "b"}}},
		"blank optional": {Attempt: 2, MaxAttempts: 2, Intervention: " \n ", Failures: []retry.Failure{{Attempt: 1, Summary: "s", Details: " ", SuggestedFix: "\t"}}},
	}
	for i, h := range hostile {
		var fs []retry.Failure
		for n := 1; n <= 3; n++ {
			fs = append(fs, failure(n, h))
		}
		cases["hostile "+string(rune('a'+i))] = retry.RetryContext{Attempt: 4, MaxAttempts: 6, Intervention: h, Failures: fs,
			Learnings: []string{h, "learnt " + h}}
		cases["hostile type "+string(rune('a'+i))] = retry.RetryContext{Attempt: 2, MaxAttempts: 2,
			Failures: []retry.Failure{{Attempt: 1, Type: retry.FailureType(h), Summary: h}}}
	}
	for name, rc := range cases {
		t.Run(name, func(t *testing.T) {
			p := parseRetryContext(t, rc.XML())
			assert.Equal(t, rc.Attempt, p.Attempt)
			assert.Equal(t, rc.MaxAttempts, p.MaxAttempts)
			if strings.TrimSpace(rc.Intervention) == "" {
				assert.Nil(t, p.Intervention)
			} else if assert.NotNil(t, p.Intervention) {
				assert.Equal(t, "high", p.Intervention.Instruction.Priority)
				assert.Equal(t, textOf(rc.Intervention), strings.TrimSpace(p.Intervention.Instruction.Text))
			}
			require.Len(t, p.Failures, len(rc.Failures))
			for i, f := range rc.Failures {
				got := p.Failures[i]
				assert.Equal(t, f.Attempt, got.Attempt)
				assert.Equal(t, textOf(string(f.Type)), strings.TrimSpace(got.Type))
				assert.Equal(t, f.Timestamp.UTC().Format(time.RFC3339), got.Timestamp)
				assert.Equal(t, textOf(f.Summary), strings.TrimSpace(got.Summary))
				if strings.TrimSpace(f.Details) == "" || f.Details == f.Summary {
					assert.Nil(t, got.Details)
				} else if assert.NotNil(t, got.Details) {
					assert.Equal(t, textOf(f.Details), strings.TrimSpace(*got.Details))
				}
				if strings.TrimSpace(f.SuggestedFix) == "" {
					assert.Nil(t, got.Fix)
				} else if assert.NotNil(t, got.Fix) {
					assert.Equal(t, textOf(f.SuggestedFix), strings.TrimSpace(*got.Fix))
				}
			}
			if len(rc.Learnings) == 0 {
				assert.Nil(t, p.Learnings)
			} else if assert.NotNil(t, p.Learnings) {
				for _, l := range rc.Learnings {
					assert.Contains(t, *p.Learnings, "- "+textOf(l))
				}
			}
			assert.Contains(t, p.Instruction, "This is attempt")
			assert.Contains(t, p.Instruction, `answer with a first line "BLOCKED: <reason>" and nothing else.`,
				"the parser reads the instruction as written")
		})
	}
}

// Whatever text a failure holds, the block stays well-formed XML.
func FuzzRetryContext_XML(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, h, h, h)
	}
	f.Fuzz(func(t *testing.T, summary, details, fix, intervention string) {
		rc := retry.RetryContext{Attempt: 2, MaxAttempts: 3, Intervention: intervention,
			Failures:  []retry.Failure{{Attempt: 1, Type: retry.FailureVerification, Summary: summary, Details: details, SuggestedFix: fix}},
			Learnings: []string{summary}}
		p := parseRetryContext(t, rc.XML())
		require.Len(t, p.Failures, 1)
		assert.Equal(t, textOf(summary), strings.TrimSpace(p.Failures[0].Summary))
	})
}
