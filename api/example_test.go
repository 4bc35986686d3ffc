package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/api"
)

// A repository served as JSON: the first page of its log, and the
// cursor of the next.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "tract-api-example")
	defer os.RemoveAll(dir)
	t, _ := tract.Init(filepath.Join(dir, "tract.db"))
	defer t.Close()
	ctx := context.Background()
	for _, text := range []string{"one", "two", "three"} {
		_, _ = t.User(ctx, text)
	}

	s := api.New(t)
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/log?limit=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var page struct {
		Commits []tract.CommitInfo `json:"commits"`
		Next    string             `json:"next"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&page)
	for _, c := range page.Commits {
		fmt.Println(c.Text, c.Refs)
	}
	first, _ := t.Resolve(ctx, "HEAD~2")
	fmt.Println("next page starts at HEAD~2:", page.Next == first.String())
	// Output:
	// three [HEAD -> main]
	// two []
	// next page starts at HEAD~2: true
}
