package campaign

import (
	"os"
	"testing"

	"github.com/conform-suite/conform/natsserver"
)

// broker is the NATS server of the tests that publish on one, started by
// the first of them and shut down after the last.
var broker = natsserver.NewLazy(natsserver.Options{})

func TestMain(m *testing.M) {
	code := m.Run()
	broker.Shutdown()
	os.Exit(code)
}
