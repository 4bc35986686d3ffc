package ingest_test

import (
	"fmt"
	"strings"

	"github.com/tractdag/tract/ingest"
)

// ReadMessages reads OpenAI messages, one JSON object a line (or a JSON
// array), as a stream; a message that is more than a role and a text
// keeps the rest as its commit's shape.
func ExampleReadMessages() {
	in := `{"role":"system","content":"Be brief."}
{"role":"user","content":"Hi","name":"ada"}
{"role":"assistant","content":"Hello.","kind":"message","meta":{"source":"chat log"}}
`
	for m, err := range ingest.ReadMessages(strings.NewReader(in)) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		text, shape, _ := m.Stored()
		fmt.Printf("%s %q shape=%s meta=%s\n", m.Role, text, shape, m.Meta)
	}
	// Output:
	// system "Be brief." shape= meta=
	// user "Hi" shape={"name":"ada"} meta=
	// assistant "Hello." shape= meta={"source":"chat log"}
}

// A malformed message ends the stream with an error naming it and its
// line.
func ExampleReadMessages_error() {
	in := "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"robot\",\"content\":\"beep\"}\n"
	for _, err := range ingest.ReadMessages(strings.NewReader(in)) {
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// message 2 (line 2): invalid role "robot": use one of system, user, assistant, tool
}
