package events

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tractdag/tract/retry"
)

// Stats summarises the validated turns of a repository, orphaned attempts
// included, as Replay regenerates them, by task: the turns that carry a
// task id count as one task per id, over all its turns; each turn without
// a task id counts as a task of its own, and Tasks lists them together on
// the line of NoTask. The JSON names are those of 'tract stats --json'.
type Stats struct {
	// TotalTasks is the number of tasks: distinct task ids, and each
	// turn without one.
	TotalTasks int `json:"total_tasks"`
	// FirstAttemptSuccesses are the tasks accepted on their first
	// attempt; FirstAttemptSuccessPct is their share of TotalTasks in
	// percent, to one decimal.
	FirstAttemptSuccesses  int     `json:"first_attempt_successes"`
	FirstAttemptSuccessPct float64 `json:"first_attempt_success_pct"`
	// Retried are the tasks that took more than one attempt;
	// RetrySuccesses those of them whose last turn ended accepted.
	Retried        int `json:"retried"`
	RetrySuccesses int `json:"retry_successes"`
	// Fixes counts the accepted answers that a validator fixed (see
	// retry.FixFunc): each was accepted as fixed, with no other model
	// call, so a fix is no retry (a task whose first answer was fixed is
	// a first-attempt success). FixesByValidator counts them by the
	// validator that fixed them ("json").
	Fixes            int            `json:"fixes"`
	FixesByValidator map[string]int `json:"fixes_by_validator"`
	// Escalations are the tasks that escalated at least once (their
	// attempts ran out, or a failure retrying cannot fix occurred).
	Escalations int `json:"escalations"`
	// Skipped and Aborted are the tasks with a turn whose escalation was
	// answered skip, or abort: any turn, not only the last (a task
	// skipped and later accepted is skipped, and a retry success).
	Skipped int `json:"skipped"`
	Aborted int `json:"aborted"`
	// AnsweredBy counts the answers to escalations that waited in the
	// repository (see package escalation) by who gave them (NoOne when
	// no one said).
	AnsweredBy map[string]int `json:"answered_by"`
	// Attempts is the number of attempts of every task; MeanAttempts is
	// Attempts / TotalTasks, to two decimals.
	Attempts     int     `json:"attempts"`
	MeanAttempts float64 `json:"mean_attempts"`
	// FailureTypes counts the failed attempts by failure type.
	FailureTypes map[retry.FailureType]int `json:"failure_types"`
	// TopDiagnoses are the most common failures (the failure records'
	// one-line errors, normalised: lower case; paths, hashes, numbers and
	// quoted text replaced), at most five, most common first.
	TopDiagnoses []DiagnosisCount `json:"top_diagnoses"`
	// TokensFailed and TokensAccepted are the tokens (prompt and
	// completion) the model spent on rejected answers and on accepted
	// ones, from each answer's usage.
	TokensFailed   int `json:"tokens_failed"`
	TokensAccepted int `json:"tokens_accepted"`
	// UntaskedTurns counts the validated turns without a task id, each a
	// task of its own in the figures above (none when the filter names
	// a task prefix).
	UntaskedTurns int `json:"untasked_turns"`
	// Tasks are the tasks, in the order they were first worked on; the
	// turns without a task id share one line, whose Task is NoTask.
	Tasks []TaskStats `json:"tasks"`
}

// NoTask is the Task of the line of Stats.Tasks that sums up the turns
// without a task id.
const NoTask = ""

// NoOne is the key of Stats.AnsweredBy for answers that did not say who
// gave them.
const NoOne = "(unknown)"

// TaskStats is one task's line of Stats.
type TaskStats struct {
	// Task is the task id; NoTask on the line of the turns without one.
	Task string `json:"task_id"`
	// Turns is the number of validated turns (Chat, Generate calls) that
	// worked on it; Attempts the number of attempts over all of them.
	Turns    int `json:"turns"`
	Attempts int `json:"attempts"`
	// Result is the resolution of its last turn (ResolvedSuccess, …).
	Result string `json:"result"`
	// Escalated says whether one of its turns escalated.
	Escalated bool `json:"escalated"`
	// Fixes is the number of its turns whose accepted answer a validator
	// fixed.
	Fixes int `json:"fixes"`
	// Started is when its first attempt started.
	Started time.Time `json:"started"`
}

// DiagnosisCount is a normalised diagnosis and how many failed attempts
// gave it.
type DiagnosisCount struct {
	Diagnosis string `json:"diagnosis"`
	Count     int    `json:"count"`
}

