package dag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/dag"
)

func TestSentRole(t *testing.T) {
	for _, tc := range []struct {
		kind  dag.Kind
		role  dag.Role
		notes bool
		want  dag.Role // "": not sent
	}{
		{dag.KindMessage, dag.RoleAssistant, false, dag.RoleAssistant},
		{dag.KindSummary, dag.RoleSystem, false, dag.RoleSystem},
		{dag.KindSteering, dag.RoleSystem, false, dag.RoleUser},
		{dag.KindNote, dag.RoleSystem, false, ""},
		{dag.KindNote, dag.RoleSystem, true, dag.RoleSystem},
		{dag.KindError, dag.RoleSystem, true, ""},
	} {
		role, ok := dag.SentRole(tc.kind, tc.role, tc.notes)
		assert.Equal(t, tc.want != "", ok, "%s %s", tc.kind, tc.role)
		if ok {
			assert.Equal(t, tc.want, role, "%s %s", tc.kind, tc.role)
		}
	}
}
