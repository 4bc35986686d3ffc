package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// exitCode maps each class of error, however deeply wrapped, to the code
// of its row in exitCodeTable.
func TestExitCode_Classes(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("cmd: %w", fmt.Errorf("step: %w", err)) }
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"usage marker", usageErrorf("bad flag"), exitUsage},
		{"spec", &retry.SpecError{Spec: "x", Reason: "r"}, exitUsage},
		{"config", &llm.ConfigError{Setting: "model"}, exitUsage},
		{"too large", &tract.TooLargeError{What: "x"}, exitUsage},
		{"empty text", tract.ErrInvalidText, exitUsage},
		{"metadata", tract.ErrInvalidMeta, exitUsage},
		{"role", tract.ErrInvalidRole, exitUsage},
		{"kind", tract.ErrInvalidKind, exitUsage},
		{"branch name", tract.ErrInvalidBranchName, exitUsage},
		{"branch exists", tract.ErrBranchExists, exitUsage},
		{"revision syntax", tract.ErrBadRevision, exitUsage},
		{"ambiguous", &tract.AmbiguousError{Prefix: "abcd"}, exitUsage},
		{"exhausted", &retry.ExhaustedError{}, exitExhausted},
		{"model", &llm.APIError{}, exitModel},
		{"transport", &llm.TransportError{}, exitModel},
		{"conflict", tract.ErrConflict, exitConflict},
		{"skipped", tract.ErrSkipped, exitSkipped},
		{"escalated", &tract.EscalationError{}, exitEscalated},
		{"unknown revision", tract.ErrUnknownRevision, exitNotFound},
		{"no such branch", tract.ErrBranchNotFound, exitNotFound},
		{"no repository", tract.ErrNotRepository, exitNotFound},
		{"missing input file", &notFoundError{fs.ErrNotExist}, exitNotFound},
		{"escalation waits", &tract.WaitingError{ID: "k3x9qa"}, exitWaiting},
		{"interrupted while an escalation waits", &tract.WaitingError{ID: "k3x9qa", Err: context.Canceled}, exitInterrupt},
		{"escalation answered already", &tract.AnsweredError{ID: "k3x9qa"}, exitConflict},
		{"escalation taken up", &tract.EscalationTakenUpError{ID: "k3x9qa"}, exitConflict},
		{"no such escalation", &tract.EscalationNotFoundError{ID: "k3x9qa"}, exitNotFound},
		{"interrupted", context.Canceled, exitInterrupt},
		{"detached", tract.ErrDetachedHead, exitError},
		{"current branch", tract.ErrCurrentBranch, exitError},
		{"damaged", tract.ErrDamaged, exitError},
		{"corrupt", tract.ErrCorrupt, exitError},
		{"corrupt file that cannot be opened", fmt.Errorf("open r.db: %w (%w)", tract.ErrNotRepository, tract.ErrCorrupt), exitError},
		{"read-only", tract.ErrReadOnly, exitError},
		{"locked", &tract.LockedError{}, exitError},
		{"anything else", errors.New("disk on fire"), exitError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exitCode(tc.err), "bare")
			assert.Equal(t, tc.want, exitCode(wrap(tc.err)), "wrapped")
		})
	}
	// Cobra's own error for an unknown command, which it returns as is.
	assert.Equal(t, exitUsage, exitCode(errors.New(`unknown command "x" for "tract"`)))
}

// Every code has one row in the table, in order, with a name and a meaning.
func TestExitCodes_TableIsComplete(t *testing.T) {
	codes := []int{exitOK, exitError, exitUsage, exitExhausted, exitModel, exitConflict, exitSkipped, exitEscalated, exitNotFound, exitWaiting, exitInterrupt}
	table := exitCodeTable()
	assert.Len(t, table, len(codes))
	for i, c := range table {
		assert.Equal(t, codes[i], c.Code)
		assert.NotEmpty(t, c.Name)
		assert.NotEmpty(t, c.Meaning)
	}
}