// Filter selects the tasks Summarize summarises.
type Filter struct {
	// TaskPrefix keeps the tasks whose id starts with it ("": all, the
	// turns without a task id included).
	TaskPrefix string
	// Since keeps the turns whose first attempt started at or after it
	// (zero: all).
	Since time.Time
}

// topDiagnoses is how many diagnoses Stats lists.
const topDiagnoses = 5

// Summarize summarises the tasks of traces (see Stats) that f selects.
func Summarize(traces []*Trace, f Filter) *Stats {
	st := &Stats{FailureTypes: map[retry.FailureType]int{}, FixesByValidator: map[string]int{}, AnsweredBy: map[string]int{}, TopDiagnoses: []DiagnosisCount{}, Tasks: []TaskStats{}}
	byTask := make(map[string]int) // task id (NoTask too) → index in st.Tasks
	var units []*taskUnit          // the tasks the figures count, in order
	unitOf := make(map[string]*taskUnit)
	errs := make(map[string]int) // failures' one-line errors, as given

	for _, tn := range traces {
		s := tn.sum
		switch {
		case !f.Since.IsZero() && s.start.Before(f.Since):
			continue
		case tn.Task == NoTask && f.TaskPrefix != "":
			continue
		case !strings.HasPrefix(tn.Task, f.TaskPrefix):
			continue
		}
		i, ok := byTask[tn.Task]
		if !ok {
			i = len(st.Tasks)
			byTask[tn.Task] = i
			st.Tasks = append(st.Tasks, TaskStats{Task: tn.Task, Started: s.start})
		}
		ts := &st.Tasks[i]
		ts.Turns++
		ts.Attempts += s.attempts
		ts.Result = s.resolution()
		ts.Escalated = ts.Escalated || s.escalated()
		if s.fixedBy != "" && s.outcome == outcomeSuccess {
			ts.Fixes++
			st.Fixes++
			st.FixesByValidator[s.fixedBy]++
		}
		u := unitOf[tn.Task]
		if tn.Task == NoTask || u == nil {
			u = &taskUnit{}
			units = append(units, u)
			if tn.Task != NoTask {
				unitOf[tn.Task] = u
			}
		}
		if tn.Task == NoTask {
			st.UntaskedTurns++
		}
		u.add(s)
		st.Attempts += s.attempts
		st.TokensFailed += s.tokensFailed
		st.TokensAccepted += s.tokensAccepted
		for _, ft := range s.failureTypes {
			st.FailureTypes[ft]++
		}
		for _, e := range s.errors {
			errs[e]++
		}
		for _, by := range s.answeredBy {
			st.AnsweredBy[cmp.Or(by, NoOne)]++
		}
	}
	for _, u := range units {
		switch {
		case u.attempts == 1 && u.result == ResolvedSuccess:
			st.FirstAttemptSuccesses++
		case u.attempts > 1:
			st.Retried++
			if u.result == ResolvedSuccess {
				st.RetrySuccesses++
			}
		}
		if u.escalated {
			st.Escalations++
		}
		if u.skipped {
			st.Skipped++
		}
		if u.aborted {
			st.Aborted++
		}
	}
	st.TotalTasks = len(units)
	if st.TotalTasks > 0 {
		st.FirstAttemptSuccessPct = math.Round(1000*float64(st.FirstAttemptSuccesses)/float64(st.TotalTasks)) / 10
		st.MeanAttempts = math.Round(100*float64(st.Attempts)/float64(st.TotalTasks)) / 100
	}
	diagnoses := make(map[string]int)
	for e, n := range errs {
		diagnoses[normaliseDiagnosis(e)] += n
	}
	for d, n := range diagnoses {
		st.TopDiagnoses = append(st.TopDiagnoses, DiagnosisCount{Diagnosis: d, Count: n})
	}
	slices.SortFunc(st.TopDiagnoses, func(a, b DiagnosisCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Diagnosis, b.Diagnosis))
	})
	st.TopDiagnoses = st.TopDiagnoses[:min(topDiagnoses, len(st.TopDiagnoses))]
	return st
}

// taskUnit is one task as the figures of Stats count it: a task id over
// all its turns, or one turn without a task id.
type taskUnit struct {
	attempts                    int
	result                      string // the last turn's resolution
	escalated, skipped, aborted bool   // at any turn
}

// add counts turn s, the task's latest.
func (u *taskUnit) add(s *deriver) {
	u.attempts += s.attempts
	u.result = s.resolution()
	u.escalated = u.escalated || s.escalated()
	u.skipped = u.skipped || u.result == ResolvedSkipped
	u.aborted = u.aborted || u.result == ResolvedAborted
}

