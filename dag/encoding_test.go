package dag_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
)

var update = flag.Bool("update", false, "rewrite the golden files under dag/testdata/")

// fixedTime is the clock reading of every commit built by these tests.
var fixedTime = time.Date(2024, 5, 17, 9, 30, 15, 123456789, time.UTC)

func blobOf(text string) dag.Hash { return dag.Sum([]byte(text)) }

func mustHash(t testing.TB, c *dag.Commit) dag.Hash {
	t.Helper()
	h, err := c.Hash()
	require.NoError(t, err)
	return h
}

func mustEncode(t testing.TB, c *dag.Commit) []byte {
	t.Helper()
	b, err := dag.Encode(c)
	require.NoError(t, err)
	return b
}

// sampleCommits are the commits pinned by the golden files, in an order
// where each parent comes before its children.
func sampleCommits(t testing.TB) []struct {
	name   string
	commit *dag.Commit
} {
	root := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleSystem, Blob: blobOf("You are terse."), Time: fixedTime}
	user := &dag.Commit{Parents: []dag.Hash{mustHash(t, root)}, Kind: dag.KindMessage, Role: dag.RoleUser,
		Blob: blobOf("Name a prime."), Time: fixedTime.Add(time.Second)}
	steering := &dag.Commit{Parents: []dag.Hash{mustHash(t, user)}, Kind: dag.KindSteering, Role: dag.RoleUser,
		Blob: blobOf("Your previous response failed validation: invalid JSON"), Time: fixedTime.Add(2 * time.Second)}
	merge := &dag.Commit{Parents: []dag.Hash{mustHash(t, steering), mustHash(t, user)}, Kind: dag.KindMessage, Role: dag.RoleAssistant,
		Blob: blobOf("7"), Meta: []byte(`{"attempt":2,"model":"gpt-x","usage":{"completion_tokens":1,"prompt_tokens":12}}`),
		Time: fixedTime.Add(3 * time.Second)}
	unicode := &dag.Commit{Parents: []dag.Hash{mustHash(t, merge)}, Kind: dag.KindNote, Role: dag.RoleTool,
		Blob: blobOf("résumé — 日本語 🚀"), Meta: []byte(`{"note":"ünïcødé <ok> & 🚀"}`),
		Time: time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("CET", 3600))}
	return []struct {
		name   string
		commit *dag.Commit
	}{
		{"root", root},
		{"with-parent", user},
		{"steering", steering},
		{"two-parents-with-meta", merge},
		{"unicode", unicode},
	}
}

func TestEncode_DecodeRoundTrip(t *testing.T) {
	for _, s := range sampleCommits(t) {
		t.Run(s.name, func(t *testing.T) {
			raw := mustEncode(t, s.commit)
			got, err := dag.Decode(raw)
			require.NoError(t, err)

			assert.Equal(t, s.commit.Parents, got.Parents)
			assert.Equal(t, s.commit.Kind, got.Kind)
			assert.Equal(t, s.commit.Role, got.Role)
			assert.Equal(t, s.commit.Blob, got.Blob)
			assert.Equal(t, s.commit.Meta, got.Meta)
			assert.True(t, s.commit.Time.Equal(got.Time), "time %v != %v", got.Time, s.commit.Time)
			assert.Equal(t, time.UTC, got.Time.Location(), "Decode returns UTC times")
			assert.NoError(t, got.Verify())
			assert.Equal(t, raw, mustEncode(t, got), "re-encoding a decoded commit gives the same bytes")
		})
	}
}

func TestDecode_DoesNotAliasInput(t *testing.T) {
	c := sampleCommits(t)[3].commit
	raw := mustEncode(t, c)
	got, err := dag.Decode(raw)
	require.NoError(t, err)
	for i := range raw {
		raw[i] = 0xff
	}
	assert.Equal(t, c.Meta, got.Meta)
	assert.Equal(t, c.Parents, got.Parents)
}

func TestDecode_RootCommitHasNilParentsAndMeta(t *testing.T) {
	got, err := dag.Decode(mustEncode(t, sampleCommits(t)[0].commit))
	require.NoError(t, err)
	assert.Nil(t, got.Parents)
	assert.Nil(t, got.Meta)
	assert.True(t, got.Parent().IsZero())
}

