package retry

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubValidator returns a fixed verdict and counts its calls.
type stubValidator struct {
	name      string
	ok        bool
	diagnosis string
	err       error
	calls     int
}

func (s *stubValidator) Name() string { return s.name }

func (s *stubValidator) Validate(ctx context.Context, answer string) (bool, string, error) {
	s.calls++
	return s.ok, s.diagnosis, s.err
}

func TestAllValidators_JoinsFailuresInOrder(t *testing.T) {
	v := All(JSON(), MaxLen(20), Contains("id"), MinLen(1))
	assert.Equal(t, "json, maxlen:20, contains:id, minlen:1", v.Name())

	ok, diagnosis, err := v.Validate(t.Context(), "this is not JSON at all, sorry")

	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "json: invalid JSON at line 1, column 2: invalid character 'h' in literal true (expecting 'r')\n"+
		"maxlen:20: answer is 30 characters, more than the maximum of 20\n"+
		`contains:id: answer does not contain "id"`, diagnosis)
}

func TestAllValidators_Passes(t *testing.T) {
	ok, diagnosis, err := All(JSON(), MaxLen(20)).Validate(t.Context(), `{"id": 1}`)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Empty(t, diagnosis)

	ok, _, err = All().Validate(t.Context(), "anything")
	require.NoError(t, err)
	assert.True(t, ok, "All of nothing passes")
}

func TestAllValidators_EmptyDiagnosis(t *testing.T) {
	ok, diagnosis, err := All(&stubValidator{name: "quiet"}).Validate(t.Context(), "x")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "quiet: validation failed", diagnosis)
}

func TestAllValidators_RunErrorStops(t *testing.T) {
	errBroken := errors.New("broken")
	first := &stubValidator{name: "first", diagnosis: "bad"}
	broken := &stubValidator{name: "llm:x", err: errBroken}
	last := &stubValidator{name: "last", ok: true}

	ok, diagnosis, err := All(first, broken, last).Validate(t.Context(), "x")

	require.ErrorIs(t, err, errBroken)
	assert.EqualError(t, err, "validator llm:x: broken")
	assert.False(t, ok)
	assert.Empty(t, diagnosis)
	assert.Equal(t, 1, first.calls)
	assert.Zero(t, last.calls)
}

func TestAllValidators_StopsWhenContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := &stubValidator{name: "s", ok: true}

	_, _, err := All(s).Validate(ctx, "x")

	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, s.calls)
}
