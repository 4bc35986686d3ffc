package export_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/export"
)

func TestMatchValidator(t *testing.T) {
	specs := []string{"json", "cmd:go test ./..."}
	for spec, want := range map[string]bool{
		"json": true, "cmd": true, "cmd:go test ./...": true, "cmd:go vet": false, "regex": false, "json:x": false,
	} {
		assert.Equal(t, want, export.MatchValidator(specs, spec), spec)
	}
}

func TestFilter(t *testing.T) {
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	accepted := []export.Accepted{
		{Task: "t1", Validators: []string{"json"}, Attempts: 1},
		{Task: "t2", Validators: []string{"cmd:make"}, Attempts: 3},
	}
	for _, tc := range []struct {
		name       string
		f          export.Filter
		conv, turn bool // the conversation (accepted, last commit at noon); the turn (t2, 3 attempts, noon, cmd:make)
	}{
		{"none", export.Filter{}, true, true},
		{"task", export.Filter{Task: "t2"}, true, true},
		{"other task", export.Filter{Task: "t3"}, false, false},
		{"kind", export.Filter{Validator: "cmd"}, true, true},
		{"spec of another answer", export.Filter{Validator: "json"}, true, false},
		{"task and validator of different answers", export.Filter{Task: "t1", Validator: "cmd"}, false, false},
		{"attempts", export.Filter{MinAttempts: 3}, true, true},
		{"too many attempts", export.Filter{MinAttempts: 4}, false, false},
		{"since is inclusive", export.Filter{Since: noon}, true, true},
		{"until is exclusive", export.Filter{Until: noon}, false, false},
		{"in the range", export.Filter{Since: noon.Add(-time.Hour), Until: noon.Add(time.Hour)}, true, true},
		{"after the range", export.Filter{Since: noon.Add(time.Hour)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.conv, tc.f.Conversation(noon, accepted), "conversation")
			steps := slices.Values([][]string{nil, {"cmd:make"}})
			assert.Equal(t, tc.turn, tc.f.Turn("t2", 3, noon, steps), "turn")
		})
	}
}
