package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/tractdag/tract/internal/jsonerr"
)

// ModelInfo is one model a server offers.
type ModelInfo struct {
	// ID is the model's name, as a Request's Model gives it.
	ID string `json:"id"`
	// Record is the server's whole record of the model, as it sent it
	// (OpenAI: id, object, created, owned_by; Anthropic: id, type,
	// display_name, created_at).
	Record json.RawMessage `json:"-"`
}

// MarshalJSON encodes the server's record, or {"id": ID} without one.
func (m ModelInfo) MarshalJSON() ([]byte, error) {
	if len(m.Record) > 0 {
		return m.Record, nil
	}
	return json.Marshal(struct {
		ID string `json:"id"`
	}{m.ID})
}

// ModelLister is implemented by clients that can list the models of their
// server (GET {base}/models for OpenAI-compatible servers, GET
// {base}/v1/models for Anthropic, every page of it). Errors are those of
// Complete, retried the same way.
type ModelLister interface {
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// modelPageSize is the page size asked of Anthropic's model list (its most).
const modelPageSize = 1000

// maxModelPages bounds the pages read from a server that never says it
// has no more.
const maxModelPages = 100

// ListModels returns the models of the server, in the server's order.
func (c *OpenAI) ListModels(ctx context.Context) ([]ModelInfo, error) {
	page, err := c.settings.listPage(ctx, c.models, func(h http.Header) {
		h.Set("User-Agent", c.userAgent)
		if c.apiKey != "" {
			h.Set("Authorization", "Bearer "+c.apiKey)
		}
	})
	if err != nil {
		return nil, err
	}
	return page.models, nil
}

// ListModels returns the models of the server, newest first as Anthropic
// sends them, following its pages (after_id) to the end.
func (c *Anthropic) ListModels(ctx context.Context) ([]ModelInfo, error) {
	var all []ModelInfo
	after := ""
	for range maxModelPages {
		u, err := url.Parse(c.models)
		if err != nil {
			return nil, c.transportError(err)
		}
		q := u.Query()
		q.Set("limit", fmt.Sprint(modelPageSize))
		if after != "" {
			q.Set("after_id", after)
		}
		u.RawQuery = q.Encode()
		page, err := c.settings.listPage(ctx, u.String(), c.header)
		if err != nil {
			return nil, err
		}
		all = append(all, page.models...)
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			return all, nil
		}
		after = page.LastID
	}
	return all, nil
}

// modelPage is one page of a model list: {"data": [...]}, and for
// Anthropic has_more and last_id.
type modelPage struct {
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
	LastID  string            `json:"last_id"`
	models  []ModelInfo
}

// listPage gets one page of a model list from endpoint, retrying as
// Complete does; header sets the request's headers.
func (c *settings) listPage(ctx context.Context, endpoint string, header func(http.Header)) (*modelPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	return retryCall(ctx, c, "list models", "", func(ctx context.Context) (*modelPage, bool, error) {
		hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		if err != nil {
			return nil, false, c.transportError(err)
		}
		header(hreq.Header)
		hreq.Header.Set("Accept", "application/json")
		hresp, err := c.httpClient.Do(hreq)
		if err != nil {
			return nil, false, c.transportError(err)
		}
		defer hresp.Body.Close()
		hresp.Body = watchBody(ctx, hresp.Body)
		if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
			return nil, false, c.statusError(hresp)
		}
		page, err := c.readModelPage(hresp)
		return page, false, err
	})
}

// readModelPage decodes a model list.
func (c *settings) readModelPage(resp *http.Response) (*modelPage, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, c.transportError(fmt.Errorf("read response body: %w", err))
	}
	status := resp.StatusCode
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(body) > maxBody:
		return nil, c.badResponse(status, fmt.Sprintf("body larger than %d bytes", maxBody), body)
	case len(trimmed) == 0:
		return nil, c.badResponse(status, "empty body", nil)
	case isHTML(resp.Header.Get("Content-Type"), trimmed):
		return nil, c.htmlResponse(status, "got an HTML page instead of a model list", trimmed)
	}
	var page modelPage
	if err := json.Unmarshal(trimmed, &page); err != nil {
		return nil, c.badResponse(status, "invalid JSON: "+jsonerr.Describe(err), trimmed)
	}
	if page.Data == nil {
		return nil, c.badResponse(status, `not a model list (no "data")`, trimmed)
	}
	for _, rec := range page.Data {
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(rec, &m) != nil || m.ID == "" {
			return nil, c.badResponse(status, "a model record without an id", rec)
		}
		page.models = append(page.models, ModelInfo{ID: m.ID, Record: rec})
	}
	return &page, nil
}
