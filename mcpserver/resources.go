package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tractdag/tract"
)

// The resources' URIs.
const (
	// BranchesURI lists the branches (branch --json's array).
	BranchesURI = "tract://branches"
	// CommitURITemplate reads one commit (show --json's record): a hash,
	// abbreviated or not, or any revision, percent-encoded where a URI
	// needs it (HEAD%5E for HEAD^).
	CommitURITemplate = "tract://commit/{rev}"
	commitURIPrefix   = "tract://commit/"
	// BranchURITemplate reads a branch's history, newest first (log
	// --json's object, at most DefaultLimit commits): a name, slashes
	// and all (tract://branch/feature/x).
	BranchURITemplate = "tract://branch/{+name}"
	branchURIPrefix   = "tract://branch/"
)

const jsonMIME = "application/json"

func addResources(s *mcp.Server, r *repo) {
	s.AddResource(&mcp.Resource{
		URI: BranchesURI, Name: "branches", Title: "Branches", MIMEType: jsonMIME,
		Description: "Every branch by name, with its tip (hash) and whether HEAD is on it (current).",
	}, r.readBranches)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: CommitURITemplate, Name: "commit", Title: "A commit", MIMEType: jsonMIME,
		Description: "One commit by its hash (4 or more hex digits) or any revision (main, HEAD~2): its text, kind, role, " +
			"parents, refs and metadata, as the show tool returns it.",
	}, r.readCommit)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: BranchURITemplate, Name: "branch", Title: "A branch's history", MIMEType: jsonMIME,
		Description: "A branch's first-parent history, newest first, as the log tool returns it (its newest 50 commits; " +
			"truncated says when there are more).",
	}, r.readBranch)
}

func (r *repo) readBranches(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	bs, err := r.branches(ctx, nil, struct{}{})
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, bs.Branches)
}

func (r *repo) readCommit(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rev, err := url.PathUnescape(strings.TrimPrefix(uri, commitURIPrefix))
	if err != nil || rev == "" || !strings.HasPrefix(uri, commitURIPrefix) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	c, err := r.t.Show(ctx, rev)
	switch {
	case errors.Is(err, tract.ErrUnknownRevision), errors.Is(err, tract.ErrBadRevision):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		return nil, explain(err)
	}
	return jsonContents(uri, c)
}

func (r *repo) readBranch(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, err := url.PathUnescape(strings.TrimPrefix(uri, branchURIPrefix))
	if err != nil || name == "" || !strings.HasPrefix(uri, branchURIPrefix) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if _, err := r.t.Resolve(ctx, "refs/heads/"+name); err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	l, err := r.log(ctx, nil, LogInput{Rev: "refs/heads/" + name})
	if err != nil {
		return nil, explain(err)
	}
	return jsonContents(uri, l)
}

// jsonContents is the result of reading uri: v as JSON.
func jsonContents(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: jsonMIME, Text: string(b)}}}, nil
}
