// Package catalog assembles every suite's cases into the one catalogue that
// conform run, list and explain use, and keeps the list of retired IDs.
package catalog

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/doppler"
	graphcases "github.com/conform-suite/conform/cases/graph"
	"github.com/conform-suite/conform/cases/live"
	"github.com/conform-suite/conform/cases/streams"
	tlvcases "github.com/conform-suite/conform/cases/tlv"
	"github.com/conform-suite/conform/cases/wire"
	"github.com/conform-suite/conform/corpus"
)

// Catalogue is every case conform has, with the vectors they use.
type Catalogue struct {
	Cases []cases.Case
	// Corpus names each vector set and its digest, for the record.
	Corpus string
	// Vectors describes every vector of every suite, by ID.
	Vectors map[string]Vector
}

// Vector is what explain prints about a vector of any suite.
type Vector struct {
	ID, Spec, Title string
	// Input is the vector's input in hex.
	Input string
}

// Load builds the catalogue. An error means conform itself is broken (a
// malformed vector, a duplicated ID); the catalogue tests catch it first.
func Load() (*Catalogue, error) {
	c := &Catalogue{Vectors: map[string]Vector{}}
	var digests []string

	ws, err := corpus.Wire()
	if err != nil {
		return nil, err
	}
	c.Cases = append(c.Cases, wire.Catalogue(ws)...)
	digests = append(digests, ws.Version()+" sha256:"+ws.Digest())
	for _, v := range ws.All() {
		c.Vectors[v.ID] = Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Input: corpus.FormatHex(v.Input)}
	}

	ss, err := corpus.Streams()
	if err != nil {
		return nil, err
	}
	c.Cases = append(c.Cases, streams.Catalogue(ss)...)
	digests = append(digests, ss.Version()+" sha256:"+ss.Digest())
	for _, v := range ss.All() {
		c.Vectors[v.ID] = Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Input: streamsInput(v)}
	}

	ds, err := corpus.Doppler()
	if err != nil {
		return nil, err
	}
	c.Cases = append(c.Cases, doppler.Catalogue(ds)...)
	digests = append(digests, ds.Version()+" sha256:"+ds.Digest())
	for _, v := range ds.All() {
		in := corpus.FormatHex(v.Message)
		for i, m := range v.Messages {
			if i > 0 || in != "" {
				in += " | "
			}
			in += corpus.FormatHex(m)
		}
		c.Vectors[v.ID] = Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Input: in}
	}

	ts, err := corpus.TLV()
	if err != nil {
		return nil, err
	}
	c.Cases = append(c.Cases, tlvcases.Catalogue(ts)...)
	digests = append(digests, ts.Version()+" sha256:"+ts.Digest())
	for _, v := range ts.All() {
		in := corpus.FormatHex(v.Input)
		if v.Kind == corpus.TLVPath {
			in = fmt.Sprintf("%q", v.PathBytes())
		}
		c.Vectors[v.ID] = Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Input: in}
	}

	gs, err := corpus.Graph()
	if err != nil {
		return nil, err
	}
	c.Cases = append(c.Cases, graphcases.Catalogue(gs)...)
	digests = append(digests, gs.Version()+" sha256:"+gs.Digest())
	for _, v := range gs.All() {
		c.Vectors[v.ID] = Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Input: graphInput(v)}
	}

	c.Cases = append(c.Cases, live.Catalogue()...)

	if err := cases.Check(c.Cases); err != nil {
		return nil, err
	}
	c.Cases = cases.Sorted(c.Cases)
	c.Corpus = strings.Join(digests, ", ")
	return c, nil
}

// streamsInput describes a streams vector's input for explain: the bytes of
// its connections, or its arrivals or queue script in short.
func streamsInput(v *corpus.StreamsVector) string {
	var parts []string
	for _, seg := range v.Segments {
		parts = append(parts, fmt.Sprintf("connection %d: %s", seg.Conn, corpus.FormatHex(seg.Bytes)))
	}
	for _, a := range v.AllArrivals() {
		parts = append(parts, fmt.Sprintf("%d/%d/%d@%d", a.Conn, a.Ref, a.Seq, a.Ns))
	}
	if q := v.Queue; q != nil {
		parts = append(parts, fmt.Sprintf("depth %d, %s", q.Depth, q.Policy))
		for _, st := range q.Steps {
			if len(st.Push) > 0 {
				parts = append(parts, fmt.Sprintf("push %v", st.Push))
			}
			if st.Pop > 0 {
				parts = append(parts, fmt.Sprintf("pop %d", st.Pop))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// graphInput describes a graph vector's script for explain: one operation
// per step, its TLV in hex.
func graphInput(v *corpus.GraphVector) string {
	var parts []string
	for _, st := range v.Steps {
		p := st.Op
		if st.Caller != "" {
			p += " as " + st.Caller
		}
		if st.Path != "" {
			p += " " + st.Path
		}
		if st.Target != "" {
			p += " -> " + st.Target
		}
		if st.Mode != "" {
			p += " " + st.Mode
		}
		if len(st.Value) > 0 {
			p += " = " + corpus.FormatHex(st.Value)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// Lookup returns the case with the given ID.
func (c *Catalogue) Lookup(id string) (cases.Case, bool) {
	for _, k := range c.Cases {
		if k.ID == id {
			return k, true
		}
	}
	return cases.Case{}, false
}

// Retired lists case IDs that existed in a release and were withdrawn, with
// the reason. A retired ID is never reused.
var Retired = map[string]string{}
