package demo_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/demo"
)

// Play the demo on a fresh repository and look at what it left.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "tract-demo-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	t, err := tract.Init(filepath.Join(dir, "tract.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()

	res, err := demo.Run(context.Background(), t, io.Discard) // or os.Stdout, to read the narration
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("JSON task:", res.JSON.Attempts, "attempts, purified:", res.JSON.Purified)
	fmt.Println("diagnosis:", res.JSON.Diagnoses[0])
	fmt.Println("command task:", res.Command.Attempts, "attempt")
	fmt.Println("summaries:", len(res.Compress.Summaries))
	// Output:
	// JSON task: 2 attempts, purified: true
	// diagnosis: invalid JSON at line 1, column 1: invalid character 'S' looking for beginning of value
	// command task: 1 attempt
	// summaries: 1
}
