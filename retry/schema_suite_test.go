package retry

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The official JSON Schema Test Suite (github.com/json-schema-org/
// JSON-Schema-Test-Suite, MIT): its draft 2020-12 tests and remotes, copied
// into testdata (see its README.md).
const schemaSuiteDir = "testdata/json-schema-test-suite"

// suiteGroup is one test case of the suite: a schema and instances.
type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// suiteResult counts groups (test cases) and tests (instances); a group
// passes when all its tests do.
type suiteResult struct {
	groups, groupsPassed, tests, testsPassed int
	failures                                 []string // "file | group | test"
	rejected, generic                        int      // instances rejected; of those, explained only in general terms
}

// runSchemaSuite runs the suite's files matching glob through the
// schema validator, as "schema:PATH" builds it, with the suite's remotes
// (http://localhost:1234/...) read from its remotes directory.
func runSchemaSuite(t *testing.T, dir, glob string) suiteResult {
	files, err := filepath.Glob(filepath.Join(dir, glob))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no suite files match %s", glob)
	remotes := filepath.Join(dir, "remotes")
	remote := func(u *url.URL) (string, bool) {
		if u.Scheme != "http" || u.Host != "localhost:1234" {
			return "", false
		}
		return filepath.Join(remotes, filepath.FromSlash(u.Path)), true
	}
	abs, err := filepath.Abs(filepath.Join(t.TempDir(), "schema.json"))
	require.NoError(t, err)

	var r suiteResult
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var groups []suiteGroup
		require.NoError(t, json.Unmarshal(data, &groups), file)
		for _, g := range groups {
			r.groups++
			set, resolved, loadErr := loadSchema(abs, g.Schema, remote)
			v := &schemaValidator{name: "schema:suite", set: set, resolved: resolved}
			passed := 0
			for _, tc := range g.Tests {
				r.tests++
				ok, diagnosis, err := false, "", loadErr
				if loadErr == nil {
					ok, diagnosis, err = v.Validate(t.Context(), string(tc.Data))
				}
				if err == nil && !ok {
					r.rejected++
					require.True(t, strings.HasPrefix(diagnosis, "1 schema violation: ") ||
						strings.Contains(diagnosis, " schema violations: "), "diagnosis %q", diagnosis)
					if isGenericDiagnosis(diagnosis) {
						r.generic++
					}
				}
				if err == nil && ok == tc.Valid {
					passed++
					r.testsPassed++
					continue
				}
				r.failures = append(r.failures, filepath.Base(file)+" | "+g.Description+" | "+tc.Description)
			}
			if passed == len(g.Tests) {
				r.groupsPassed++
			}
		}
	}
	return r
}

// isGenericDiagnosis reports whether every violation of a diagnosis is the
// explainer's fallback, which names no keyword the answer failed.
func isGenericDiagnosis(d string) bool {
	_, list, _ := strings.Cut(d, ": ")
	for part := range strings.SplitSeq(list, "; at ") {
		if !strings.HasSuffix(part, ": does not match the schema") {
			return false
		}
	}
	return true
}

// knownSchemaSuiteFailures are the required draft 2020-12 tests the
// validator fails, by file | group | test. The library compiles no
// meta-schema, so a "$ref" to one (json-schema.org) is a reference to a
// remote schema, which the validator refuses; and a "$schema" that names a
// custom meta-schema (to choose vocabularies) is refused rather than
// validated as draft 2020-12.
var knownSchemaSuiteFailures = []string{
	"defs.json | validate definition against metaschema | valid definition schema",
	"defs.json | validate definition against metaschema | invalid definition schema",
	"ref.json | remote ref, containing refs itself | remote ref valid",
	"ref.json | remote ref, containing refs itself | remote ref invalid",
	"vocabulary.json | schema that uses custom metaschema with with no validation vocabulary | applicator vocabulary still works",
	"vocabulary.json | schema that uses custom metaschema with with no validation vocabulary | no validation: valid number",
	"vocabulary.json | schema that uses custom metaschema with with no validation vocabulary | no validation: invalid number, but it still validates",
	"vocabulary.json | ignore unrecognized optional vocabulary | string value",
	"vocabulary.json | ignore unrecognized optional vocabulary | number value",
}

// The suite's required draft 2020-12 tests (tests/draft2020-12/*.json):
// the validator passes all but the known failures, and explains every
// instance it rejects.
func TestSchemaSuite_Draft2020Required(t *testing.T) {
	dir := requireSchemaSuite(t)
	r := runSchemaSuite(t, dir, filepath.Join("tests", "draft2020-12", "*.json"))
	t.Logf("draft 2020-12 required: groups %d/%d, tests %d/%d; %d instances rejected, %d explained only in general terms",
		r.groupsPassed, r.groups, r.testsPassed, r.tests, r.rejected, r.generic)

	assert.Equal(t, knownSchemaSuiteFailures, r.failures, "the failures changed: update knownSchemaSuiteFailures, the counts and docs/validators.md")
	assert.Equal(t, 1290, r.testsPassed, "tests passed")
	assert.Equal(t, 1299, r.tests, "tests")
	assert.Equal(t, 379, r.groupsPassed, "groups passed")
	assert.Equal(t, 383, r.groups, "groups")
	// The explainer asks the library about a subschema on its own, which
	// starts a new dynamic scope: it cannot locate failures that depend
	// on where a "$dynamicRef" was reached from (dynamicRef.json).
	assert.Equal(t, 9, r.generic, "rejections explained only as 'does not match the schema'")
}

// The suite's optional format tests: "format" is an annotation in draft
// 2020-12, which the validator does not check, so it passes exactly the
// tests of valid strings.
func TestSchemaSuite_Draft2020Format(t *testing.T) {
	dir := requireSchemaSuite(t)
	r := runSchemaSuite(t, dir, filepath.Join("tests", "draft2020-12", "optional", "format", "*.json"))
	t.Logf("draft 2020-12 optional/format: groups %d/%d, tests %d/%d", r.groupsPassed, r.groups, r.testsPassed, r.tests)
	assert.Equal(t, 376, r.testsPassed, "tests passed")
	assert.Equal(t, 764, r.tests, "tests")
	assert.Equal(t, 4, r.groupsPassed, "groups passed")
	assert.Equal(t, 28, r.groups, "groups")
}

// requireSchemaSuite returns the suite's directory.
func requireSchemaSuite(t *testing.T) string {
	t.Helper()
	_, err := os.Stat(filepath.Join(schemaSuiteDir, "tests", "draft2020-12"))
	require.NoError(t, err, "the JSON Schema Test Suite is kept in %s", schemaSuiteDir)
	return schemaSuiteDir
}
