package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// EventsOptions are the inputs of 'tract events'.
type EventsOptions struct {
	Factory *Factory
	// Task keeps the events of one task id ("": all).
	Task string
	// Since keeps the events at or after it (zero: all).
	Since time.Time
	// Format is "jsonl" or "text".
	Format string
}

func newCmdEvents(f *Factory, runF func(*EventsOptions) error) *cobra.Command {
	opts := &EventsOptions{Factory: f}
	var since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "events [--task ID] [--since TIME] [--format jsonl|text]",
		Short: "Print the events of the validated turns",
		Long: `Print the events of every validated turn (attempt, feedback_injected,
escalated, user_response, resolved), oldest first, regenerated from the
commits, orphaned attempts included: exactly the lines 'tract chat --events
FILE' appended while the turns ran, as JSON lines or (--format text) the
lines of the retry log.`,
		Example: `  tract events --task 03-01:task-3 --format text
  tract events --since 1d | jq 'select(.event=="resolved")'`,
		Args: exactArgs(0, "no arguments (use --task ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("task") && opts.Task == "" {
				return usageErrorf(`--task "": name a task id`)
			}
			if asJSON {
				if cmd.Flags().Changed("format") && opts.Format != "jsonl" {
					return usageErrorf("--json and --format %s exclude each other (--json is --format jsonl)", opts.Format)
				}
				opts.Format = "jsonl"
			}
			if opts.Format != "jsonl" && opts.Format != "text" {
				return usageErrorf(`--format %q: use jsonl or text`, opts.Format)
			}
			var err error
			if opts.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return eventsRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Task, "task", "", "only the events of task `ID`")
	fl.StringVar(&since, "since", "", "only the events since `TIME`: RFC 3339 or an age (7d)")
	fl.StringVar(&opts.Format, "format", "jsonl", "JSON lines or text, an event a line")
	setValueName(fl, "format", "jsonl|text")
	addJSONFlag(cmd, &asJSON, "the same as --format jsonl", "events")
	return cmd
}

func eventsRun(cmd *cobra.Command, opts *EventsOptions) error {
	f := opts.Factory
	return withTract(f, func(t *tract.Tract) error {
		evs, err := t.Events(cmd.Context(), tract.EventFilter{Task: opts.Task, Since: opts.Since})
		if err != nil {
			return err
		}
		for _, e := range evs {
			if opts.Format == "text" {
				fmt.Fprintln(f.IO.Out, e.String())
				continue
			}
			line, err := eventLine(e)
			if err != nil {
				return err
			}
			if _, err := f.IO.Out.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// parseSince parses the value of --since: "" (no bound), an RFC 3339
// time, or an age before now as gc's --expire takes it.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := parseAgeOf("--since", s)
	if err != nil {
		return time.Time{}, usageErrorf(`--since %q: use an RFC 3339 time such as 2026-01-26T14:00:00Z, or an age such as 90m, 12h or 7d`, s)
	}
	return now.Add(-d), nil
}

// eventLine is event e as a line of JSONL: what 'tract chat --events'
// appends and 'tract events' prints, byte for byte.
func eventLine(e tract.Event) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return jsonSafe(b.Bytes()), nil
}

// eventLog appends events to the file of 'tract chat --events' as they
// happen, one line each, written straight to the file.
type eventLog struct {
	name string
	mu   sync.Mutex // guards f and err
	f    *os.File
	err  error // the first write error
}

// openEventLog opens (creating it 0600 when missing) the file name to
// append events to.
func openEventLog(name string) (*eventLog, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	return &eventLog{name: name, f: f}, nil
}

// write appends e; after a failed write it writes nothing more (see
// close).
func (l *eventLog) write(e tract.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	line, err := eventLine(e)
	if err == nil {
		_, err = l.f.Write(line)
	}
	l.err = err
}

// close closes the file and returns the first error writing it.
func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.err, l.f.Close())
	if err != nil {
		return fmt.Errorf("--events %s: %w", l.name, err)
	}
	return nil
}
