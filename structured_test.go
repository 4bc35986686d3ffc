package tract_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

const nameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`

func TestChat_StructuredSchemaSentAndRecorded(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer(`{"name":"Ada"}`))
	schema, err := llm.NewSchema("name.json", []byte(nameSchema))
	require.NoError(t, err)
	v, err := retry.ParseSpecs([]string{"json"})
	require.NoError(t, err)

	res, err := tr.Chat(context.Background(), "Who wrote the first program?", tract.Structured(schema), tract.Validate(v))
	require.NoError(t, err)

	assert.Equal(t, "name", srv.Requests()[0].SchemaName)
	c, err := tr.Show(context.Background(), res.Commit.String())
	require.NoError(t, err)
	rec, ok := c.StructuredOutput()
	require.True(t, ok)
	assert.Equal(t, tract.StructuredRecord{Schema: "name", Outcome: llm.StructuredSent}, rec)
}

// A server that refuses the schema answers the same attempt without it;
// the answer records the refusal, and purify keeps the record on the
// clean copy.
func TestChat_StructuredRefusedIsRecorded(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(
		llmtest.Error(http.StatusBadRequest, "'response_format' of type 'json_schema' is not supported with this model"),
		llmtest.Answer("not json"),
		llmtest.Answer(`{"name":"Ada"}`),
	)
	schema, err := llm.NewSchema("name.json", []byte(nameSchema))
	require.NoError(t, err)
	v, err := retry.ParseSpecs([]string{"json"})
	require.NoError(t, err)

	res, err := tr.Chat(context.Background(), "Who?", tract.Structured(schema), tract.Validate(v))
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts)

	first, err := tr.Show(context.Background(), res.History[0].Commit.String())
	require.NoError(t, err)
	rec, ok := first.StructuredOutput()
	require.True(t, ok)
	assert.Equal(t, llm.StructuredRejected, rec.Outcome)
	assert.Contains(t, rec.Rejection, "response_format")

	clean, err := tr.Show(context.Background(), res.Commit.String())
	require.NoError(t, err)
	rec, ok = clean.StructuredOutput()
	require.True(t, ok)
	assert.Equal(t, llm.StructuredSent, rec.Outcome, "the second attempt's request carried the schema again")
	assert.Len(t, srv.Requests(), 3)
}

func TestChat_NoSchemaNoRecord(t *testing.T) {
	tr, srv := newChatServerTract(t)
	srv.Reply(llmtest.Answer("hi"))
	res, err := tr.Chat(context.Background(), "hello")
	require.NoError(t, err)
	c, err := tr.Show(context.Background(), res.Commit.String())
	require.NoError(t, err)
	_, ok := c.StructuredOutput()
	assert.False(t, ok)
	assert.Empty(t, srv.Requests()[0].SchemaName)
}

func TestMeta_StructuredOutputTypeChecked(t *testing.T) {
	tr := newChatTract(t, nil)
	_, err := tr.Commit(context.Background(), tract.KindMessage, tract.RoleUser, "x",
		tract.WithMetaJSON([]byte(`{"structured_output":"sent"}`)))
	var mt *tract.MetaTypeError
	require.ErrorAs(t, err, &mt)
	assert.Equal(t, tract.MetaStructured, mt.Key)
}
