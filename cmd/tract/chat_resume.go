package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
)

// Escalations that wait in the repository, in 'tract chat': with
// --on-exhausted wait the turn records its escalation and waits for an
// answer given with 'tract escalation answer' from anywhere; with exit it
// records it and exits 9 (exitWaiting); --resume ID finishes such a turn,
// whose process ended.

// escalationPollEnv sets how long a waiting chat waits before it first
// looks for the answer (doubling up to escalationMaxPoll).
const escalationPollEnv = "TRACT_ESCALATION_POLL"

// escalationMaxPoll is the longest interval between two looks.
const escalationMaxPoll = 10 * time.Second

// pollOption is the interval TRACT_ESCALATION_POLL sets, if any.
func pollOption(f *Factory) ([]tract.WaitOption, error) {
	s := f.Getenv(escalationPollEnv)
	if s == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil, envErrorf(escalationPollEnv, "2s", "",
			"%s=%q is not an interval: give a duration such as 2s or 500ms", escalationPollEnv, s)
	}
	return []tract.WaitOption{tract.PollInterval(d, max(d, escalationMaxPoll))}, nil
}

// waitOptions are the options of a chat whose escalations wait in the
// repository: the interval, what to say once one is recorded, and with
// --on-exhausted exit not to wait.
func waitOptions(f *Factory, opts *ChatOptions) ([]tract.WaitOption, error) {
	wopts, err := pollOption(f)
	if err != nil {
		return nil, err
	}
	exit := opts.OnExhausted == onExhaustedExit
	wopts = append(wopts, tract.OnWaiting(func(w tract.WaitingEscalation) {
		fmt.Fprintf(f.IO.ErrOut, "escalated: %s after %d of %d attempts (round %d); escalation %s is in the repository\n",
			w.Reason, w.Attempts, w.MaxAttempts, w.Round, w.ID)
		if !exit {
			fmt.Fprintf(f.IO.ErrOut, "waiting for an answer: tract escalation answer %s retry|skip|abort|\"fix: TEXT\"\n", w.ID)
		}
	}))
	if exit {
		wopts = append(wopts, tract.ExitWhenEscalated())
	}
	return wopts, nil
}

// checkResume refuses what --resume cannot be given with.
func checkResume(opts *ChatOptions, args []string) error {
	switch {
	case opts.Resume == "":
		return nil
	case len(args) > 0:
		return usageErrorf("--resume finishes the turn of an escalation: give no MESSAGE")
	case opts.RetryLast, opts.Interactive, opts.New:
		return usageErrorf("--resume finishes the turn of an escalation: it cannot be combined with --retry-last, --interactive or --new")
	case opts.System != "":
		return usageErrorf("--resume cannot add --system: the turn's messages are committed already")
	case opts.Branch != "":
		return usageErrorf("--resume goes on on the escalation's own branch: give no --branch")
	case opts.Task != "":
		return usageErrorf("--resume goes on with the escalation's own task id: give no --task")
	}
	return nil
}

// resumeDefaults reads the escalation --resume names, before anything
// else is set up: it must exist and not be taken up, and it gives the
// turn's validators (unless --validate is given; their paths read from
// the working directory) and its attempts per round (unless
// --max-attempts is).
func resumeDefaults(cmd *cobra.Command, opts *ChatOptions) error {
	if opts.Resume == "" {
		return nil
	}
	return withTract(opts.Factory, func(t *tract.Tract) error {
		e, err := t.EscalationByID(cmd.Context(), opts.Resume)
		if err != nil {
			return err
		}
		if len(opts.Validate) == 0 {
			opts.Validate = e.Waiting.Validators
		}
		if !cmd.Flags().Changed("max-attempts") && e.MaxAttempts > 0 {
			opts.MaxAttempts = e.MaxAttempts
		}
		return nil
	})
}

// resumeTurn finishes the turn of escalation opts.Resume on t: it waits
// for the answer first when there is none (unless --on-exhausted exit).
func resumeTurn(ctx context.Context, f *Factory, t *tract.Tract, opts *ChatOptions, copts []tract.ChatOption) (*tract.ChatResult, error) {
	e, err := t.EscalationByID(ctx, opts.Resume)
	if err != nil {
		return nil, err
	}
	if e.Answer == nil && opts.OnExhausted != onExhaustedExit {
		wopts, err := pollOption(f)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(f.IO.ErrOut, "escalation %s is not answered yet; waiting for an answer: tract escalation answer %s retry|skip|abort|\"fix: TEXT\"\n", e.ID, e.ID)
		if e, err = t.WaitForAnswer(ctx, e.ID, wopts...); err != nil {
			return nil, err
		}
	}
	if e.Answer != nil {
		by := ""
		if e.Answer.By != "" {
			by = " by " + screenText(e.Answer.By)
		}
		fmt.Fprintf(f.IO.ErrOut, "escalation %s answered %q%s; resuming the turn on %s\n", e.ID, screenText(e.Answer.String()), by, e.Branch)
	}
	return t.ResumeEscalation(ctx, e.ID, copts...)
}

// waitingHint says how to answer the escalation of a turn that stopped
// while it waited, and how to finish the turn.
func waitingHint(err error) string {
	var w *tract.WaitingError
	if !errors.As(err, &w) {
		return ""
	}
	return fmt.Sprintf("The escalation waits in the repository (the branch stays at the turn's last attempt).\n"+
		"Answer it from anywhere: tract escalation answer %s retry|skip|abort|\"fix: TEXT\"\n"+
		"then finish the turn: tract chat --resume %s", w.ID, w.ID)
}

// warnWaitingEscalation warns, before a new message is sent, when an
// escalation waits on the branch's tip: the message would follow the
// turn's rejected attempt, and the turn could no longer be resumed (its
// branch moved).
func warnWaitingEscalation(ctx context.Context, f *Factory, t *tract.Tract) {
	_, tip, err := t.Head(ctx)
	if err != nil || tip.IsZero() {
		return // Chat reports what is wrong with the branch
	}
	es, err := t.Escalations(ctx)
	if err != nil {
		return
	}
	for _, e := range es {
		if e.Tip == tip {
			fmt.Fprintf(f.IO.ErrOut, "warning: escalation %s (%s) waits on the branch's last commit, the turn's last attempt;\n"+
				"this message follows it, and that turn can then no longer go on. Sending anyway.\n"+
				"Before a new message, answer it ('tract escalation answer %s ...') and finish the turn ('tract chat --resume %s').\n",
				e.ID, e.State, e.ID, e.ID)
		}
	}
}
