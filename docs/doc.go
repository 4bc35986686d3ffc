// Package docs holds tract's user guides, the Markdown pages of this
// directory that explain each topic at length, so that the tract command
// shows a guide as its help topic from the very text of the page: the two
// cannot drift apart. The package contracts beside them (tract.md,
// retry.md, llm.md, …) are documentation for Go users and contributors,
// and are not embedded.
package docs

import (
	"embed"
	"fmt"
	"strings"
)

// pages holds the guides' Markdown, named TOPIC.md.
//
//go:embed commands.md validators.md tasks.md interactive-chat.md tools.md history.md import-export.md providers.md proxy.md api.md mcp-server.md sharing.md go-api.md json.md performance.md reliability.md
var pages embed.FS

// Guide is one user guide.
type Guide struct {
	// Topic names the guide: its file is Topic + ".md".
	Topic string
	// Summary says in a line what the guide covers.
	Summary string
}

// Guides returns the user guides, in the order a reader meets them.
// (exit-codes.md is not one: the tract command generates that page and
// its help topic from one table.)
func Guides() []Guide {
	return []Guide{
		{"commands", "Every command and the conventions they share"},
		{"validators", "Chat and validators: defaults, attempts, a failed turn"},
		{"tasks", "Tasks, failure records, feedback, escalation, stats"},
		{"interactive-chat", "The interactive chat: keys and /commands"},
		{"tools", "Tools: letting the model call your commands"},
		{"history", "Reading history: log, graph, formats, revisions, compress"},
		{"import-export", "Importing OpenAI messages, exporting fine-tuning data"},
		{"providers", "Models and providers: OpenAI-compatible, Anthropic"},
		{"proxy", "The recording proxy: any agent's calls as commits"},
		{"api", "The JSON API under /api/: routes, pages, live events"},
		{"mcp-server", "MCP: agents reading and steering their own history"},
		{"sharing", "Sharing a repository, copying it, PostgreSQL"},
		{"go-api", "The Go API: a guide to the library"},
		{"json", "The JSON output of every command"},
		{"performance", "Performance, measured against git"},
		{"reliability", "What tract guarantees, and how it is tested"},
	}
}

// Markdown returns the Markdown text of the guide named topic.
func Markdown(topic string) (string, error) {
	if strings.ContainsAny(topic, "/\\.") {
		return "", fmt.Errorf("no guide %q", topic)
	}
	data, err := pages.ReadFile(topic + ".md")
	if err != nil {
		return "", fmt.Errorf("no guide %q", topic)
	}
	return string(data), nil
}
