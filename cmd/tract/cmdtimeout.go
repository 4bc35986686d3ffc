package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract/retry"
)

// addCmdTimeoutFlag adds --cmd-timeout to cmd, a command that takes
// --validate: how long one run of a "cmd:" validator's command may take.
// It is a string flag, read by parseCmdTimeout, so that a bad value is
// said in tract's words rather than pflag's and time's.
func addCmdTimeoutFlag(cmd *cobra.Command, s *string) {
	cmd.Flags().StringVar(s, "cmd-timeout", retry.DefaultCmdTimeout.String(),
		"kill cmd: validators after `DURATION`")
}

// parseCmdTimeout reads the value of --cmd-timeout: a positive duration.
func parseCmdTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil && nerr == nil {
		return 0, usageErrorf("--cmd-timeout %s has no unit: give %ss for seconds, or a duration such as 2m or 1m30s", s, strings.TrimSpace(s))
	}
	if err != nil {
		return 0, usageErrorf("--cmd-timeout %q is not a duration: give one such as 10s, 2m or 1m30s", s)
	}
	if d <= 0 {
		return 0, usageErrorf("--cmd-timeout %s: a validator's command needs some time to run: give a positive duration such as 10s or 2m", s)
	}
	return d, nil
}
