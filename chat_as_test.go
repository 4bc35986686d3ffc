package tract_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/typed"
)

// contact is a typed answer whose fields are all required, so its
// inferred schema is strict.
type contact struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Age   int    `json:"age"`
}

// span is a typed answer with checks of its own.
type span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

func (s span) Validate() error {
	if s.End < s.Start {
		return errors.New("end is before start")
	}
	return nil
}

// lineItem is a typed answer with a pointer-receiver Validate, inside a
// slice.
type lineItem struct {
	SKU   string  `json:"sku"`
	Price float64 `json:"price"`
}

func (l *lineItem) Validate() error {
	if l.Price < 0 {
		return errors.New("price is negative")
	}
	return nil
}

// steeringOf returns the steering message the request after a rejected
// answer carried: the last message sent.
func steeringOf(t *testing.T, srv *llmtest.Server, request int) string {
	t.Helper()
	reqs := srv.Requests()
	require.Greater(t, len(reqs), request)
	msgs := reqs[request].Messages
	require.NotEmpty(t, msgs)
	last := msgs[len(msgs)-1]
	require.Equal(t, "user", last.Role)
	return last.Content
}

// The first answer misses a required field: the second request's
// steering names it, and the result is the decoded struct; purify leaves
// the second answer, as the model wrote it, on the branch.
func TestChatAs_MissingFieldSteered(t *testing.T) {
	tr, srv := newChatServerTract(t)
	second := `{"name": "Ada", "email": "ada@example.com", "age": 36}`
	srv.Reply(llmtest.Answer(`{"name": "Ada", "age": 36}`), llmtest.Answer(second))

	got, res, err := tract.ChatAs[contact](context.Background(), tr, "Who wrote the first program?")
	require.NoError(t, err)
	assert.Equal(t, contact{Name: "Ada", Email: "ada@example.com", Age: 36}, got)
	require.NotNil(t, res)
	assert.Equal(t, 2, res.Attempts)
	assert.True(t, res.Purified)
	assert.Equal(t, []string{"1 schema violation: at root: missing property 'email'"}, res.Diagnoses)
	assert.Contains(t, steeringOf(t, srv, 1), "missing property 'email'")

	log := chatLog(t, tr)
	assert.Equal(t, []string{"user message", "assistant message"}, chatShape(log))
	assert.Equal(t, second, log[0].Text, "the branch keeps the answer as the model wrote it")
}

