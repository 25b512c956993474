package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// testIdentity is what the tests' processes say they are: a seed, which
// must match, and a SUT, which the first process to name it pins.
type testIdentity struct {
	Seed int    `json:"seed"`
	SUT  string `json:"sut,omitempty"`
}

func (id testIdentity) json() []byte {
	b, _ := json.Marshal(id)
	return b
}

// admit is the Admit of a process of identity mine.
func (mine testIdentity) admit(stored []byte) ([]byte, error) {
	var st testIdentity
	if err := json.Unmarshal(stored, &st); err != nil {
		return nil, err
	}
	if st.Seed != mine.Seed {
		return nil, fmt.Errorf("seed: %d here, %d in the campaign", mine.Seed, st.Seed)
	}
	switch {
	case mine.SUT == "" || st.SUT == mine.SUT:
		return nil, nil
	case st.SUT == "":
		st.SUT = mine.SUT
		return st.json(), nil
	}
	return nil, fmt.Errorf("SUT: %s here, %s in the campaign", mine.SUT, st.SUT)
}

func coordinatorOptions(id testIdentity) Options {
	return Options{Identity: id.json(), Admit: id.admit}
}

// TestCoordinatorIdentity: a coordinator asked for another campaign under a
// used name is refused, naming what differs, and stores nothing; one asked
// for the same campaign runs it; a coordinator naming the SUT pins it.
func TestCoordinatorIdentity(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "identity")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	first := newCoordinator(t, ctx, ep, coordinatorOptions(testIdentity{Seed: 1}))
	if got := string(first.Identity()); got != `{"seed":1}` {
		t.Errorf("stored identity %s", got)
	}
	_, err := NewCoordinator(ctx, ep, coordinatorOptions(testIdentity{Seed: 2}))
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "seed: 2 here, 1 in the campaign") {
		t.Fatalf("a coordinator of seed 2 on a campaign of seed 1: %v, want a *RefusedError naming the seeds", err)
	}
	same := newCoordinator(t, ctx, ep, coordinatorOptions(testIdentity{Seed: 1, SUT: "A"}))
	if got := string(same.Identity()); got != `{"seed":1,"sut":"A"}` {
		t.Errorf("identity after a coordinator named the SUT: %s", got)
	}
	if _, err := NewCoordinator(ctx, ep, coordinatorOptions(testIdentity{Seed: 1, SUT: "B"})); !errors.As(err, &refused) {
		t.Errorf("a coordinator naming SUT B on a campaign of SUT A: %v, want refused", err)
	}
	// Without Admit a coordinator takes the campaign as it is.
	if c := newCoordinator(t, ctx, ep, Options{}); string(c.Identity()) != `{"seed":1,"sut":"A"}` {
		t.Errorf("identity seen without Admit: %s", c.Identity())
	}
}

// TestWorkerIdentity: the first worker pins the SUT of a campaign that named
// none; a worker on another SUT is refused, its refusal recorded for the
// coordinator; a worker whose run refuses mid-campaign hands its unit back.
func TestWorkerIdentity(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "worker-identity")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := newCoordinator(t, ctx, ep, coordinatorOptions(testIdentity{Seed: 7}))
	units := makeUnits(6)
	var st lastStatus
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx, units, nil, st.set) }()

	// The first worker pins SUT A, takes a unit and refuses the campaign in
	// its middle (its SUT restarted as another version, say).
	var changed sync.Once
	turncoat := testIdentity{Seed: 7, SUT: "A"}
	err := RunWorker(ctx, ep, Options{Worker: "turncoat", Identity: turncoat.json(), Admit: turncoat.admit},
		func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
			err := errors.New("ran a unit after refusing")
			changed.Do(func() { err = Refuse(errors.New("its SUT restarted as another version")) })
			return Result{}, err
		})
	if !errors.As(err, new(*RefusedError)) || !strings.Contains(err.Error(), "another version") {
		t.Fatalf("the turncoat: %v, want a *RefusedError", err)
	}
	list, err := ListCampaigns(ctx, srv.URL())
	if err != nil || len(list) != 1 || string(list[0].Identity) != `{"seed":7,"sut":"A"}` {
		t.Fatalf("the campaign after its first worker: %+v, %v; want SUT A pinned", list, err)
	}

	other := testIdentity{Seed: 7, SUT: "B"}
	err = RunWorker(ctx, ep, Options{Worker: "other", Identity: other.json(), Admit: other.admit},
		func(context.Context, Unit, func(Finding) error) (Result, error) {
			t.Error("a refused worker ran a unit")
			return Result{}, nil
		})
	if !errors.As(err, new(*RefusedError)) || !strings.Contains(err.Error(), "SUT: B here, A in the campaign") {
		t.Fatalf("a worker on SUT B: %v, want refused, naming both SUTs", err)
	}

	var runs runCounter
	good := testIdentity{Seed: 7, SUT: "A"}
	startWorkers(t, ep, Options{Identity: good.json(), Admit: good.admit}, 1, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		return fakeRun(ctx, u, report, "", time.Millisecond)
	})
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	runs.checkOnce(t, units) // the turncoat's unit too, handed back
	byName := map[string]WorkerStatus{}
	for _, w := range st.get().Workers {
		byName[w.Name] = w
	}
	if w := byName["other"]; !strings.Contains(w.Refused, "SUT: B here") || string(w.Identity) != `{"seed":7,"sut":"B"}` {
		t.Errorf("the refused worker's status: %+v", w)
	}
	if w := byName["turncoat"]; !strings.Contains(w.Refused, "another version") {
		t.Errorf("the turncoat's status: %+v", w)
	}
	if w := byName["w0"]; w.Refused != "" || w.Units != len(units) || string(w.Identity) != `{"seed":7,"sut":"A"}` {
		t.Errorf("the good worker's status: %+v", w)
	}
}

