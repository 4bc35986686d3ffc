package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// palette colours text when enabled (terminal and no NO_COLOR).
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) hash(s string) string  { return p.wrap("33", s) }
func (p palette) refs(s string) string  { return p.wrap("36", s) }
func (p palette) bad(s string) string   { return p.wrap("31", s) }
func (p palette) dim(s string) string   { return p.wrap("2", s) }
func (p palette) good(s string) string  { return p.wrap("32", s) }
func (p palette) graph(s string) string { return p.wrap("35", s) }

// jsonDocs is the annotation of a command that takes --json: the headings,
// separated by "|", of the sections of docs/json.md that document what it
// prints.
const jsonDocs = "tract-json-docs"

// addJSONFlag gives cmd the --json flag, bound to v, and names the
// sections of docs/json.md (their "### " headings) that document what it
// prints: the commit record, say, or the command's own section. The
// document is checked against these names (TestDocs_JSONSections) and
// against what the commands print (tests/json_test.go).
func addJSONFlag(cmd *cobra.Command, v *bool, usage string, sections ...string) {
	cmd.Flags().BoolVar(v, "json", false, usage)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[jsonDocs] = strings.Join(sections, "|")
}

func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(b.Bytes()))
	return err
}

// jsonSafe rewrites, in the JSON text b, the characters encoding/json
// leaves as they are but a terminal may obey: DEL and the C1 controls
// (U+0080–U+009F; some terminals take U+009B as ESC [), as \u escapes.
// They occur only inside strings, so the JSON means the same, and
// printed on a terminal it cannot drive it. b itself is returned when it
// holds none, and may be changed otherwise.
func jsonSafe(b []byte) []byte {
	i := bytes.IndexFunc(b, func(r rune) bool { return r == 0x7f || r >= 0x80 && r <= 0x9f })
	if i < 0 {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for len(b[i:]) > 0 {
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || r >= 0x80 && r <= 0x9f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// jsonArray writes a JSON array an element at a time, laid out exactly as
// writeJSON lays out a whole value (two-space indentation), for output too
// long to hold. indent is the indentation of the line the array starts on.
type jsonArray struct {
	w      io.Writer
	indent string
	n      int
	buf    bytes.Buffer
}

func startJSONArray(w io.Writer, indent string) (*jsonArray, error) {
	_, err := io.WriteString(w, "[")
	return &jsonArray{w: w, indent: indent}, err
}

// add writes one element.
func (a *jsonArray) add(v any) error {
	b, err := a.marshal(v, a.indent+"  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(a.w, a.sep()+a.indent+"  "+b)
	return err
}

// sep starts the next element's line.
func (a *jsonArray) sep() string {
	a.n++
	if a.n == 1 {
		return "\n"
	}
	return ",\n"
}

// marshal lays v out as writeJSON does, as if nested at indent.
func (a *jsonArray) marshal(v any, indent string) (string, error) {
	a.buf.Reset()
	e := json.NewEncoder(&a.buf)
	e.SetIndent(indent, "  ")
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(jsonSafe(a.buf.Bytes())), "\n"), nil
}

// end closes the array.
func (a *jsonArray) end() error {
	closing := "]"
	if a.n > 0 {
		closing = "\n" + a.indent + "]"
	}
	_, err := io.WriteString(a.w, closing)
	return err
}

// writeJSONSeq writes the values seq yields as a JSON array laid out as
// writeJSON would lay out a slice of them, one at a time.
func writeJSONSeq[T any](w io.Writer, seq iter.Seq2[T, error]) error {
	a, err := startJSONArray(w, "")
	if err != nil {
		return err
	}
	for v, err := range seq {
		if err != nil {
			return err
		}
		if err := a.add(v); err != nil {
			return err
		}
	}
	if err := a.end(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// oneLine renders a commit as "HASH (refs) label: first line"; a tool
// result as "HASH tool: NAME → first line", the tool's name found by
// names (the call's id when names is nil or cannot find it).
func oneLine(p palette, c *tract.CommitInfo, width int, names *toolNames) string {
	var b strings.Builder
	b.Grow(32 + 4*width)
	b.WriteString(p.hash(c.Hash.Short()))
	if len(c.Refs) > 0 {
		b.WriteString(" " + p.refs("("+strings.Join(c.Refs, ", ")+")"))
	}
	b.WriteByte(' ')
	b.WriteString(label(c))
	b.WriteString(": ")
	names.learnCommit(c)
	text := c.Text
	if id, name, ok := names.callOf(c); ok {
		b.WriteString(preview(toolLabel(id, name), width) + " → ")
	} else if calls := callsLine(c); calls != "" {
		text = calls // every call on the one line, not only the first
	}
	b.WriteString(preview(text, width))
	fix, fixed := fixRecord(c)
	switch r, ok := failureRecord(c); {
	case ok:
		b.WriteString("  " + p.bad("✗ "+string(r.Type)+": "+preview(r.Error, 80)))
	case fixed && fix.Original.IsZero(): // the answer as given, which a validator fixed
		d := strings.TrimPrefix(c.Diagnosis(), fix.By+": ") // All's prefix of a lone validator's diagnosis
		b.WriteString("  " + p.bad("✗ fixed by "+preview(fix.By, 40)+": "+preview(d, 80)))
	case fixed: // the fixed answer, in its place
		b.WriteString("  " + p.good("✓ fixed by "+preview(fix.By, 40)))
	default:
		if d := c.Diagnosis(); d != "" && c.Role == tract.RoleAssistant {
			b.WriteString("  " + p.bad("✗ "+preview(d, 80)))
		}
	}
	return b.String()
}

// fixRecord is the fixed record of a commit (see tract.FixRecord),
// read only when its metadata may hold one.
func fixRecord(c *tract.CommitInfo) (tract.FixRecord, bool) {
	if !bytes.Contains(c.Meta, []byte(`"`+tract.MetaFixed+`"`)) {
		return tract.FixRecord{}, false
	}
	return c.FixRecord()
}

// label names a commit by role, and by kind when it is not a plain message.
func label(c *tract.CommitInfo) string {
	switch c.Kind {
	case tract.KindMessage:
		return string(c.Role)
	case tract.KindSteering, tract.KindSummary, tract.KindNote, tract.KindError:
		return string(c.Kind)
	}
	return string(c.Kind) + "/" + string(c.Role)
}

// preview returns the first line of s, cut to width runes, with tabs as
// spaces and other control characters shown as the screen sanitiser
// shows them (see screenText): one line, wherever it is printed.
func preview(s string, width int) string {
	s = previewLine(s, width)
	if !hasControl(s) {
		return s // most lines: no second pass
	}
	return screenText(strings.ReplaceAll(s, "\t", " "))
}

// hasControl reports whether s may hold a control character: a byte
// below 0x20, DEL, or the lead byte of U+0080–U+009F.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == 0xc2 {
			return true
		}
	}
	return false
}

func previewLine(s string, width int) string {
	cut := false
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cut = s[:i], true
	}
	if width > 0 {
		// Keep width-1 runes when more than width remain.
		n := 0
		for i := range s {
			if n == width-1 {
				if _, size := utf8.DecodeRuneInString(s[i:]); i+size < len(s) {
					s, cut = s[:i], true
				}
				break
			}
			n++
		}
	}
	if cut {
		s += "…"
	}
	return s
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(prefix+l, " ")
	}
	return strings.Join(lines, "\n")
}

// failureRecord is c.FailureRecord, without decoding the metadata of the
// many commits that have none.
func failureRecord(c *tract.CommitInfo) (tract.FailureRecord, bool) {
	if !bytes.Contains(c.Meta, []byte(`"`+tract.MetaFailure+`"`)) {
		return tract.FailureRecord{}, false
	}
	return c.FailureRecord()
}
