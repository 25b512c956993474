package campaign

import (
	"testing"

	"github.com/conform-suite/conform/proto/conform/v1/meaning"
)

// TestGeneratedInputsDefined: the campaign's generators and mutations send
// only inputs whose answer the documents define (meaning.Defined): no Blob
// fill with an empty pattern, no encode JSON repeating a key, no publish on a
// stream that does not exist, no hop over a link that is no mount run, no
// doppler frame that is not whole elements, and the rest Defined lists.
func TestGeneratedInputsDefined(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	const n = 1000
	for _, tg := range testTargets() {
		e := &Engine{Seed: 11, Seeds: pool}
		bad, first := 0, ""
		for i := uint64(len(pool.For(tg))); i < uint64(len(pool.For(tg)))+n; i++ {
			in := e.Input(tg, i)
			entry := tg.entry(in)
			if entry == nil {
				continue
			}
			if err := meaning.Defined(entry); err != nil {
				if bad == 0 {
					first = err.Error()
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d generated inputs are undefined; the first: %s", tg.Name, bad, n, first)
		}
	}
}