// TestLegacyCampaignRefused: a campaign name an older conform used, with
// streams and no identity, is refused rather than adopted with its stored
// outcomes.
func TestLegacyCampaignRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "legacy")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := connect(ctx, ep, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, _, done := StreamConfigs(ep)
	if _, err := js.CreateStream(ctx, done); err != nil {
		t.Fatal(err)
	}
	_, err = NewCoordinator(ctx, ep, coordinatorOptions(testIdentity{Seed: 1}))
	if !errors.As(err, new(*RefusedError)) || !strings.Contains(err.Error(), "older conform") {
		t.Fatalf("NewCoordinator on a legacy campaign: %v, want refused", err)
	}
	if _, err := js.Stream(ctx, ep.InfoStream()); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the refused coordinator created the info stream: %v", err)
	}
	if err := DeleteCampaign(ctx, ep); err != nil {
		t.Fatal(err)
	}
	newCoordinator(t, ctx, ep, coordinatorOptions(testIdentity{Seed: 1}))
}

// TestListCampaigns lists the campaigns on a server with what they hold,
// and deletes one.
func TestListCampaigns(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if list, err := ListCampaigns(ctx, srv.URL()); err != nil || len(list) != 0 {
		t.Fatalf("an empty server: %v, %v", list, err)
	}
	a, b := endpoint(t, srv, "a_UNITS"), endpoint(t, srv, "b")
	ca := newCoordinator(t, ctx, a, coordinatorOptions(testIdentity{Seed: 1}))
	newCoordinator(t, ctx, b, coordinatorOptions(testIdentity{Seed: 2}))
	startWorkers(t, a, Options{}, 1, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		return fakeRun(ctx, u, report, "", time.Millisecond)
	})
	units := makeUnits(4)
	if err := ca.Run(ctx, units, nil, nil); err != nil {
		t.Fatal(err)
	}
	// A worker reports a unit done before its ack of the unit reaches the
	// broker (a worker that dies between the two leaves the unit queued,
	// never lost), so the last unit may still be queued for a moment after
	// Run returns: wait for the queue to drain.
	var list []CampaignInfo
	for {
		var err error
		list, err = ListCampaigns(ctx, srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 || list[0].Queued == 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(list) != 2 || list[0].Name != "a_UNITS" || list[1].Name != "b" {
		t.Fatalf("campaigns %+v, want a_UNITS and b", list)
	}
	la := list[0]
	if string(la.Identity) != `{"seed":1}` || la.Ended != 4 || la.Queued != 0 ||
		la.Findings != uint64(len(wantSignatures(units))) || la.Workers != 1 || len(la.Streams) != 4 {
		t.Errorf("campaign a_UNITS: %+v", la)
	}
	if lb := list[1]; string(lb.Identity) != `{"seed":2}` || lb.Ended != 0 || lb.Findings != 0 {
		t.Errorf("campaign b: %+v", lb)
	}
	if err := DeleteCampaign(ctx, b); err != nil {
		t.Fatal(err)
	}
	list, err := ListCampaigns(ctx, srv.URL())
	if err != nil || len(list) != 1 || list[0].Name != "a_UNITS" {
		t.Errorf("after deleting b: %+v, %v", list, err)
	}
	if !slices.Contains(list[0].Streams, a.InfoStream()) {
		t.Errorf("streams of a_UNITS: %v", list[0].Streams)
	}
}

// TestUnreachable: a server that does not answer is an *UnreachableError,
// which the command line reports as "could not run".
func TestUnreachable(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	url := srv.URL()
	srv.Shutdown()
	ep, err := ParseEndpoint(url + "/gone")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := NewCoordinator(ctx, ep, Options{}); !errors.As(err, new(*UnreachableError)) {
		t.Errorf("NewCoordinator: %v, want an *UnreachableError", err)
	}
	if err := RunWorker(ctx, ep, Options{}, func(context.Context, Unit, func(Finding) error) (Result, error) {
		return Result{}, nil
	}); !errors.As(err, new(*UnreachableError)) {
		t.Errorf("RunWorker: %v, want an *UnreachableError", err)
	}
	if _, err := ListCampaigns(ctx, url); !errors.As(err, new(*UnreachableError)) {
		t.Errorf("ListCampaigns: %v, want an *UnreachableError", err)
	}
}
