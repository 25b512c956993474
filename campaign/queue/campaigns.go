package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A CampaignInfo describes a campaign on a server, as ListCampaigns finds
// it.
type CampaignInfo struct {
	Name string
	// Identity is the campaign's identity record as its coordinator stored
	// it; nil for a campaign an older conform made.
	Identity []byte
	// Streams are the campaign's streams on the server.
	Streams []string
	// Queued counts the units in the work queue; Ended the units with an
	// outcome recorded; Findings the distinct findings stored; Workers the
	// workers that recorded themselves.
	Queued   uint64
	Ended    int
	Findings uint64
	Workers  int
}

// ListCampaigns lists the campaigns on the server at url (nats://host:port),
// sorted by name: every campaign with at least one of its streams there.
func ListCampaigns(ctx context.Context, url string) ([]CampaignInfo, error) {
	nc, js, err := connectServer(ctx, url, "conform fuzz campaigns")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	byName := map[string]*CampaignInfo{}
	names := js.StreamNames(ctx)
	for stream := range names.Name() {
		name, ok := campaignOfStream(stream)
		if !ok {
			continue
		}
		ci := byName[name]
		if ci == nil {
			ci = &CampaignInfo{Name: name}
			byName[name] = ci
		}
		ci.Streams = append(ci.Streams, stream)
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("campaign/queue: list streams on %s: %w", url, err)
	}
	var out []CampaignInfo
	for _, ci := range byName {
		ep := Endpoint{URL: url, Campaign: ci.Name}
		if err := describe(ctx, js, ep, ci); err != nil {
			return nil, err
		}
		slices.Sort(ci.Streams)
		out = append(out, *ci)
	}
	slices.SortFunc(out, func(a, b CampaignInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// campaignOfStream returns the campaign a stream belongs to, from its name
// CONFORM_FUZZ_<campaign>_<kind>.
func campaignOfStream(stream string) (string, bool) {
	rest, ok := strings.CutPrefix(stream, streamPrefix)
	if !ok {
		return "", false
	}
	for _, kind := range streamKinds {
		if name, ok := strings.CutSuffix(rest, "_"+kind); ok && checkCampaign(name) == nil {
			return name, true
		}
	}
	return "", false
}

// describe fills in what the campaign's streams say of it.
func describe(ctx context.Context, js jetstream.JetStream, ep Endpoint, ci *CampaignInfo) error {
	info := func(name string, opts ...jetstream.StreamInfoOpt) (*jetstream.StreamInfo, error) {
		st, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("campaign/queue: stream %s: %w", name, err)
		}
		return st.Info(ctx, opts...)
	}
	if st, err := js.Stream(ctx, ep.InfoStream()); err == nil {
		if raw, err := st.GetLastMsgForSubject(ctx, ep.identitySubject()); err == nil {
			ci.Identity = raw.Data
		}
		si, err := st.Info(ctx, jetstream.WithSubjectFilter(ep.workersSubject()))
		if err != nil {
			return fmt.Errorf("campaign/queue: stream %s: %w", ep.InfoStream(), err)
		}
		ci.Workers = len(si.State.Subjects)
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("campaign/queue: stream %s: %w", ep.InfoStream(), err)
	}
	si, err := info(ep.UnitsStream())
	if err != nil {
		return err
	}
	if si != nil {
		ci.Queued = si.State.Msgs
	}
	if si, err = info(ep.FindingsStream()); err != nil {
		return err
	}
	if si != nil {
		ci.Findings = si.State.Msgs
	}
	if si, err = info(ep.DoneStream(), jetstream.WithSubjectFilter(ep.subject("done", ">"))); err != nil {
		return err
	}
	if si != nil {
		ci.Ended = len(si.State.Subjects)
	}
	return nil
}

// DeleteCampaign deletes ep's campaign: its streams, with its identity, the
// units still queued, the outcomes and the findings. A coordinator resumes a
// campaign by its name, so a new campaign under a used name must first
// delete the old one. Streams already gone are not an error. Workers bound
// to the campaign wait for the next campaign of its name.
func DeleteCampaign(ctx context.Context, ep Endpoint) error {
	nc, js, err := connect(ctx, ep, "conform fuzz delete "+ep.Campaign)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The units stream first: workers stop finding the campaign before its
	// identity goes.
	for _, name := range []string{ep.UnitsStream(), ep.FindingsStream(), ep.DoneStream(), ep.InfoStream()} {
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("campaign/queue: delete campaign %s: stream %s: %w", ep, name, err)
		}
	}
	return nil
}
