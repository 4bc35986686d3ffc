package llm

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRequestBody encodes the request body of a conversation of
// 10,000 and 100,000 messages of about 300 bytes (as
// BenchmarkChatValidatedCLI's), for each client: by hand (encodeBody, what
// the clients send) and through encoding/json with each message's
// MarshalJSON as it was before (encoding-json), for comparison.
func BenchmarkRequestBody(b *testing.B) {
	openai, anthropic := clients(b)
	for _, n := range []int{10_000, 100_000} {
		msgs := make([]Message, n)
		for i := range msgs {
			msgs[i] = Message{Role: []string{"user", "assistant"}[i%2],
				Content: fmt.Sprintf("message %d %s", i, strings.Repeat("lorem ipsum ", 24))}
		}
		req := Request{Messages: msgs}
		ow := openai[0].wire(req)
		aw, _, err := anthropic[0].wire(req)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name   string
			encode func() ([]byte, error)
		}{
			{"openai/by-hand", func() ([]byte, error) { return encodeBody(&ow) }},
			{"openai/encoding-json", func() ([]byte, error) { return encodeRequest(refRequest(&ow)) }},
			{"anthropic/by-hand", func() ([]byte, error) { return encodeBody(&aw) }},
			{"anthropic/encoding-json", func() ([]byte, error) { return encodeRequest(aw) }},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				var size int
				for b.Loop() {
					body, err := tc.encode()
					if err != nil {
						b.Fatal(err)
					}
					size = len(body)
				}
				b.SetBytes(int64(size))
			})
		}
	}
}
