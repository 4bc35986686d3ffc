package turn_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/record"
	"github.com/tractdag/tract/turn"
)

func TestResolutionOf(t *testing.T) {
	cases := []struct {
		action, instruction string
		want                turn.Resolution
		part                string // the wrong part; "" when none is
		missing             bool
	}{
		{action: "retry", want: turn.Resolution{Action: record.ResolveRetry}},
		{action: " Skip ", want: turn.Resolution{Action: record.ResolveSkip}},
		{action: "abort", want: turn.Resolution{Action: record.ResolveAbort}},
		{action: "FIX", instruction: " use integers ", want: turn.Resolution{Action: record.ResolveFix, Instruction: "use integers"}},
		{action: "fix", part: "instruction", missing: true},
		{action: "fix", instruction: "  ", part: "instruction", missing: true},
		{action: "retry", instruction: "why", part: "instruction"},
		{action: "redo", part: "action"},
		{action: "fix: sneaky", instruction: "x", part: "instruction"},
		{action: "fix: sneaky", part: "action"},
		{action: "", part: "action"},
	}
	for _, c := range cases {
		t.Run(c.action+"/"+c.instruction, func(t *testing.T) {
			got, err := turn.ResolutionOf(c.action, c.instruction)
			if c.part == "" {
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			var pe *turn.ResolutionPartError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, c.part, pe.Part)
			assert.Equal(t, c.missing, pe.Missing)
			assert.Equal(t, c.action, pe.Action)
		})
	}
}
