package campaign

import (
	"os"
	"sync"
	"testing"

	"github.com/conform-suite/conform/internal/waittest"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/suites"
)

// broker is the NATS server of the tests that publish on one, started by
// the first of them and shut down after the last.
var broker = natsserver.NewLazy(natsserver.Options{})

func TestMain(m *testing.M) {
	// The live targets' tests wait out a mutant's silence for seconds at a
	// time; they overlap with the tests that compute.
	waittest.Widen()
	code := m.Run()
	broker.Shutdown()
	os.Exit(code)
}

// testRegistry is the registry the tests fuzz: conform's own suites,
// built once.
var testRegistry = sync.OnceValue(suites.Default)

// testTargets are the registry's fuzz targets.
func testTargets() []*Target { return Targets(testRegistry()) }
