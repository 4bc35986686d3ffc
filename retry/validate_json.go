package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// JSON returns the validator of the spec "json": the whole answer, apart
// from surrounding white space, must be one JSON value. Its diagnosis is the
// parser's message with the line and column (both 1-based, columns counted in
// characters) where parsing stopped, for example
//
//	invalid JSON at line 1, column 7: invalid character 'x' looking for beginning of value
func JSON() Validator { return jsonValidator{} }

// jsonKind is the kind "json", which takes no argument.
func jsonKind() Kind {
	return Kind{
		Name:    "json",
		Summary: "the whole answer is JSON",
		Build: func(s Spec) (Validator, error) {
			if s.FixJSON {
				return FixJSON(), nil
			}
			return JSON(), nil
		},
	}
}

type jsonValidator struct{}

func (jsonValidator) Name() string { return "json" }

func (jsonValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	if d := diagnoseJSON(answer); d != "" {
		return false, d, nil
	}
	return true, "", nil
}

// diagnoseJSON returns "" when answer is a single JSON value and a
// deterministic description of the first syntax error otherwise.
func diagnoseJSON(answer string) string {
	if strings.TrimSpace(answer) == "" {
		return "answer is empty, expected a JSON value"
	}
	var raw json.RawMessage
	err := json.Unmarshal([]byte(answer), &raw)
	if err == nil {
		return ""
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		// Unmarshalling into a RawMessage only reports syntax errors.
		return "invalid JSON: " + err.Error()
	}
	msg, pos := se.Error(), int(se.Offset)
	switch {
	case pos >= len(answer) && strings.HasPrefix(msg, "invalid character ' ' in literal") && !strings.HasSuffix(answer, " "):
		// The scanner reports a literal cut short by the end of the
		// input ("nul") as an invalid space after it.
		msg = "unexpected end of JSON input"
	case strings.HasPrefix(msg, "invalid character"):
		// Offset counts the offending byte; point at it.
		pos--
	}
	line, col := lineColumn(answer, pos)
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)
}

// lineColumn converts a byte offset in s to a 1-based line and a 1-based
// column counted in characters (runes).
func lineColumn(s string, offset int) (line, col int) {
	offset = max(0, min(offset, len(s)))
	before := s[:offset]
	line = 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, 1 + utf8.RuneCountInString(before)
}
