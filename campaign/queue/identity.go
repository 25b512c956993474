package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxClaimAttempts bounds how often claim rereads an identity that another
// process changed under it: each change completes the identity (a SUT
// named), so a few rounds settle it.
const maxClaimAttempts = 8

// InfoStreamConfig returns the configuration of the campaign's info stream:
// its identity record and its workers' records, the last of each kept.
func InfoStreamConfig(ep Endpoint) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              ep.InfoStream(),
		Description:       "conform fuzz campaign " + ep.Campaign + ": identity and workers",
		Subjects:          []string{ep.subject("info", ">")},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Replicas:          1,
		MaxMsgsPerSubject: 1,
	}
}

// errNoCampaign is claim's answer to a worker when the campaign has no
// identity record: its coordinator has not created it yet.
var errNoCampaign = errors.New("no campaign of this name yet")

// legacy reports whether the campaign's name is taken by streams without an
// info stream: a campaign an older conform made, whose units and findings
// say nothing of what it ran.
func legacy(ctx context.Context, js jetstream.JetStream, ep Endpoint) (bool, error) {
	for _, name := range []string{ep.UnitsStream(), ep.FindingsStream(), ep.DoneStream()} {
		_, err := js.Stream(ctx, name)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return false, fmt.Errorf("look up stream %s: %w", name, err)
		}
	}
	return false, nil
}

// claim settles the campaign's identity and returns it as stored.
//
// When no identity is stored, a coordinator (create) stores mine, and a
// worker gets errNoCampaign. When one is stored, admit decides: an error
// refuses the campaign (a *RefusedError), an identity replaces the stored
// one. Every write is conditional on the record being what was read, so
// two processes never overwrite each other; the loser reads again.
func claim(ctx context.Context, js jetstream.JetStream, ep Endpoint, info jetstream.Stream, mine []byte,
	admit func([]byte) ([]byte, error), create bool) ([]byte, error) {
	subj := ep.identitySubject()
	for range maxClaimAttempts {
		raw, err := info.GetLastMsgForSubject(ctx, subj)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			if !create {
				return nil, errNoCampaign
			}
			if mine == nil {
				mine = []byte("{}")
			}
			_, err := js.Publish(ctx, subj, mine, jetstream.WithExpectLastSequencePerSubject(0))
			if err == nil {
				return mine, nil
			}
			if !wrongLastSequence(err) {
				return nil, fmt.Errorf("store the identity of %s: %w", ep, err)
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("read the identity of %s: %w", ep, err)
		}
		stored := raw.Data
		if admit == nil {
			return stored, nil
		}
		next, err := admit(stored)
		if err != nil {
			return nil, &RefusedError{Endpoint: ep, Err: err}
		}
		if next == nil || bytes.Equal(next, stored) {
			return stored, nil
		}
		_, err = js.Publish(ctx, subj, next, jetstream.WithExpectLastSequencePerSubject(raw.Sequence))
		if err == nil {
			return next, nil
		}
		if !wrongLastSequence(err) {
			return nil, fmt.Errorf("update the identity of %s: %w", ep, err)
		}
	}
	return nil, fmt.Errorf("the identity of %s changed %d times while it was read", ep, maxClaimAttempts)
}

// wrongLastSequence reports whether err is JetStream refusing a conditional
// publish: the record changed since it was read.
func wrongLastSequence(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) &&
		(api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// publishWorker records a worker's identity and whether it refused the
// campaign, for the coordinator to show.
func publishWorker(ctx context.Context, js jetstream.JetStream, ep Endpoint, name string, identity []byte, refused string) error {
	rec := workerRecord{Worker: name, Refused: refused, At: time.Now().UTC()}
	if json.Valid(identity) {
		rec.Identity = identity
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	m := nats.NewMsg(ep.workerSubject(name))
	m.Header.Set(hdrWorker, name)
	m.Data = data
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	_, err = js.PublishMsg(pctx, m)
	return err
}