// normaliseDiagnosis turns a failure's one-line error into its kind, so
// that "line 3: unexpected 'x'" and "line 7: unexpected 'y'" count as one,
// and so do the same compiler message about files in two temporary
// directories: lower case, the directories of a path as "…/", hashes as
// HASH, quoted text as "…", numbers as N, white space collapsed, trailing
// punctuation dropped.
func normaliseDiagnosis(s string) string {
	s = maskVariableParts(strings.ToLower(s)) // lower case first: a number stays N
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, ".:;, ")
}

// maskVariableParts replaces what differs from one failure to the next of
// the same kind: text in double, single or back quotes (a quote without
// its closing one stays) becomes "…"; a path's directories (see
// pathDirLen) become "…/", its file name staying (a temporary file's
// name as "tmp…", see tempNameLen); a hexadecimal word of
// seven or more characters with a digit and a letter (a commit or object
// hash, a temporary name's random part) becomes HASH; a number (digits,
// with a fraction or not) becomes N. It is a scan of its own rather than
// regular expressions: those would be compiled by every command at start.
func maskVariableParts(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		runStart := i == 0 || !isPathByte(s[i-1])
		wordStart := i == 0 || !isAlnum(s[i-1])
		switch {
		case c == '"' || c == '\'' || c == '`':
			if end := strings.IndexByte(s[i+1:], c); end >= 0 {
				b.WriteString(`"…"`)
				i += end + 2
				continue
			}
		case runStart && isPathByte(c):
			if n := pathDirLen(s[i:]); n > 0 {
				b.WriteString("…/")
				i += n // the file name is scanned on, but a temporary one's random part
				if m := tempNameLen(s[i:]); m > 0 {
					b.WriteString("tmp…")
					i += m
				}
				continue
			}
		}
		switch {
		case wordStart && isAlnum(c):
			if n := hashLen(s[i:]); n > 0 {
				b.WriteString("HASH")
				i += n
				continue
			}
		}
		if isDigit(c) {
			i = skipDigits(s, i)
			if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
				i = skipDigits(s, i+1)
			}
			b.WriteByte('N')
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// isPathByte reports a byte that may be part of a path as diagnoses
// print them.
func isPathByte(c byte) bool {
	return isAlnum(c) || c >= 'A' && c <= 'Z' || strings.IndexByte("._-~+@/", c) >= 0
}

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' }

// pathDirLen returns the length of the directories (up to and including
// the last slash) of the path that s starts with, or 0 when s starts with
// no path: a run of path bytes that starts with "/", "./", "../" or "~/"
// and has a directory before its last slash ("/tmp/x.go", "../d/x.go";
// not "/x.go"), or that has two slashes or more ("internal/turn/x.go";
// not "and/or").
func pathDirLen(s string) int {
	end := 0
	for end < len(s) && isPathByte(s[end]) {
		end++
	}
	run := s[:end]
	last := strings.LastIndexByte(run, '/')
	switch {
	case last <= 0:
		return 0
	case strings.HasPrefix(run, "/"), strings.HasPrefix(run, "./"), strings.HasPrefix(run, "../"), strings.HasPrefix(run, "~/"),
		strings.Count(run, "/") >= 2:
		return last + 1
	}
	return 0
}

// tempNameLen returns the length of the temporary file name s starts
// with ("tmp", maybe ".", then six letters, digits or underscores or more:
// mktemp's tmp.k2Xq9ZbP1c, Python's tmpk2x_q9zb), or 0.
func tempNameLen(s string) int {
	if !strings.HasPrefix(s, "tmp") {
		return 0
	}
	n := len("tmp")
	if n < len(s) && s[n] == '.' {
		n++
	}
	start := n
	for n < len(s) && (isAlnum(s[n]) || s[n] == '_') {
		n++
	}
	if n-start < 6 {
		return 0
	}
	return n
}

// hashLen returns the length of the hexadecimal word s starts with when
// it looks like a hash: seven characters or more, with a digit and a
// letter, ending at a byte that is neither a letter nor a digit; else 0.
func hashLen(s string) int {
	n, digit, letter := 0, false, false
	for n < len(s) && isAlnum(s[n]) {
		switch c := s[n]; {
		case isDigit(c):
			digit = true
		case c <= 'f':
			letter = true
		default:
			return 0 // not hexadecimal
		}
		n++
	}
	if n < 7 || !digit || !letter {
		return 0
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipDigits returns the index of the first byte at or after i in s that
// is not a digit.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