// Each way an answer can fail gives the model a diagnosis that names
// where and what was expected.
func TestChatAs_Diagnoses(t *testing.T) {
	tests := []struct {
		name, bad, good string
		run             func(context.Context, *tract.Tract) (any, *tract.ChatResult, error)
		want            any
		steering        string
	}{
		{
			name: "wrong type", bad: `{"name": "Ada", "email": "a@b", "age": "36"}`, good: `{"name": "Ada", "email": "a@b", "age": 36}`,
			run:      chatAs[contact],
			want:     contact{Name: "Ada", Email: "a@b", Age: 36},
			steering: "1 schema violation: at '/age': got string, want integer",
		},
		{
			name: "unknown field", bad: `{"name": "Ada", "email": "a@b", "age": 36, "born": 1815}`, good: `{"name": "Ada", "email": "a@b", "age": 36}`,
			run:      chatAs[contact],
			want:     contact{Name: "Ada", Email: "a@b", Age: 36},
			steering: "1 schema violation: at root: additional properties 'born' not allowed",
		},
		{
			name: "not JSON", bad: `Sure! {"start": 1}`, good: `{"start": 1, "end": 2}`,
			run:      chatAs[span],
			want:     span{Start: 1, End: 2},
			steering: "invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value",
		},
		{
			name: "Validate", bad: `{"start": 5, "end": 2}`, good: `{"start": 2, "end": 5}`,
			run:      chatAs[span],
			want:     span{Start: 2, End: 5},
			steering: "Validate: end is before start",
		},
		{
			name: "Validate on the pointer", bad: `{"sku": "x", "price": -1}`, good: `{"sku": "x", "price": 1.5}`,
			run:      chatAs[lineItem],
			want:     lineItem{SKU: "x", Price: 1.5},
			steering: "Validate: price is negative",
		},
		{
			name: "a slice", bad: `[{"sku": "x", "price": 1}, {"sku": "y", "price": "12"}]`, good: `[{"sku": "x", "price": 1}, {"sku": "y", "price": 12}]`,
			run:      chatAs[[]lineItem],
			want:     []lineItem{{SKU: "x", Price: 1}, {SKU: "y", Price: 12}},
			steering: "1 schema violation: at '/1/price': got string, want number",
		},
		{
			name: "a slice is not null", bad: `null`, good: `[]`,
			run:      chatAs[[]lineItem],
			want:     []lineItem{},
			steering: "1 schema violation: at root: got null, want array",
		},
		{
			name: "a map", bad: `{"apples": 3, "pears": 2.5}`, good: `{"apples": 3, "pears": 2}`,
			run:      chatAs[map[string]int],
			want:     map[string]int{"apples": 3, "pears": 2},
			steering: "1 schema violation: at '/pears': got number, want integer",
		},
		{
			name: "a scalar", bad: `"four"`, good: `4`,
			run:      chatAs[int],
			want:     4,
			steering: "1 schema violation: at root: got string, want integer",
		},
		{
			name: "a string is JSON too", bad: `Ada`, good: `"Ada"`,
			run:      chatAs[string],
			want:     "Ada",
			steering: "invalid JSON",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, srv := newChatServerTract(t)
			srv.Reply(llmtest.Answer(tt.bad), llmtest.Answer(tt.good))
			got, res, err := tt.run(context.Background(), tr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, 2, res.Attempts)
			assert.Contains(t, steeringOf(t, srv, 1), tt.steering)
		})
	}
}

// chatAs is ChatAs[T] with its value as an any, for tables of types.
func chatAs[T any](ctx context.Context, tr *tract.Tract) (any, *tract.ChatResult, error) {
	return tract.ChatAs[T](ctx, tr, "Answer as JSON.")
}

// The inferred schema goes out on the OpenAI wire as response_format
// json_schema, strict when every property is required.
func TestChatAs_SchemaSent(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(`{"name": "Ada", "email": "a@b", "age": 36}`))
	_, _, err := tract.ChatAs[contact](context.Background(), tr, "Who?")
	require.NoError(t, err)

	var body struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	require.NoError(t, json.Unmarshal(srv.Requests()[0].Body, &body))
	assert.Equal(t, "json_schema", body.ResponseFormat.Type)
	assert.Equal(t, "contact", body.ResponseFormat.JSONSchema.Name)
	assert.True(t, body.ResponseFormat.JSONSchema.Strict)
	assert.JSONEq(t, `{"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}, "age": {"type": "integer"}},
		"required": ["name", "email", "age"], "additionalProperties": false}`, string(body.ResponseFormat.JSONSchema.Schema))
}

// A struct with an optional field is sent without strict mode, which
// would want every property required.
func TestChatAs_OptionalFieldNotStrict(t *testing.T) {
	type note struct {
		Text string `json:"text"`
		Tag  string `json:"tag,omitempty"`
	}
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(`{"text": "hi"}`))
	got, _, err := tract.ChatAs[note](context.Background(), tr, "Note?")
	require.NoError(t, err)
	assert.Equal(t, note{Text: "hi"}, got)
	assert.Equal(t, "note", srv.Requests()[0].SchemaName)
	assert.False(t, srv.Requests()[0].Strict)
}

