package api_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/api"
)

// benchRepo is a repository of n messages on main, with 99 branches of
// 10 messages forked along it and a chain of 3 orphans beside every
// 1,000th message (as a purified retry leaves them): the shape
// 'go run ./bench' draws.
func benchRepo(b *testing.B, n int) *tract.Tract {
	b.Helper()
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"))
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	msgs := func(count int, what string) iter.Seq2[tract.ImportMessage, error] {
		return func(yield func(tract.ImportMessage, error) bool) {
			for i := range count {
				role := tract.RoleUser
				if i%2 == 1 {
					role = tract.RoleAssistant
				}
				text := fmt.Sprintf("%s message %d: the quick brown fox jumps over the lazy dog, and then some more words to make it about a line long.", what, i)
				if !yield(tract.ImportMessage{Role: role, Content: text}, nil) {
					return
				}
			}
		}
	}
	_, err = tr.ImportSeq(ctx, msgs(n, "main"))
	require.NoError(b, err)
	for k := 1; k <= 99; k++ {
		name := fmt.Sprintf("b%02d", k)
		_, err := tr.CreateBranch(ctx, name, fmt.Sprintf("HEAD~%d", k*n/100))
		require.NoError(b, err)
		_, err = tr.OnBranch(name).ImportSeq(ctx, msgs(10, name))
		require.NoError(b, err)
	}
	for k := 1; k*1000 < n; k++ {
		side, err := tr.SideChain(ctx, mustResolve(b, tr, fmt.Sprintf("HEAD~%d", k*1000)), "purify: hid 1 failed attempt")
		require.NoError(b, err)
		for i := range 3 {
			_, err := side.Assistant(ctx, fmt.Sprintf("failed attempt %d", i))
			require.NoError(b, err)
		}
		require.NoError(b, side.Close())
	}
	return tr
}

func mustResolve(b *testing.B, tr *tract.Tract, rev string) tract.Hash {
	h, err := tr.Resolve(context.Background(), rev)
	require.NoError(b, err)
	return h
}

// BenchmarkFirstPage times the first page (100 rows) of /api/graph and
// of /api/log?all=1 at 100,000 commits, through HTTP: "cold" is the
// first request of a server (the outline read, the web view's first
// paint), "warm" a request after it (the outline kept), "deep" the last
// page of the graph.
//
//	go test -run '^$' -bench FirstPage -benchtime 10x ./api/
func BenchmarkFirstPage(b *testing.B) {
	tr := benchRepo(b, 100_000)
	get := func(b *testing.B, h http.Handler, path string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		_, _ = io.Copy(io.Discard, rec.Body)
	}
	for _, path := range []string{"/api/graph?limit=100", "/api/log?all=1&limit=100"} {
		b.Run("cold "+path, func(b *testing.B) {
			for b.Loop() {
				tr.DropCaches()
				s := api.New(tr)
				get(b, s, path)
				s.Close()
			}
		})
		b.Run("warm "+path, func(b *testing.B) {
			s := api.New(tr)
			defer s.Close()
			get(b, s, path)
			for b.Loop() {
				get(b, s, path)
			}
		})
	}
	b.Run("deep last page of /api/graph", func(b *testing.B) {
		s := api.New(tr)
		defer s.Close()
		o, err := tr.Outline(context.Background())
		require.NoError(b, err)
		topo := o.Topo()
		path := "/api/graph?limit=100&cursor=" + topo[len(topo)-100].Hash.String()
		get(b, s, path)
		for b.Loop() {
			get(b, s, path)
		}
	})
}
