package retry

import (
	"context"
	"encoding/json"
	"strings"
)

// FixJSON returns the validator of the spec "json" parsed with
// [WithFixJSON] (tract chat --fix-json): it passes what [JSON] passes, and
// an answer that [RepairJSON] can make JSON passes with the repaired text as
// its fix ([Verdict.Fixed]; the diagnosis says what was wrong with the
// answer as given). Any other answer is rejected with JSON's diagnosis.
// Its Name is "json", as JSON's.
func FixJSON() Validator { return fixJSONValidator{} }

type fixJSONValidator struct{}

func (fixJSONValidator) Name() string { return "json" }

func (fixJSONValidator) Check(ctx context.Context, answer string) (Verdict, error) {
	d := diagnoseJSON(answer)
	if d == "" {
		return Verdict{OK: true}, nil
	}
	if fixed, ok := RepairJSON(answer); ok {
		return Verdict{OK: true, Fixed: fixed, Diagnosis: d}, nil
	}
	return Verdict{Diagnosis: d}, nil
}

func (v fixJSONValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	return validateByCheck(ctx, v, answer)
}

// RepairJSON makes s, which a model meant as one JSON value, that value,
// when it can do so without changing any value in it; ok is false, and s
// is returned, when s is JSON already (white space around it included:
// valid JSON is never changed) or when no repair is certain. It repairs:
//
//   - prose and markdown fences around one object or array: "Here you go:
//     {…}" or "```json\n{…}\n```" gives the object, provided the text
//     around it holds no other bracket or brace (which might belong to
//     the value: a value is never cut out of a larger one);
//   - a fenced block that holds one JSON value of any kind ("```\n42\n```");
//   - trailing commas, a comma just before a closing bracket or brace
//     after a complete value ("[1, 2,]", "{\"a\": 1,}");
//   - a value cut short at the end, only when all that is missing is its
//     closing brackets and braces after a complete string, literal, array
//     or object ("{\"a\": [1, 2]" gives "{\"a\": [1, 2]}"). A value that
//     ends in a number ("[1, 2" may have been "[1, 25]"), a comma, a colon,
//     a key or an unterminated string is not closed.
//
// What it returns with ok true is valid JSON, the model's own text with
// the repairs above and its white space kept.
func RepairJSON(s string) (fixed string, ok bool) {
	if json.Valid([]byte(s)) {
		return s, false
	}
	if v, ok := fencedJSON(s); ok {
		return v, true
	}
	if v, ok := oneValue(s); ok {
		return v, true
	}
	return s, false
}

// brackets are what the text around a value cut out of prose must not
// hold.
const brackets = "{}[]"

// fencedJSON is the JSON in the one markdown fence of s ("```json" …
// "```"), repaired as oneValue repairs a text, when the text around the
// fence holds no bracket.
func fencedJSON(s string) (string, bool) {
	open := strings.Index(s, "```")
	if open < 0 {
		return "", false
	}
	nl := strings.IndexByte(s[open:], '\n')
	if nl < 0 {
		return "", false
	}
	info := s[open+3 : open+nl]
	if strings.ContainsAny(info, "`"+brackets) {
		return "", false // not a fence's info string ("json", "") but text on the fence's line
	}
	bodyStart := open + nl + 1
	end := strings.Index(s[bodyStart:], "```")
	if end < 0 {
		return "", false // unclosed: oneValue may close the value in it
	}
	body, after := s[bodyStart:bodyStart+end], s[bodyStart+end+3:]
	if strings.Contains(after, "```") || strings.ContainsAny(s[:open]+after, brackets) {
		return "", false
	}
	if v := strings.TrimSpace(body); json.Valid([]byte(v)) {
		return v, true
	}
	return oneValue(body)
}

// oneValue is the object or array in s, repaired (see repairValue), when
// the text around it, s's first bracket to where the value ends, holds no
// bracket or brace.
func oneValue(s string) (string, bool) {
	i := strings.IndexAny(s, "{[")
	if i < 0 {
		return "", false
	}
	v, n, ok := repairValue(s[i:])
	if !ok || strings.ContainsAny(s[:i], brackets) || strings.ContainsAny(s[i+n:], brackets) {
		return "", false
	}
	return v, true
}

// repairValue reads the object or array t begins with, dropping its
// trailing commas and closing it when t ends before it does and what is
// missing is certain (see RepairJSON). It returns the value and the bytes
// of t it spans; ok is false when the result is not valid JSON or a
// repair would be a guess.
func repairValue(t string) (value string, n int, ok bool) {
	var b strings.Builder
	b.Grow(len(t))
	var stack []byte // the open brackets
	inString, escaped := false, false
	var prev byte // the last byte of the last token outside strings ('"' after a string)
	for i := 0; i < len(t); i++ {
		c := t[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString, prev = false, '"'
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			b.WriteByte(c)
			continue
		case '"':
			inString = true
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != openerOf(c) {
				return "", 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				b.WriteByte(c)
				v := b.String()
				return v, i + 1, json.Valid([]byte(v))
			}
		case ',':
			j := i + 1
			for j < len(t) && strings.IndexByte(" \t\n\r", t[j]) >= 0 {
				j++
			}
			if j < len(t) && (t[j] == '}' || t[j] == ']') && endsValue(prev) {
				continue // a trailing comma: dropped, prev stays the value's end
			}
		}
		b.WriteByte(c)
		prev = c
	}
	// t ended inside the value: close it when only closers are missing
	// after a complete value (a number might go on).
	if inString || !endsValue(prev) || isDigit(prev) {
		return "", 0, false
	}
	for k := len(stack) - 1; k >= 0; k-- {
		b.WriteByte(closerOf(stack[k]))
	}
	v := b.String()
	return v, len(t), json.Valid([]byte(v))
}

// endsValue reports a byte that may end a complete JSON value: a string's
// closing quote, a closing bracket, the last letter of a literal or a
// digit (whether it is one is for json.Valid to say).
func endsValue(c byte) bool {
	return c == '"' || c == '}' || c == ']' || isDigit(c) || c >= 'a' && c <= 'z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func openerOf(closer byte) byte {
	if closer == '}' {
		return '{'
	}
	return '['
}

func closerOf(opener byte) byte {
	if opener == '{' {
		return '}'
	}
	return ']'
}
