package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
)

// dateMode is how human output writes a time (--date).
type dateMode string

const (
	dateISO      dateMode = "iso"      // 2026-11-23 17:07:10 +0100, local time (the default)
	dateRelative dateMode = "relative" // 5 minutes ago
	dateUnix     dateMode = "unix"     // 1795453630
)

// isoLayout is git's --date=iso: seconds, never nanoseconds, and the offset.
const isoLayout = "2006-01-02 15:04:05 -0700"

// dateHelp lists the --date modes for a flag's help.
const dateHelp = "how to write dates"

// addDateFlag registers --date on cmd with a default and a usage,
// completing its modes.
func addDateFlag(cmd *cobra.Command, date *string, def dateMode, usage string) {
	cmd.Flags().StringVar(date, "date", string(def), usage)
	setValueName(cmd.Flags(), "date", "iso|relative|unix")
	_ = cmd.RegisterFlagCompletionFunc("date", cobra.FixedCompletions(
		[]string{string(dateISO), string(dateRelative), string(dateUnix)}, cobra.ShellCompDirectiveNoFileComp))
}

func parseDateMode(s string) (dateMode, error) {
	switch m := dateMode(s); m {
	case dateISO, dateRelative, dateUnix:
		return m, nil
	case "":
		return dateISO, nil
	}
	return "", usageErrorf("--date %q: give iso, relative or unix", s)
}

// dates writes times in one mode; now is the time relative dates count
// back from.
type dates struct {
	mode dateMode
	now  time.Time
}

func newDates(f *Factory, mode dateMode) dates {
	now := time.Now()
	if f.Clock != nil {
		now = f.Clock()
	}
	return dates{mode: mode, now: now}
}

func (d dates) format(t time.Time) string {
	switch d.mode {
	case dateRelative:
		return relativeDate(t, d.now)
	case dateUnix:
		return strconv.FormatInt(t.Unix(), 10)
	}
	return t.Local().Format(isoLayout)
}

// relativeDate writes how long before now t was, as git's --date=relative
// does.
func relativeDate(t, now time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return "in the future"
	}
	secs := int(d / time.Second)
	days := secs / 86400
	ago := func(n int, unit string) string { return english.Count(n, unit, unit+"s") + " ago" }
	switch {
	case secs < 90:
		return ago(secs, "second")
	case secs < 90*60:
		return ago((secs+30)/60, "minute")
	case secs < 36*3600:
		return ago((secs+1800)/3600, "hour")
	case days < 14:
		return ago((secs+43200)/86400, "day")
	case days < 70:
		return ago((days+3)/7, "week")
	case days < 365:
		return ago((days+15)/30, "month")
	}
	years, months := days/365, ((days%365)+15)/30
	if months == 0 || years >= 5 {
		return ago(years, "year")
	}
	return english.Count(years, "year", "years") + ", " + ago(months, "month")
}

// logPlaceholders documents --format; it is the help's list, in order.
var logPlaceholders = []struct{ code, what string }{
	{"%H", "hash"},
	{"%h", "short hash (8 characters)"},
	{"%P", "parent hashes, space-separated"},
	{"%p", "short parent hashes"},
	{"%r", "role (system, user, assistant, ...)"},
	{"%k", "kind (message, steering, summary, note, error)"},
	{"%d", "date, written as --date says (also %ad)"},
	{"%ai", "date, iso"},
	{"%ar", "date, relative"},
	{"%at", "date, unix seconds"},
	{"%s", "first line of the text"},
	{"%b", "the text after its first line (the body)"},
	{"%B", "the whole text"},
	{"%D", "ref names: HEAD -> main, side (empty when none)"},
	{"%x", "diagnosis of a failed attempt: its failure's type and error, or the validator's diagnosis"},
	{"%n", "newline"},
	{"%%", "a literal %"},
}

// logFormatHelp is the placeholder list for 'tract log --help'.
func logFormatHelp() string {
	var b strings.Builder
	for _, p := range logPlaceholders {
		fmt.Fprintf(&b, "  %-4s %s\n", p.code, p.what)
	}
	return b.String()
}

// logFormat is a parsed --format: literal text and placeholders.
type logFormat []formatPiece

type formatPiece struct {
	lit  string
	code string // "" for literal text
}