// On the Anthropic wire the schema is the input schema of a forced tool.
func TestChatAs_AnthropicForcedTool(t *testing.T) {
	srv := llmtest.NewServer(t)
	client, err := llm.NewAnthropic(llm.WithBaseURL(srv.AnthropicURL()), llm.WithAPIKey("test-key"), llm.WithModel("claude-test"), llm.WithSleep(chatNoSleep))
	require.NoError(t, err)
	tr := newChatTract(t, client)
	srv.Reply(llmtest.Answer(`{"start": 3, "end": 1}`), llmtest.Answer(`{"start": 1, "end": 3}`))

	got, res, err := tract.ChatAs[span](context.Background(), tr, "Which span?")
	require.NoError(t, err)
	assert.Equal(t, span{Start: 1, End: 3}, got)
	assert.Equal(t, 2, res.Attempts)
	reqs := srv.Requests()
	assert.Equal(t, "span", reqs[0].SchemaName)
	assert.JSONEq(t, `{"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
		"required": ["start", "end"], "additionalProperties": false}`, string(reqs[0].Schema))
	assert.Contains(t, steeringOf(t, srv, 1), "Validate: end is before start")
}

// A schema given with Structured replaces the inferred one: it is sent,
// and it validates (here stricter than the type); a schema looser than
// the type lets through what decoding then refuses, with the path.
func TestChatAs_SchemaOverride(t *testing.T) {
	t.Run("stricter", func(t *testing.T) {
		doc := `{"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string", "pattern": "^[^@]+@[^@]+$"}, "age": {"type": "integer", "minimum": 0}},
			"required": ["name", "email", "age"], "additionalProperties": false}`
		schema, err := llm.NewSchema("person.json", []byte(doc))
		require.NoError(t, err)
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(`{"name": "Ada", "email": "nope", "age": -1}`), llmtest.Answer(`{"name": "Ada", "email": "a@b", "age": 36}`))

		got, _, err := tract.ChatAs[contact](context.Background(), tr, "Who?", tract.Structured(schema))
		require.NoError(t, err)
		assert.Equal(t, contact{Name: "Ada", Email: "a@b", Age: 36}, got)
		assert.Equal(t, "person", srv.Requests()[0].SchemaName)
		assert.JSONEq(t, doc, string(srv.Requests()[0].Schema))
		assert.Contains(t, steeringOf(t, srv, 1), "2 schema violations: at '/age': minimum: got -1, want 0; at '/email': 'nope' does not match pattern '^[^@]+@[^@]+$'")
	})
	t.Run("looser", func(t *testing.T) {
		schema, err := llm.NewSchema("items.json", []byte(`{"type": "array", "items": {"type": "object"}}`))
		require.NoError(t, err)
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(`[{"sku": "x", "price": 1}, {"sku": "y", "price": "12"}]`), llmtest.Answer(`[{"sku": "x", "price": 1, "note": "kept off"}]`))

		got, res, err := tract.ChatAs[[]lineItem](context.Background(), tr, "Items?", tract.Structured(schema))
		require.NoError(t, err)
		assert.Equal(t, []lineItem{{SKU: "x", Price: 1}}, got, "a property the schema allows and the type lacks is dropped")
		assert.Equal(t, []string{"at '/1/price': got string, want a number"}, res.Diagnoses)
	})
	t.Run("none sent", func(t *testing.T) {
		tr, srv := newChatServerTract(t)
		srv.Reply(llmtest.Answer(`{"start": 1}`), llmtest.Answer(`{"start": 1, "end": 2}`))
		got, _, err := tract.ChatAs[span](context.Background(), tr, "Span?", tract.Structured(nil))
		require.NoError(t, err)
		assert.Equal(t, span{Start: 1, End: 2}, got)
		assert.Empty(t, srv.Requests()[0].SchemaName, "Structured(nil) sends no schema")
		assert.Contains(t, steeringOf(t, srv, 1), "missing property 'end'", "the inferred schema still validates")
	})
}

// With every attempt rejected, ChatAs returns the zero T with the
// turn's result and error, as Chat does.
func TestChatAs_Exhausted(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(`{"name": "Ada"}`), llmtest.Answer(`{"name": "Ada", "age": 36}`))
	got, res, err := tract.ChatAs[contact](context.Background(), tr, "Who?", tract.MaxAttempts(2))
	require.Error(t, err)
	var ex *retry.ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Equal(t, contact{}, got)
	require.NotNil(t, res)
	assert.Equal(t, 2, res.Attempts)
	assert.Len(t, res.Diagnoses, 2)
	last, ok := retry.LastResultOf[string](err)
	assert.True(t, ok)
	assert.Equal(t, `{"name": "Ada", "age": 36}`, last)
}

