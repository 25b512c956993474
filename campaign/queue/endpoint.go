package queue

import (
	"fmt"
	"net/url"
	"strings"
)

// maxCampaignLen bounds a campaign name. The name is a part of three stream
// names and of every subject, so it is kept well inside the limits JetStream
// puts on both.
const maxCampaignLen = 64

// Endpoint names a campaign on a NATS server: URL is the server the clients
// dial (nats://host:port, without the campaign) and Campaign the campaign's
// name, which the streams and subjects of the campaign are named after.
type Endpoint struct {
	URL      string
	Campaign string
}

// ParseEndpoint parses a queue endpoint of the form
// nats://host[:port]/<campaign> (or tls://…). The campaign is one path
// segment of letters, digits, '-' and '_', at most 64 bytes: it becomes a
// subject token and part of a stream name, where '.', '*', '>', '/' and
// white space would change what the name means. User information in the
// URL is kept for the client to log in with; a query or fragment is refused
// rather than silently dropped.
func ParseEndpoint(s string) (Endpoint, error) {
	ep, err := ParseServer(s)
	if err == nil && ep.Campaign == "" {
		err = fmt.Errorf("campaign/queue: endpoint %q: no campaign name after the host (want nats://host:port/<campaign>)", s)
	}
	if err != nil {
		return Endpoint{}, err
	}
	return ep, nil
}

// ParseServer parses a server, nats://host[:port] (or tls://…), optionally
// followed by /<campaign> as ParseEndpoint reads it. The returned
// endpoint's Campaign is empty when s names none.
func ParseServer(s string) (Endpoint, error) {
	fail := func(format string, args ...any) (Endpoint, error) {
		return Endpoint{}, fmt.Errorf("campaign/queue: endpoint %q: %s (want nats://host:port/<campaign>)",
			s, fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fail("%v", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "nats" && scheme != "tls" {
		return fail("scheme %q is not nats or tls", u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return fail("no host")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fail("a query or fragment has no meaning here")
	}
	server := url.URL{Scheme: scheme, User: u.User, Host: u.Host}
	campaign := strings.TrimPrefix(u.Path, "/")
	if campaign != "" {
		if err := checkCampaign(campaign); err != nil {
			return fail("%v", err)
		}
	}
	return Endpoint{URL: server.String(), Campaign: campaign}, nil
}

// checkCampaign reports whether name is safe as a subject token and as part
// of a stream name.
func checkCampaign(name string) error {
	if name == "" {
		return fmt.Errorf("empty campaign name")
	}
	if len(name) > maxCampaignLen {
		return fmt.Errorf("campaign name is %d bytes, more than %d", len(name), maxCampaignLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("campaign name %q has %q at byte %d; only letters, digits, '-' and '_' are allowed", name, c, i)
		}
	}
	return nil
}

// String returns the endpoint in the form ParseEndpoint reads.
func (e Endpoint) String() string { return e.URL + "/" + e.Campaign }

// UnitsStream returns the name of the campaign's work-queue stream,
// CONFORM_FUZZ_<campaign>_UNITS.
func (e Endpoint) UnitsStream() string { return e.streamName("UNITS") }

// FindingsStream returns the name of the campaign's findings stream,
// CONFORM_FUZZ_<campaign>_FINDINGS.
func (e Endpoint) FindingsStream() string { return e.streamName("FINDINGS") }

// DoneStream returns the name of the stream of the campaign's unit
// outcomes, CONFORM_FUZZ_<campaign>_DONE.
func (e Endpoint) DoneStream() string { return e.streamName("DONE") }

// InfoStream returns the name of the stream of the campaign's identity
// and its workers' records, CONFORM_FUZZ_<campaign>_INFO.
func (e Endpoint) InfoStream() string { return e.streamName("INFO") }

// streamPrefix and streamKinds make the names of a campaign's streams:
// CONFORM_FUZZ_<campaign>_<kind>.
const streamPrefix = "CONFORM_FUZZ_"

var streamKinds = []string{"INFO", "UNITS", "FINDINGS", "DONE"}

func (e Endpoint) streamName(kind string) string { return streamPrefix + e.Campaign + "_" + kind }

// identitySubject is the subject of the campaign's identity record.
func (e Endpoint) identitySubject() string { return e.subject("info", "identity") }

// workerSubject is the subject of a worker's record.
func (e Endpoint) workerSubject(name string) string { return e.subject("info", "workers."+token(name)) }

// workersSubject is the wildcard of every worker's record.
func (e Endpoint) workersSubject() string { return e.subject("info", "workers.*") }

// subject returns conform.fuzz.<campaign>.<kind>.<token>; token "*" or ">"
// gives the stream's wildcard.
func (e Endpoint) subject(kind, token string) string {
	return "conform.fuzz." + e.Campaign + "." + kind + "." + token
}

func (e Endpoint) validate() error {
	if e.URL == "" {
		return fmt.Errorf("campaign/queue: endpoint has no server URL; use ParseEndpoint")
	}
	if err := checkCampaign(e.Campaign); err != nil {
		return fmt.Errorf("campaign/queue: endpoint %s: %w", e.String(), err)
	}
	return nil
}
