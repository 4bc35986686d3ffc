package tract_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
)

// Meeting is the answer ChatAs asks for: its JSON Schema is inferred
// from the struct, and Validate adds a check the schema cannot express.
type Meeting struct {
	Title string `json:"title"`
	Start int    `json:"start"` // hour of the day
	End   int    `json:"end"`
}

func (m Meeting) Validate() error {
	if m.End <= m.Start {
		return errors.New("end is not after start")
	}
	return nil
}

// ChatAs returns the answer as a Meeting. The test server's model first
// leaves out the end, then ends before it starts; each time the steering
// names what is wrong, and the third answer is accepted and decoded.
func ExampleChatAs() {
	srv := llmtest.New()
	defer srv.Close()
	srv.Reply(
		llmtest.Answer(`{"title": "Standup", "start": 9}`),
		llmtest.Answer(`{"title": "Standup", "start": 9, "end": 8}`),
		llmtest.Answer(`{"title": "Standup", "start": 9, "end": 10}`),
	)
	client, _ := llm.NewOpenAI(llm.WithBaseURL(srv.URL()), llm.WithModel("test-model"))
	t, done := exampleRepo(tract.WithClient(client))
	defer done()

	m, res, err := tract.ChatAs[Meeting](context.Background(), t, "Standup tomorrow from 9 to 10.")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", m)
	for _, d := range res.Diagnoses {
		fmt.Println("steered:", d)
	}
	fmt.Println("schema sent:", srv.Requests()[0].SchemaName, "strict:", srv.Requests()[0].Strict)
	// Output:
	// {Title:Standup Start:9 End:10}
	// steered: 1 schema violation: at root: missing property 'end'
	// steered: Validate: end is not after start
	// schema sent: Meeting strict: true
}
