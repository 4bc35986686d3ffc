// Package fuzzcheck holds the checks tract's fuzz targets share.
package fuzzcheck

import (
	"strings"
	"testing"
)

// UserError fails tb unless err, a non-nil error that may reach a user,
// has a message that is not empty and contains no Go runtime text.
func UserError(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		tb.Fatal("want an error, got nil")
	}
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		tb.Fatalf("error %#v has an empty message", err)
	}
	// Fragments of Go's own messages (panics, runtime errors,
	// encoding/json's descriptions of Go types): text not written for the
	// person reading the error.
	runtimeText := [...]string{
		"runtime error",
		"goroutine ",
		"panic:",
		"[recovered]",
		"nil pointer",
		"index out of range",
		"slice bounds out of range",
		"Go value of type",
		"Go struct field",
		"interface {}",
	}
	for _, s := range runtimeText {
		if strings.Contains(msg, s) {
			tb.Fatalf("error message contains Go runtime text %q: %s", s, msg)
		}
	}
}
