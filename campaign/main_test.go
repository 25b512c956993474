package campaign

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
)

// broker is the NATS server of the tests that publish on one, started by
// the first of them and shut down after the last.
var broker = natsserver.NewLazy(natsserver.Options{})

// TestMain lets the test binary serve as an exec: SUT ("reference"), so
// that the exec benchmark measures a real second process without building
// conform first.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "reference" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := sut.Serve(ctx, os.Stdin, os.Stdout, impl.Reference(), sut.Binary)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "reference:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	broker.Shutdown()
	os.Exit(code)
}
