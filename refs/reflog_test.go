package refs_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/refs"
)

var entryTime = time.Date(2024, 5, 17, 9, 30, 15, 123456789, time.UTC)

func TestEntry_EncodeDecodeRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		entry refs.Entry
	}{
		{"new ref", refs.Entry{New: dag.Sum([]byte("a")), Time: entryTime, Action: refs.ActionBranch, Message: "branch: created from main"}},
		{"move", refs.Entry{Old: dag.Sum([]byte("a")), New: dag.Sum([]byte("b")), Time: entryTime, Action: refs.ActionPurify, Message: "purify: hid 2 failed attempts"}},
		{"deleted ref", refs.Entry{Old: dag.Sum([]byte("a")), Time: entryTime, Action: "delete"}},
		{"empty action and message", refs.Entry{Time: entryTime}},
		{"unicode and long message", refs.Entry{Time: entryTime, Action: refs.ActionCommit, Message: string(make([]byte, 300)) + "日本語 🚀"}},
		{"before 1970", refs.Entry{Time: time.Date(1960, 1, 1, 0, 0, 0, 1, time.UTC), Action: refs.ActionReset}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := refs.DecodeEntry(tt.entry.Encode())
			require.NoError(t, err)
			assert.Equal(t, tt.entry, got)
		})
	}
}

func TestEntry_EncodeLayout(t *testing.T) {
	e := refs.Entry{Old: dag.Sum([]byte("a")), New: dag.Sum([]byte("b")), Time: entryTime, Action: "reset", Message: "hi"}
	b := e.Encode()
	require.Len(t, b, 1+32+32+8+1+5+1+2)
	assert.Equal(t, byte(1), b[0])
	assert.Equal(t, e.Old[:], b[1:33])
	assert.Equal(t, e.New[:], b[33:65])
	assert.Equal(t, uint64(entryTime.UnixNano()), binary.BigEndian.Uint64(b[65:73]))
	assert.Equal(t, "\x05reset\x02hi", string(b[73:]))
}

func TestEntry_DecodeConvertsTimeToUTC(t *testing.T) {
	e := refs.Entry{Time: entryTime.In(time.FixedZone("X", 3600))}
	got, err := refs.DecodeEntry(e.Encode())
	require.NoError(t, err)
	assert.Equal(t, time.UTC, got.Time.Location())
	assert.True(t, entryTime.Equal(got.Time))
}

func TestDecodeEntry_RejectsMalformedInput(t *testing.T) {
	valid := refs.Entry{Time: entryTime, Action: "commit", Message: "m"}.Encode()
	with := func(edit func([]byte) []byte) []byte { return edit(append([]byte(nil), valid...)) }
	tests := []struct {
		name    string
		in      []byte
		wantMsg string
	}{
		{"empty", nil, "malformed (0 bytes)"},
		{"too short for the fixed part", valid[:72], "malformed (72 bytes)"},
		{"unknown version", with(func(b []byte) []byte { b[0] = 2; return b }), "malformed"},
		{"no action length", valid[:73], "truncated field"},
		{"action cut short", valid[:76], "truncated field"},
		{"no message length", valid[:80], "truncated field"},
		{"message cut short", with(func(b []byte) []byte { b[len(b)-2] = 9; return b }), "truncated field"},
		{"huge length", with(func(b []byte) []byte {
			return append(b[:73], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
		}), "truncated field"},
		{"non-minimal length varint", append(append(append([]byte(nil), valid[:73]...), 0x86, 0x00), valid[74:]...), "non-minimal"},
		{"trailing bytes", append(append([]byte(nil), valid...), 0, 0), "2 trailing bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := refs.DecodeEntry(tt.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Contains(t, err.Error(), "reflog entry")
		})
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(refs.Entry{Time: entryTime, Action: "commit", Message: "m"}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := refs.DecodeEntry(b)
		if err != nil {
			fuzzcheck.UserError(t, err)
			return
		}
		if got := e.Encode(); string(got) != string(b) {
			t.Fatalf("Encode(DecodeEntry(b)) != b:\n b   %x\n got %x", b, got)
		}
	})
}
