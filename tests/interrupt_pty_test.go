//go:build linux

package tests

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/store/storetest"
)

// In the REPL, whose terminal is in raw mode, Ctrl-C is a key: the first
// cancels the line, which then records the interrupted turn and waits for
// the file's lock another process holds; a second exits at once with 130,
// and the terminal is back in its normal mode (echo, lines).
func TestInterrupt_SecondCtrlCInTheREPL(t *testing.T) {
	fileOnly(t, "the lock held is the file's")
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithoutVerify())
	srv.Reply(llmtest.Reply{Content: "too late", Delay: 10 * time.Second})
	s := chatEnv(newSandbox(t), srv)
	db := s.initRepo()

	p := s.startPTY("chat", "--lock-timeout", "1m", "--validate", "json")
	p.waitFor("> ")
	p.send("slow question\r")
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
	release := storetest.HoldWrite(t, openAPI(t, db).Store())
	p.send("\x03")
	select {
	case <-p.exited:
		t.Fatalf("the REPL ended at the first Ctrl-C:\n%q", p.output())
	case <-time.After(500 * time.Millisecond):
	}
	p.send("\x03")
	start := time.Now()
	assert.Equal(t, 130, p.exit(), "output:\n%q", p.output())
	assert.Less(t, time.Since(start), 2*time.Second, "the second Ctrl-C exits at once")
	assert.Contains(t, p.finalOutput(), "tract: interrupted again: exiting at once")

	n, err := unix.IoctlGetInt(int(p.master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer slave.Close()
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	require.NoError(t, err)
	assert.NotZero(t, tio.Lflag&unix.ICANON, "the terminal reads lines again")
	assert.NotZero(t, tio.Lflag&unix.ECHO, "the terminal echoes again")
	release()
	s.fsckOK()
}