// The caller's validators judge the answer too, after the type's.
func TestChatAs_WithValidators(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(`{"start": 1, "end": 200}`), llmtest.Answer(`{"start": 1, "end": 2}`))
	got, res, err := tract.ChatAs[span](context.Background(), tr, "Span?", tract.Validate(retry.MaxLen(23)))
	require.NoError(t, err)
	assert.Equal(t, span{Start: 1, End: 2}, got)
	assert.Equal(t, 2, res.Attempts)
	assert.Contains(t, res.Diagnoses[0], "maxlen:23")
}

// A type no schema can be inferred from is refused before anything is
// committed or sent; a schema given with Structured makes it usable.
func TestChatAs_TypeWithoutSchema(t *testing.T) {
	type tree struct {
		Name     string `json:"name"`
		Children []tree `json:"children"`
	}
	tr, srv := newChatServerTract(t)
	_, res, err := tract.ChatAs[tree](context.Background(), tr, "Draw a tree.")
	require.Error(t, err)
	assert.Nil(t, res)
	assert.Contains(t, err.Error(), "chat: answer as tract_test.tree: cannot infer a JSON Schema from tract_test.tree (give one with Structured)")
	assert.Empty(t, srv.Requests())
	assert.Empty(t, chatLog(t, tr))

	schema, err := llm.NewSchema("tree", []byte(`{"$defs": {"tree": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}, "required": ["name"]}}, "$ref": "#/$defs/tree"}`))
	require.NoError(t, err)
	srv.Reply(llmtest.Answer(`{"name": "root", "children": [{"name": "leaf"}]}`))
	got, _, err := tract.ChatAs[tree](context.Background(), tr, "Draw a tree.", tract.Structured(schema))
	require.NoError(t, err)
	assert.Equal(t, tree{Name: "root", Children: []tree{{Name: "leaf"}}}, got)
}

// A schema given that refers outside itself is refused before the call.
func TestChatAs_SchemaGivenRefersOutside(t *testing.T) {
	schema, err := llm.NewSchema("x", []byte(`{"$ref": "other.json"}`))
	require.NoError(t, err)
	tr, srv := newChatServerTract(t)
	_, _, err = tract.ChatAs[span](context.Background(), tr, "Span?", tract.Structured(schema))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refers to other.json, outside itself")
	assert.Empty(t, srv.Requests())
}

// ChatAs runs on a view's branch; typed.For gives Generate the same
// schema, checks and decoding.
func TestChatAs_ViewAndGenerate(t *testing.T) {
	tr, srv := newChatServerTract(t)
	ctx := context.Background()
	_, err := tr.User(ctx, "Setup.")
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "agent", "")
	require.NoError(t, err)
	srv.Reply(llmtest.Answer(`{"start": 1, "end": 2}`))
	got, _, err := tract.ChatAs[span](ctx, tr.OnBranch("agent"), "Span?")
	require.NoError(t, err)
	assert.Equal(t, span{Start: 1, End: 2}, got)
	assert.Equal(t, "span", srv.Requests()[0].SchemaName)

	a, err := typed.For[span]()
	require.NoError(t, err)
	srv.Reply(llmtest.Answer(`{"start": 4, "end": 3}`), llmtest.Answer(`{"start": 3, "end": 4}`))
	res, err := tr.Generate(ctx, a.Options()...)
	require.NoError(t, err)
	got, err = a.Decode(res.Text)
	require.NoError(t, err)
	assert.Equal(t, span{Start: 3, End: 4}, got)
	assert.Equal(t, []string{"Validate: end is before start"}, res.Diagnoses)
	assert.Equal(t, "span", srv.Requests()[2].SchemaName)
}