// parseLogFormat parses a --format template, refusing a placeholder it
// does not know rather than printing it as it is. A "format:" or
// "tformat:" prefix, as git accepts, is dropped.
func parseLogFormat(s string) (logFormat, error) {
	for _, prefix := range []string{"tformat:", "format:"} {
		s = strings.TrimPrefix(s, prefix)
	}
	var out logFormat
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		code := ""
		for _, p := range logPlaceholders {
			if strings.HasPrefix(s[i:], p.code) && len(p.code) > len(code) {
				code = p.code
			}
		}
		if strings.HasPrefix(s[i:], "%ad") {
			code = "%ad"
		}
		switch code {
		case "":
			next := s[i:]
			if len(next) > 2 {
				next = next[:2]
			}
			return nil, usageErrorf("--format: unknown placeholder %q at byte %d: 'tract log --help' lists them", next, i)
		case "%%":
			lit.WriteByte('%')
		case "%n":
			lit.WriteByte('\n')
		default:
			if lit.Len() > 0 {
				out = append(out, formatPiece{lit: lit.String()})
				lit.Reset()
			}
			out = append(out, formatPiece{code: code})
		}
		i += len(code) - 1
	}
	if lit.Len() > 0 {
		out = append(out, formatPiece{lit: lit.String()})
	}
	return out, nil
}

// oneLine reports whether the format prints one line per commit: it has
// no line break (%n, or one typed in the template) and neither %b nor
// %B, the text's lines. Its placeholders then lose their line breaks (see
// expand).
func (lf logFormat) oneLine() bool {
	if lf == nil {
		return false
	}
	for _, pc := range lf {
		if strings.ContainsAny(pc.lit, "\n\r") || pc.code == "%b" || pc.code == "%B" {
			return false
		}
	}
	return true
}

// flattenLines joins the lines of s with a space, as git joins the lines
// of a subject: a line break, with the spaces around it, becomes one space.
func flattenLines(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " ")
}

// expand writes c as the format says, colouring hashes and ref names as
// oneline output does. On a terminal, the texts it takes from c (%s, %b,
// %B, %x) go through the screen sanitiser (see screenText).
func (lf logFormat) expand(p palette, d dates, c *tract.CommitInfo, terminal bool) string {
	var b strings.Builder
	oneLine := lf.oneLine()
	for _, pc := range lf {
		if pc.code == "" {
			b.WriteString(pc.lit)
			continue
		}
		v := placeholder(pc.code, p, d, c)
		if oneLine {
			// A one-line format stays one line per commit, whatever a
			// placeholder holds (a multi-line diagnosis in %x).
			v = flattenLines(v)
		}
		if terminal && storedText(pc.code) {
			v = screenText(v)
		}
		b.WriteString(v)
	}
	return b.String()
}

// storedText reports whether placeholder code stands for text as it was
// stored (a message, a diagnosis), not for what tract formats.
func storedText(code string) bool {
	switch code {
	case "%s", "%b", "%B", "%x":
		return true
	}
	return false
}

func placeholder(code string, p palette, d dates, c *tract.CommitInfo) string {
	parents := func(short bool) string {
		s := make([]string, len(c.Parents))
		for i, h := range c.Parents {
			if short {
				s[i] = h.Short()
			} else {
				s[i] = h.String()
			}
		}
		return strings.Join(s, " ")
	}
	first, rest, _ := strings.Cut(c.Text, "\n")
	switch code {
	case "%H":
		return p.hash(c.Hash.String())
	case "%h":
		return p.hash(c.Hash.Short())
	case "%P":
		return parents(false)
	case "%p":
		return parents(true)
	case "%r":
		return string(c.Role)
	case "%k":
		return string(c.Kind)
	case "%d", "%ad":
		return d.format(c.Time)
	case "%ai":
		return dates{mode: dateISO}.format(c.Time)
	case "%ar":
		return dates{mode: dateRelative, now: d.now}.format(c.Time)
	case "%at":
		return dates{mode: dateUnix}.format(c.Time)
	case "%s":
		return strings.TrimSuffix(first, "\r")
	case "%b":
		return rest
	case "%B":
		return c.Text
	case "%D":
		return p.refs(strings.Join(c.Refs, ", "))
	case "%x":
		return diagnosis(c)
	}
	return ""
}

// diagnosis is why an attempt failed: its failure record's type and
// error, else the validator's diagnosis ("" for any other commit).
func diagnosis(c *tract.CommitInfo) string {
	if r, ok := failureRecord(c); ok {
		return string(r.Type) + ": " + r.Error
	}
	return c.Diagnosis()
}
