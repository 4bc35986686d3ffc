package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The panics bbolt raises on a damaged file are said in tract's words.
func TestRephraseAssertion(t *testing.T) {
	for msg, want := range map[string]string{
		"assertion failed: Page expected to be: 45, but self identifies as 0": "page 45 holds the header of page 0",
		"assertion failed: page 0: has unexpected type/flags: 0":              "page 0 is not the kind of page expected there (flags 0)",
		"invalid page type: 12: 10":                                           "page 12 is not the kind of page expected there (flags 10)",
		"invalid freelist page: 0, page type is unknown<00>":                  "the free list is damaged: its page's header is not a free-list page's (it names page 0, a page of no known kind)",
		"invalid freelist page: 5, page type is leaf":                         "the free list is damaged: its page's header is not a free-list page's (it names page 5, a leaf page)",
		"pgid (90) above high water mark (70)":                                "a page points to page 90, past the file's 70 pages",
		"pgId (90) above high water mark (70)":                                "a page points to page 90, past the file's 70 pages",
		"root bucket pgid (90) above high water mark (70)":                    "the root bucket points to page 90, past the file's 70 pages",
		"freelist pgid (90) above high water mark (70)":                       "the free list points to page 90, past the file's 70 pages",
		"assertion failed: something new":                                     "something new",
	} {
		assert.Equal(t, want, rephraseAssertion(msg), msg)
	}
}
