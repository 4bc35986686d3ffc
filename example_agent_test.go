package tract_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// Trip is the typed answer of Example_agent.
type Trip struct {
	City    string  `json:"city"`
	Sky     string  `json:"sky"`
	BudgetE float64 `json:"budget_eur" jsonschema:"the budget in euros"`
}

// Validate is Trip's own check, run after the schema's.
func (t Trip) Validate() error {
	if t.BudgetE <= 0 {
		return errors.New("budget_eur must be positive")
	}
	return nil
}

// A complete agent: two tools, a typed answer. The model (scripted here)
// calls both tools in one answer, then answers with a budget of 0 that
// Trip.Validate rejects; steered with the reason, it answers again, and
// the branch keeps only the accepted attempt: the question, its tool step
// and the answer.
func Example_agent() {
	model := llm.NewScripted(
		llm.Reply{ToolCalls: []llm.ToolCall{
			llm.NewToolCall("c1", "weather", `{"city":"Lisbon"}`),
			llm.NewToolCall("c2", "convert", `{"amount":200,"from":"USD"}`),
		}},
		llm.Reply{Content: `{"city":"Lisbon","sky":"sunny","budget_eur":0}`},
		llm.Reply{ToolCalls: []llm.ToolCall{
			llm.NewToolCall("c3", "weather", `{"city":"Lisbon"}`),
			llm.NewToolCall("c4", "convert", `{"amount":200,"from":"USD"}`),
		}},
		llm.Reply{Content: `{"city":"Lisbon","sky":"sunny","budget_eur":184}`},
	)
	t, done := exampleRepo(tract.WithClient(model))
	defer done()
	ctx := context.Background()

	type place struct {
		City string `json:"city"`
	}
	weather := tract.Tool("weather", "Today's sky in a city.", func(_ context.Context, p place) (string, error) {
		return "sunny", nil
	})
	type money struct {
		Amount float64 `json:"amount"`
		From   string  `json:"from" jsonschema:"an ISO 4217 currency code"`
	}
	convert := tract.Tool("convert", "Converts an amount to euros.", func(_ context.Context, m money) (float64, error) {
		if m.From != "USD" {
			return 0, fmt.Errorf("no rate for %s", m.From)
		}
		return m.Amount * 0.92, nil
	})

	trip, res, err := tract.ChatAs[Trip](ctx, t, "Plan a day in Lisbon on 200 USD.", tract.Tools(weather, convert))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v after %d attempts\n", trip, res.Attempts)
	sent := model.Requests()[2].Messages // the third request: after the steering
	fmt.Println("steering:", strings.SplitN(sent[len(sent)-1].Text(), "\n", 2)[0])
	log, _ := t.Log(ctx)
	for i := len(log) - 1; i >= 0; i-- {
		fmt.Println(log[i].Role, strings.ReplaceAll(log[i].Text, "\n", " "))
	}
	// Output:
	// {City:Lisbon Sky:sunny BudgetE:184} after 2 attempts
	// steering: Your previous response failed validation: Validate: budget_eur must be positive
	// user Plan a day in Lisbon on 200 USD.
	// assistant → tool call weather({"city":"Lisbon"}) → tool call convert({"amount":200,"from":"USD"})
	// tool sunny
	// tool 184
	// assistant {"city":"Lisbon","sky":"sunny","budget_eur":184}
}
