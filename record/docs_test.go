package record_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/record"
)

// docs/metadata.md's table of keys is record.Keys, row for row: a key
// added, renamed or described anew in code fails here until the page says
// the same.
func TestKeys_DocumentedInDocsMetadata(t *testing.T) {
	page, err := os.ReadFile("../docs/metadata.md")
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (.+?) \\| (.+) \\|$").FindAllStringSubmatch(string(page), -1)

	var documented []record.Key
	for _, r := range rows {
		documented = append(documented, record.Key{Name: r[1], Want: r[2], Doc: r[3]})
	}
	assert.Equal(t, record.Keys(), documented)
}
