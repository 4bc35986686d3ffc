package dag_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
)

// helloHash is the BLAKE3-256 of "hello", computed by the reference b3sum.
const helloHash = "ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f"

func TestSum_MatchesReferenceBLAKE3(t *testing.T) {
	assert.Equal(t, helloHash, dag.Sum([]byte("hello")).String())
}

func TestParseHash_RoundTripsAndAcceptsUppercase(t *testing.T) {
	h := dag.Sum([]byte("hello"))

	got, err := dag.ParseHash(h.String())
	require.NoError(t, err)
	assert.Equal(t, h, got)

	got, err = dag.ParseHash(strings.ToUpper(h.String()))
	require.NoError(t, err)
	assert.Equal(t, h, got)
}

func TestParseHash_RejectsBadInput(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty", "", "want 64 hex characters, got 0"},
		{"abbreviated", helloHash[:8], "got 8"},
		{"too long", helloHash + "00", "got 66"},
		{"not hex", "g" + helloHash[1:], "invalid byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dag.ParseHash(tt.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestHash_ShortIsFirstEightHexCharacters(t *testing.T) {
	h := dag.Sum([]byte("hello"))
	assert.Equal(t, helloHash[:dag.ShortLen], h.Short())
	assert.Len(t, h.Short(), 8)
}

func TestHash_IsZero(t *testing.T) {
	assert.True(t, dag.Hash{}.IsZero())
	assert.False(t, dag.Sum(nil).IsZero())
	var h dag.Hash
	h[31] = 1
	assert.False(t, h.IsZero())
}

func TestHash_TextMarshalingRoundTripsThroughJSON(t *testing.T) {
	h := dag.Sum([]byte("hello"))
	b, err := json.Marshal(map[string]dag.Hash{"h": h})
	require.NoError(t, err)
	assert.JSONEq(t, `{"h":"`+helloHash+`"}`, string(b))

	var back map[string]dag.Hash
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, h, back["h"])
}

func TestHash_UnmarshalTextRejectsAbbreviationAndKeepsValue(t *testing.T) {
	h := dag.Sum([]byte("hello"))
	err := h.UnmarshalText([]byte("abcd"))
	require.Error(t, err)
	assert.Equal(t, helloHash, h.String(), "a failed UnmarshalText must not change the hash")
}

func TestIsHexPrefix(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"abc", false}, // shorter than MinPrefixLen
		{"abcd", true},
		{"ABCD", true},
		{"0123456789abcdef", true},
		{helloHash, true},
		{helloHash + "0", false},
		{"abcg", false},
		{"main", false},
		{"ab d", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, dag.IsHexPrefix(tt.in), "IsHexPrefix(%q)", tt.in)
	}
}

func FuzzParseHash(f *testing.F) {
	for _, s := range []string{helloHash, strings.ToUpper(helloHash), helloHash[:63] + "g", helloHash[:62], helloHash + "0", "", "abcd", "ABC", " " + helloHash[1:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := dag.ParseHash(s)
		var u dag.Hash
		uerr := u.UnmarshalText([]byte(s))
		if (err == nil) != (uerr == nil) || u != h {
			t.Fatalf("%q: ParseHash gives %v, %v; UnmarshalText %v, %v", s, h, err, u, uerr)
		}
		if err != nil && !h.IsZero() {
			t.Fatalf("%q: ParseHash fails (%v) with a hash %v", s, err, h)
		}
		isFull := dag.IsHexPrefix(s) && len(s) == 2*dag.HashSize
		if err != nil {
			fuzzcheck.UserError(t, err)
			if isFull {
				t.Fatalf("%q: IsHexPrefix accepts a full hash ParseHash refuses: %v", s, err)
			}
			return
		}
		if !isFull {
			t.Fatalf("%q parses, but IsHexPrefix refuses it", s)
		}
		if h.String() != strings.ToLower(s) || !strings.HasPrefix(h.String(), h.Short()) {
			t.Fatalf("%q parses to %s (short %s)", s, h, h.Short())
		}
		text, err := h.MarshalText()
		require.NoError(t, err)
		if again, err := dag.ParseHash(string(text)); err != nil || again != h {
			t.Fatalf("%s does not parse back: %v, %v", text, again, err)
		}
	})
}