// encodeFields builds an encoding by hand, bypassing Encode's checks, so
// tests can feed Decode inputs that Encode would never produce.
func encodeFields(version byte, parents []dag.Hash, kind, role string, blob dag.Hash, meta string, ns int64) []byte {
	b := []byte{version}
	b = binary.AppendUvarint(b, uint64(len(parents)))
	for _, p := range parents {
		b = append(b, p[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(kind)))
	b = append(b, kind...)
	b = binary.AppendUvarint(b, uint64(len(role)))
	b = append(b, role...)
	b = append(b, blob[:]...)
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	return binary.BigEndian.AppendUint64(b, uint64(ns))
}

func TestDecode_HandBuiltEncodingMatchesEncode(t *testing.T) {
	// Guards the helper the rejection tests below rely on.
	c := sampleCommits(t)[3].commit
	want := encodeFields(1, c.Parents, string(c.Kind), string(c.Role), c.Blob, string(c.Meta), c.Time.UnixNano())
	assert.Equal(t, want, mustEncode(t, c))
}

func TestDecode_RejectsNonCanonicalInput(t *testing.T) {
	valid := mustEncode(t, sampleCommits(t)[1].commit)
	twoParents := mustEncode(t, sampleCommits(t)[3].commit)
	p := blobOf("parent")
	blob := blobOf("text")
	ns := fixedTime.UnixNano()

	// nonMinimalParents spells the parent count 1 in two bytes (0x81 0x00).
	nonMinimalParents := append([]byte{1, 0x81, 0x00}, encodeFields(1, []dag.Hash{p}, "message", "user", blob, "", ns)[2:]...)
	// nonMinimalKind spells the kind length 7 in two bytes (0x87 0x00).
	k := encodeFields(1, nil, "message", "user", blob, "", ns)
	nonMinimalKind := append([]byte{1, 0, 0x87, 0x00}, k[3:]...)

	tests := []struct {
		name    string
		in      []byte
		wantMsg string
	}{
		{"empty input", nil, "truncated or malformed version"},
		{"unknown version 0", append([]byte{0}, valid[1:]...), "unknown version 0"},
		{"unknown version 2", append([]byte{2}, valid[1:]...), "unknown version 2"},
		{"version only", []byte{1}, "truncated or malformed varint"},
		{"truncated in second parent", twoParents[:1+1+32+31], "truncated or malformed hash"},
		{"truncated in first parent", valid[:1+1+10], "1 parents cannot fit"},
		{"truncated in kind", valid[:1+1+32+3], "length-prefixed field"},
		{"truncated before time", valid[:len(valid)-8], "truncated or malformed time"},
		{"truncated in time", valid[:len(valid)-1], "truncated or malformed time"},
		{"one trailing byte", append(bytes.Clone(valid), 0), "1 trailing bytes"},
		{"many trailing bytes", append(bytes.Clone(valid), valid...), "trailing bytes"},
		{"huge parent count", append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, valid[2:]...), "parents cannot fit"},
		{"non-minimal parent count varint", nonMinimalParents, "malformed varint"},
		{"non-minimal kind length varint", nonMinimalKind, "malformed varint"},
		{"varint overflow", append([]byte{1}, bytes.Repeat([]byte{0xff}, 11)...), "malformed varint"},
		{"unknown kind", encodeFields(1, nil, "chat", "user", blob, "", ns), `invalid kind "chat"`},
		{"empty kind", encodeFields(1, nil, "", "user", blob, "", ns), `invalid kind ""`},
		{"kind in upper case", encodeFields(1, nil, "MESSAGE", "user", blob, "", ns), "invalid kind"},
		{"unknown role", encodeFields(1, nil, "message", "robot", blob, "", ns), `role "robot"`},
		{"empty role", encodeFields(1, nil, "message", "", blob, "", ns), `role ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dag.Decode(tt.in)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, dag.ErrBadEncoding)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestDecode_AcceptsNonCanonicalMetaButVerifyRejectsIt(t *testing.T) {
	raw := encodeFields(1, nil, "message", "user", blobOf("x"), `{"b":1, "a":2}`, fixedTime.UnixNano())
	c, err := dag.Decode(raw)
	require.NoError(t, err, "Decode leaves the metadata check to Verify")
	err = c.Verify()
	assert.ErrorIs(t, err, dag.ErrBadEncoding)
	_, err = dag.Encode(c)
	assert.Error(t, err, "Encode refuses what Verify rejects")
}

func TestEncode_RejectsInvalidCommits(t *testing.T) {
	base := func() *dag.Commit {
		return &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blobOf("x"), Time: fixedTime}
	}
	tests := []struct {
		name    string
		edit    func(*dag.Commit)
		wantMsg string
		wantIs  error
	}{
		{"invalid kind", func(c *dag.Commit) { c.Kind = "chat" }, `invalid kind "chat"`, nil},
		{"empty kind", func(c *dag.Commit) { c.Kind = "" }, "invalid kind", nil},
		{"invalid role", func(c *dag.Commit) { c.Role = "bot" }, `invalid role "bot"`, nil},
		{"unsorted keys", func(c *dag.Commit) { c.Meta = []byte(`{"b":1,"a":2}`) }, "not canonical", nil},
		{"white space", func(c *dag.Commit) { c.Meta = []byte(`{"a": 1}`) }, "not canonical", nil},
		{"trailing newline", func(c *dag.Commit) { c.Meta = []byte("{\"a\":1}\n") }, "not canonical", nil},
		{"empty object", func(c *dag.Commit) { c.Meta = []byte(`{}`) }, "not canonical", nil},
		{"html escaped", func(c *dag.Commit) { c.Meta = []byte(`{"a":"\u003c"}`) }, "not canonical", nil},
		{"array", func(c *dag.Commit) { c.Meta = []byte(`[1]`) }, "metadata must be a JSON object", dag.ErrInvalidMeta},
		{"not JSON", func(c *dag.Commit) { c.Meta = []byte(`{`) }, "metadata must be a JSON object", dag.ErrInvalidMeta},
		{"zero time", func(c *dag.Commit) { c.Time = time.Time{} }, "outside the range of Unix nanoseconds", nil},
		{"year 2300", func(c *dag.Commit) { c.Time = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, "years 1678 to 2262", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.edit(c)
			_, err := dag.Encode(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			_, err = c.Hash()
			assert.Error(t, err, "Hash fails like Encode")
		})
	}
}

func TestEncode_AcceptsTimesAtTheEdgesOfTheRange(t *testing.T) {
	for _, ns := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
		c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Time: time.Unix(0, ns)}
		got, err := dag.Decode(mustEncode(t, c))
		require.NoError(t, err)
		assert.Equal(t, ns, got.Time.UnixNano())
	}
}

func TestHash_IsReproducibleWithAFixedClock(t *testing.T) {
	build := func(loc *time.Location) *dag.Commit {
		return &dag.Commit{
			Parents: []dag.Hash{blobOf("p1"), blobOf("p2")},
			Kind:    dag.KindMessage, Role: dag.RoleAssistant, Blob: blobOf("answer"),
			Meta: []byte(`{"a":1}`), Time: fixedTime.In(loc),
		}
	}
	h1 := mustHash(t, build(time.UTC))
	h2 := mustHash(t, build(time.UTC))
	h3 := mustHash(t, build(time.FixedZone("X", -7*3600)))
	assert.Equal(t, h1, h2)
	assert.Equal(t, h1, h3, "the time zone is not part of the hash, the instant is")
	assert.Equal(t, dag.Sum(mustEncode(t, build(time.UTC))), h1, "a commit's hash is Sum of its encoding")
}

func TestHash_ChangesWithEveryField(t *testing.T) {
	base := func() *dag.Commit {
		return &dag.Commit{Parents: []dag.Hash{blobOf("p1"), blobOf("p2")}, Kind: dag.KindMessage,
			Role: dag.RoleUser, Blob: blobOf("x"), Meta: []byte(`{"a":1}`), Time: fixedTime}
	}
	edits := map[string]func(*dag.Commit){
		"parent order":   func(c *dag.Commit) { c.Parents[0], c.Parents[1] = c.Parents[1], c.Parents[0] },
		"fewer parents":  func(c *dag.Commit) { c.Parents = c.Parents[:1] },
		"kind":           func(c *dag.Commit) { c.Kind = dag.KindNote },
		"role":           func(c *dag.Commit) { c.Role = dag.RoleSystem },
		"blob":           func(c *dag.Commit) { c.Blob = blobOf("y") },
		"meta":           func(c *dag.Commit) { c.Meta = []byte(`{"a":2}`) },
		"no meta":        func(c *dag.Commit) { c.Meta = nil },
		"one nanosecond": func(c *dag.Commit) { c.Time = c.Time.Add(time.Nanosecond) },
	}
	want := mustHash(t, base())
	for name, edit := range edits {
		c := base()
		edit(c)
		assert.NotEqual(t, want, mustHash(t, c), name)
	}
}

// TestEncode_GoldenFiles pins the encoding and hash of sample commits. If it
// fails, the hash contract changed: every existing commit would get a new
// name. Only refresh with -update when that is intended (and bump the
// encoding version).
func TestEncode_GoldenFiles(t *testing.T) {
	for _, s := range sampleCommits(t) {
		t.Run(s.name, func(t *testing.T) {
			raw := mustEncode(t, s.commit)
			got := fmt.Sprintf("hash %s\nencoding %s\n", dag.Sum(raw), hex.EncodeToString(raw))
			path := filepath.Join("testdata", "commit-"+s.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run 'go test ./dag -update' to create the golden files")
			assert.Equal(t, string(want), got)

			// The golden bytes decode back to the same commit.
			var wantHash, wantHex string
			_, err = fmt.Sscanf(string(want), "hash %s\nencoding %s\n", &wantHash, &wantHex)
			require.NoError(t, err)
			b, err := hex.DecodeString(wantHex)
			require.NoError(t, err)
			c, err := dag.Decode(b)
			require.NoError(t, err)
			assert.Equal(t, wantHash, mustHash(t, c).String())
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range sampleCommits(f) {
		f.Add(mustEncode(f, s.commit))
	}
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 0x80, 0x00})
	f.Add(encodeFields(1, nil, "message", "user", dag.Hash{}, `{"b":1,"a":[1,2]}`, -1))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := dag.Decode(b)
		if err != nil {
			if !errors.Is(err, dag.ErrBadEncoding) {
				t.Fatalf("Decode error %v does not wrap ErrBadEncoding", err)
			}
			return
		}
		enc, err := dag.Encode(c)
		if verr := c.Verify(); verr != nil {
			if err == nil {
				t.Fatalf("Encode accepted a commit that Verify rejects: %v", verr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Encode of a decoded, verified commit: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("Encode(Decode(b)) != b:\n b   %x\n got %x", b, enc)
		}
	})
}

func FuzzDecodeHeader(f *testing.F) {
	for _, s := range sampleCommits(f) {
		f.Add(mustEncode(f, s.commit))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0x80, 0x00})
	f.Add(encodeFields(1, nil, "message", "robot", dag.Hash{}, "", 0))
	f.Add(encodeFields(1, []dag.Hash{{1}, {2}}, "note", "tool", dag.Hash{3}, `{"a":1}`, -1)[:80])
	f.Fuzz(func(t *testing.T, b []byte) {
		hd, herr := dag.DecodeHeader(b)
		c, err := dag.Decode(b)
		if herr != nil {
			if !errors.Is(herr, dag.ErrBadEncoding) {
				t.Fatalf("DecodeHeader error %v does not wrap ErrBadEncoding", herr)
			}
			if err == nil {
				t.Fatalf("DecodeHeader refuses what Decode accepts (%v): %x", herr, b)
			}
			return
		}
		if !hd.Kind.Valid() || !hd.Role.Valid() {
			t.Fatalf("header with kind %q and role %q", hd.Kind, hd.Role)
		}
		if err != nil {
			return // the header checks less than Decode
		}
		want := dag.Header{Parent: c.Parent(), Kind: c.Kind, Role: c.Role, Blob: c.Blob}
		if hd != want {
			t.Fatalf("header %+v, Decode says %+v", hd, want)
		}
	})
}

// DecodeParents gives the parents Decode gives, and refuses what Decode
// refuses before them.
func TestDecodeParents(t *testing.T) {
	var p1, p2 dag.Hash
	p1[0], p2[0] = 1, 2
	for _, parents := range [][]dag.Hash{nil, {p1}, {p1, p2}} {
		raw, err := dag.Encode(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Parents: parents, Time: time.Unix(1, 0)})
		require.NoError(t, err)
		var got []dag.Hash
		require.NoError(t, dag.DecodeParents(raw, func(h dag.Hash) { got = append(got, h) }))
		assert.Equal(t, parents, got)
		if len(parents) > 0 {
			assert.Error(t, dag.DecodeParents(raw[:2+dag.HashSize/2], func(dag.Hash) {}), "cut short")
		}
	}
	assert.ErrorIs(t, dag.DecodeParents([]byte{99, 0}, func(dag.Hash) {}), dag.ErrBadEncoding)
}
