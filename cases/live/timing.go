package live

import (
	"context"
	"sync"
	"time"

	"github.com/conform-suite/conform/cases"
)

// owed bounds a wait for something the SUT owes: a dial, a Request, a
// frame, an answer, a close. It is half the op timeout (conform run
// --timeout), so that an op that carries such a wait for the SUT (a
// report's timeout_ms, a publish's wait_timeout_ms) answers within its own
// op's timeout, and a slow SUT given a longer --timeout is waited for
// longer. A SUT that does what it owes ends the wait at once.
func owed(t *cases.T) time.Duration { return t.OpTimeout() / 2 }

// launchWait bounds a launched node's first dial: a process start, which a
// loaded machine stretches more than anything else a case waits for.
func launchWait(t *cases.T) time.Duration { return t.OpTimeout() }

// slack is the lateness a case allows a SUT beyond a period the
// specification fixes or the case chose, on top of the harness's own
// measured lateness: a timer in another process fires a little late on any
// machine. It never reaches what a runtime acts on, three silent periods
// (ranvier-wire §6.5), and a SUT that ignores a period misses it by far
// more.
func slack(period time.Duration) time.Duration {
	return 100*time.Millisecond + period/4
}

// contextWithin returns ctx bounded by d.
func contextWithin(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// idle waits d with the harness silent, or until the case ends.
func idle(t *cases.T, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-t.Context().Done():
	}
}

// millis converts d to a conform.v1 millisecond field.
func millis(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

// A lateMeter measures how late the harness itself runs. A goroutine sleeps
// in slices of meterSlice and records how much each wake overslept: the most
// it overslept in an interval is the most the case's own reader, timers and
// writers may have been kept waiting there. A case that judges a period the
// SUT owes excuses the SUT that much, since a machine busy enough to delay
// conform delays the SUT's process alike, and conform cannot tell the two
// apart from arrival times alone.
type lateMeter struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	wakes []meterWake // a ring of the last meterKeep wakes
	next  int
	last  time.Time // the latest wake
}

type meterWake struct {
	at   time.Time
	late time.Duration
}

const (
	// meterSlice is how long the meter sleeps between wakes: fine enough
	// that a stall of tens of milliseconds shows, coarse enough to cost
	// nothing.
	meterSlice = 5 * time.Millisecond
	// meterKeep bounds the wakes kept: about 40 seconds of them, longer
	// than any interval a case judges.
	meterKeep = 8192
)

// startMeter starts a meter; the caller stops it.
func startMeter() *lateMeter {
	m := &lateMeter{stop: make(chan struct{}), done: make(chan struct{}), last: time.Now()}
	go m.run()
	return m
}

func (m *lateMeter) run() {
	defer close(m.done)
	t := time.NewTimer(meterSlice)
	defer t.Stop()
	prev := time.Now()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			now = time.Now() // when this goroutine ran, not when the timer fired
			late := max(now.Sub(prev)-meterSlice, 0)
			m.mu.Lock()
			w := meterWake{at: now, late: late}
			if len(m.wakes) < meterKeep {
				m.wakes = append(m.wakes, w)
			} else {
				m.wakes[m.next] = w
				m.next = (m.next + 1) % meterKeep
			}
			m.last = now
			m.mu.Unlock()
			prev = now
			t.Reset(meterSlice)
		}
	}
}

// close stops the meter and waits for its goroutine.
func (m *lateMeter) close() {
	close(m.stop)
	<-m.done
}

// late returns the most the harness overslept during [from, to]. A stall
// still going on at to shows only at the wake that ends it, so late first
// waits, within ctx, for a wake after to.
func (m *lateMeter) late(ctx context.Context, from, to time.Time) time.Duration {
	for {
		m.mu.Lock()
		caught := m.last.After(to)
		m.mu.Unlock()
		if caught {
			break
		}
		select {
		case <-ctx.Done():
			return m.lateIn(from, time.Now())
		case <-m.done:
			return m.lateIn(from, time.Now())
		case <-time.After(meterSlice):
		}
	}
	return m.lateIn(from, to)
}

// lateIn is the most a wake overslept whose oversleep overlaps [from, to].
func (m *lateMeter) lateIn(from, to time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var worst time.Duration
	for _, w := range m.wakes {
		// The wake at w.at ended a stall that began at w.at - late -
		// meterSlice.
		if w.at.Before(from) || w.at.Add(-w.late-meterSlice).After(to) {
			continue
		}
		worst = max(worst, w.late)
	}
	return worst
}
