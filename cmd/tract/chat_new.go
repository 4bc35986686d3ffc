package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tractdag/tract"
)

// newConversationLayout names the branch of 'tract chat --new' after the
// local time it starts: chat-20250102-150405.
const newConversationLayout = "chat-20060102-150405"

// startConversation moves HEAD to a new, unborn branch named after the
// time (with -2, -3… when that name is taken), so that the chat starts a
// conversation with no history, and says so on stderr.
func startConversation(ctx context.Context, f *Factory, t *tract.Tract) error {
	now := time.Now
	if f.Clock != nil {
		now = f.Clock
	}
	base := now().Format(newConversationLayout)
	name := base
	for i := 2; ; i++ {
		_, err := t.SwitchOrphan(ctx, name)
		if err == nil {
			break
		}
		if !errors.Is(err, tract.ErrBranchExists) || i > 100 {
			return err
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	sayNewConversation(f, name)
	return nil
}

// conversationName returns the name of the branch 'tract chat --new'
// starts, named after the local time (with -2, -3… when that name is
// taken): the one-shot chat moves HEAD to it only when it commits the
// message (tract.NewConversation), so that a chat that writes nothing
// leaves HEAD where it was.
func conversationName(ctx context.Context, f *Factory, t *tract.Tract) (string, error) {
	now := time.Now
	if f.Clock != nil {
		now = f.Clock
	}
	branches, err := t.Branches(ctx)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, b := range branches {
		taken[b.Name] = true
	}
	base := now().Format(newConversationLayout)
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name, nil
}

// sayNewConversation says on stderr that HEAD moved to the new
// conversation's branch name.
func sayNewConversation(f *Factory, name string) {
	fmt.Fprintf(f.IO.ErrOut, "New conversation on branch %s (HEAD is on it; 'tract switch NAME' goes back)\n", name)
}

// checkConversationFlags refuses --continue with --new, and --new with
// --branch.
func checkConversationFlags(opts *ChatOptions) error {
	switch {
	case opts.New && opts.Continue:
		return usageErrorf("--continue (-c) continues the current branch and --new (-n) starts a new one: give one of them")
	case opts.New && opts.Branch != "":
		return usageErrorf("--new starts a branch and moves HEAD to it; --branch works on another branch without moving HEAD: give one of them")
	}
	return nil
}
