package retry

import (
	"context"
	"errors"
	"strings"
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

func TestAllValidators_LaterValidatorsJudgeTheFix(t *testing.T) {
	ctx := t.Context()
	mask := FixFunc("mask", func(ctx context.Context, answer string) (string, error) {
		return strings.ReplaceAll(answer, "secret", "******"), nil
	})
	tests := []struct {
		name   string
		vs     []Validator
		answer string
		want   Verdict
	}{
		{"a fix the later validators pass", []Validator{FixJSON(), Contains(`"a"`), MaxLen(8)}, `Sure: {"a": 1,}`,
			Verdict{OK: true, Fixed: `{"a": 1}`, FixedBy: "json",
				Diagnosis: "json: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value"}},
		{"a fix a later validator rejects", []Validator{FixJSON(), MaxLen(5)}, `Sure: {"a": 1,}`,
			Verdict{Diagnosis: "maxlen:5: answer is 8 characters, more than the maximum of 5", Type: FailureVerification}},
		{"two fixes in turn", []Validator{FixJSON(), mask, JSON()}, `{"k": "secret",}`,
			Verdict{OK: true, Fixed: `{"k": "******"}`, FixedBy: "json, mask",
				Diagnosis: "json: invalid JSON at line 1, column 16: invalid character '}' looking for beginning of object key string\n" +
					"mask: the answer needed a fix by mask"}},
		{"a fixer with nothing to fix", []Validator{mask, JSON()}, `{"k": 1}`, Verdict{OK: true}},
		{"a failure before the fix", []Validator{MinLen(100), FixJSON()}, `{"a": 1,}`,
			Verdict{Diagnosis: "minlen:100: answer is 9 characters, fewer than the minimum of 100", Type: FailureVerification}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vd, err := Check(ctx, All(tt.vs...), tt.answer)
			require.NoError(t, err)
			assert.Equal(t, tt.want, vd)
		})
	}
}

func TestFixFunc(t *testing.T) {
	ctx := t.Context()
	errDown := errors.New("down")
	trim := FixFunc("trim", func(ctx context.Context, answer string) (string, error) {
		if answer == "broken" {
			return "", errDown
		}
		return strings.TrimSpace(answer), nil
	})
	assert.Equal(t, "trim", trim.Name())

	vd, err := Check(ctx, trim, "  x  ")
	require.NoError(t, err)
	assert.Equal(t, Verdict{OK: true, Fixed: "x", FixedBy: "trim", Diagnosis: "the answer needed a fix by trim"}, vd)
	ok, diagnosis, err := trim.Validate(ctx, "  x  ")
	require.NoError(t, err)
	assert.False(t, ok, "Validate rejects what it would fix: a caller that cannot take the fix never keeps the answer as given")
	assert.Equal(t, "the answer needed a fix by trim", diagnosis)

	vd, err = Check(ctx, trim, "x")
	require.NoError(t, err)
	assert.Equal(t, Verdict{OK: true}, vd, "a fix equal to the answer is none")
	ok, _, err = trim.Validate(ctx, "x")
	require.NoError(t, err)
	assert.True(t, ok)

	_, err = Check(ctx, trim, "broken")
	require.ErrorIs(t, err, errDown)
	_, _, err = trim.Validate(ctx, "broken")
	require.ErrorIs(t, err, errDown)
}

// A checker's fix on a rejection is dropped: only a passing verdict
// carries one.
func TestCheck_RejectionCarriesNoFix(t *testing.T) {
	v := CheckerFunc("c", func(ctx context.Context, answer string) (Verdict, error) {
		return Verdict{OK: false, Diagnosis: "no", Fixed: "yes", FixedBy: "c"}, nil
	})
	vd, err := Check(t.Context(), v, "x")
	require.NoError(t, err)
	assert.Equal(t, Verdict{Diagnosis: "no", Type: FailureVerification}, vd)
}
