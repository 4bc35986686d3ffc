package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError is the root command's FlagErrorFunc: it says in tract's words
// what pflag found wrong on the command line, so that neither pflag's
// phrasing nor the strconv error under it ('invalid argument "abc" for
// "-n, --max-count" flag: strconv.ParseInt: …') reaches the user. Every
// error it returns is a usage error (exit 2).
func flagError(cmd *cobra.Command, err error) error {
	var (
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
		notExist *pflag.NotExistError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &invalid):
		fl := invalid.GetFlag()
		return usageErrorf("%s: %s", flagName(fl), badValue(fl, invalid.GetValue(), invalid.Unwrap()))
	case errors.As(err, &required):
		fl := required.GetFlag()
		name := "--" + required.GetSpecifiedName()
		if required.GetSpecifiedShortnames() != "" {
			name = "-" + required.GetSpecifiedName()
		}
		if fl != nil {
			return usageErrorf("%s needs a value: %s", name, valueKind(fl))
		}
		return usageErrorf("%s needs a value", name)
	case errors.As(err, &notExist):
		return unknownFlag(cmd, notExist)
	case errors.As(err, &syntax):
		return usageErrorf("%q is not a flag: a flag is -x or --name", syntax.GetSpecifiedFlag())
	}
	return &usageError{err}
}

// flagName names fl in an error: -n when it has a shorthand, as people
// type it, else --name.
func flagName(fl *pflag.Flag) string {
	if fl.Shorthand != "" && fl.ShorthandDeprecated == "" {
		return "-" + fl.Shorthand
	}
	return "--" + fl.Name
}

// badValue says why value is not one of fl's, in words that name no Go
// type: cause is the error of fl's Set.
func badValue(fl *pflag.Flag, value string, cause error) string {
	q := strconv.Quote(value)
	switch t := fl.Value.Type(); {
	case isIntType(t):
		if errors.Is(cause, strconv.ErrRange) {
			return q + " is too large a number"
		}
		if strings.HasPrefix(t, "uint") && strings.HasPrefix(strings.TrimSpace(value), "-") {
			return q + " is negative: give 0 or more"
		}
		return q + " is not a number: " + valueKind(fl)
	case t == "float32" || t == "float64":
		if errors.Is(cause, strconv.ErrRange) {
			return q + " is out of range"
		}
		return q + " is not a number: " + valueKind(fl)
	case t == "bool":
		return fmt.Sprintf("%s is not true or false: give --%s alone, or --%s=false", q, fl.Name, fl.Name)
	case t == "duration":
		return q + " is not a duration: " + valueKind(fl)
	}
	// A flag of tract's own type says what is wrong in its own words.
	return q + ": " + cause.Error()
}

// valueKind says what a value of fl looks like.
func valueKind(fl *pflag.Flag) string {
	switch t := fl.Value.Type(); {
	case isIntType(t):
		return fmt.Sprintf("give a whole number, such as %s 10", flagName(fl))
	case t == "float32" || t == "float64":
		return fmt.Sprintf("give a number, such as %s 0.5", flagName(fl))
	case t == "duration":
		return "give a number with a unit, such as 500ms, 30s, 5m or 1h30m"
	}
	value := flagValueName(fl)
	if value == "" {
		value = "VALUE"
	}
	return fmt.Sprintf("give it as %s %s or --%s=%s", flagName(fl), value, fl.Name, value)
}

func isIntType(t string) bool {
	return strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || t == "count"
}

// unknownFlag is the error for a flag cmd does not have, with the flags
// it has whose names are close to it, as cobra suggests commands for an
// unknown command ("Did you mean this?").
func unknownFlag(cmd *cobra.Command, e *pflag.NotExistError) error {
	name := e.GetSpecifiedName()
	if group := e.GetSpecifiedShortnames(); group != "" {
		r, _ := utf8.DecodeRuneInString(name)
		if group == string(r) {
			return usageErrorf("unknown flag -%c", r)
		}
		msg := fmt.Sprintf("unknown flag -%c in -%s", r, group)
		// A long flag typed with one dash (-oneline) is read as shorthands.
		if s := flagSuggestions(cmd, group); len(group) > 3 && len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return &usageError{errors.New(msg)}
	}
	msg := "unknown flag --" + name
	if s := flagSuggestions(cmd, name); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return &usageError{errors.New(msg)}
}

// flagSuggestions returns cmd's flags (its own and those it inherits)
// whose names are within two edits of typed or start with it, as
// "--name", sorted.
func flagSuggestions(cmd *cobra.Command, typed string) []string {
	typed = strings.ToLower(typed)
	var out []string
	seen := map[string]bool{}
	visit := func(fl *pflag.Flag) {
		if fl.Hidden || fl.Deprecated != "" || seen[fl.Name] {
			return
		}
		seen[fl.Name] = true
		name := strings.ToLower(fl.Name)
		if editDistance(name, typed) <= 2 || len(typed) >= 3 && strings.HasPrefix(name, typed) {
			out = append(out, "--"+fl.Name)
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	slices.Sort(out)
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// countShorthand is the annotation of a command that takes git's -N for
// "at most N" ('tract log -2'): its value names the flag -N sets.
const countShorthand = "tract-count-shorthand"

// markCountShorthand says that -N on cmd means --name=N.
func markCountShorthand(cmd *cobra.Command, name string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[countShorthand] = name
}

// expandCountShorthand rewrites, for the command args run, each -N (a
// dash and digits) into --FLAG=N when the command takes -N (see
// countShorthand). pflag would read -2 as the unknown flags -2. A flag's
// value ('--format -2') and what follows "--" stay as they are.
func expandCountShorthand(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Annotations[countShorthand] == "" {
		return args
	}
	name := cmd.Annotations[countShorthand]
	lookup := func(long string, short string) *pflag.Flag {
		for _, fs := range [...]*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
			if long != "" {
				if fl := fs.Lookup(long); fl != nil {
					return fl
				}
			} else if fl := fs.ShorthandLookup(short); fl != nil {
				return fl
			}
		}
		return nil
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "0123456789") == "":
			out = append(out, "--"+name+"="+a[1:])
			continue
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			if fl := lookup(a[2:], ""); fl != nil && fl.NoOptDefVal == "" && i+1 < len(args) {
				out = append(out, a, args[i+1])
				i++
				continue
			}
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			// A group of shorthands (-an): the first that takes a value
			// takes the rest of the group, else the next argument.
			for j := 1; j < len(a); j++ {
				fl := lookup("", a[j:j+1])
				if fl == nil || fl.NoOptDefVal != "" {
					continue
				}
				if j == len(a)-1 && i+1 < len(args) {
					out = append(out, a, args[i+1])
					i++
					a = ""
				}
				break
			}
			if a == "" {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
