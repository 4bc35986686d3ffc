package export

import (
	"iter"
	"slices"
	"strings"
	"time"
)

// Filter keeps the conversations and validated turns an export writes
// (tract.ExportTask, ExportValidator, ExportSince, ExportUntil,
// ExportMinAttempts); its zero value keeps everything.
type Filter struct {
	// Task keeps what holds the task id Task ("": any).
	Task string
	// Validator keeps what was validated by Validator: a spec as given
	// ("cmd:go test ./..."), or a validator kind alone ("cmd", "json")
	// ("": any).
	Validator string
	// Since and Until keep what falls in a time range (a zero time leaves
	// that end open); Since is inclusive, Until exclusive.
	Since, Until time.Time
	// MinAttempts keeps what took at least MinAttempts attempts.
	MinAttempts int
}

// Accepted is what Filter needs of an accepted answer of a conversation.
type Accepted struct {
	// Task is the turn's task id, Validators the specs of its validators
	// and Attempts how many attempts it took.
	Task       string
	Validators []string
	Attempts   int
}

// Conversation reports whether f keeps a conversation whose last commit
// was made at last and whose accepted answers are accepted: by the time
// of its last commit, and by one accepted answer that matches task,
// validator and attempts.
func (f Filter) Conversation(last time.Time, accepted []Accepted) bool {
	if !f.in(last) {
		return false
	}
	if f.Task == "" && f.Validator == "" && f.MinAttempts <= 0 {
		return true
	}
	return slices.ContainsFunc(accepted, func(a Accepted) bool {
		return (f.Task == "" || a.Task == f.Task) && (f.Validator == "" || MatchValidator(a.Validators, f.Validator)) &&
			a.Attempts >= f.MinAttempts
	})
}

// Turn reports whether f keeps a validated turn of task that took
// attempts and started at start, whose steps recorded the validator
// specs validators yields (one list a step).
func (f Filter) Turn(task string, attempts int, start time.Time, validators iter.Seq[[]string]) bool {
	switch {
	case f.Task != "" && task != f.Task, f.MinAttempts > 0 && attempts < f.MinAttempts, !f.in(start):
		return false
	case f.Validator != "":
		for specs := range validators {
			if MatchValidator(specs, f.Validator) {
				return true
			}
		}
		return false
	}
	return true
}

// in reports whether t falls in f's time range.
func (f Filter) in(t time.Time) bool {
	return (f.Since.IsZero() || !t.Before(f.Since)) && (f.Until.IsZero() || t.Before(f.Until))
}

// MatchValidator reports whether one of specs is spec, or is of kind
// spec (spec holding no ':').
func MatchValidator(specs []string, spec string) bool {
	for _, s := range specs {
		kind, _, _ := strings.Cut(s, ":")
		if s == spec || !strings.Contains(spec, ":") && kind == spec {
			return true
		}
	}
	return false
}
