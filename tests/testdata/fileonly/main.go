// Command fileonly is a Go program that embeds a tract repository in a
// file, as most library users do: drivers_test.go checks with go list that
// it links no database driver, and runs it to see that a database URL,
// whose driver it does not import, gets an error naming the package to
// import.
//
// Usage: fileonly DIR [LOCATION]. It creates a repository in DIR, commits
// a message and prints its hash; then, given LOCATION, opens it and
// prints the error.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tractdag/tract"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fileonly DIR [LOCATION]")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "fileonly:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, loc []string) error {
	t, err := tract.OpenOrInit(filepath.Join(dir, "tract.db"))
	if err != nil {
		return err
	}
	h, err := t.User(ctx, "hello")
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Println(h)
	for _, l := range loc {
		t, err := tract.Open(l)
		if err == nil {
			t.Close()
			return fmt.Errorf("%s: opened", tract.Redact(l))
		}
		fmt.Println(err)
	}
	return nil
}
