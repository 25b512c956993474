package tlv

import "fmt"

// A Router is the stateless forwarder of one node (graph model §The shedding
// rule; the TLV pins (docs/requirements.md) "The forward hop" and §4). It knows only the node's
// links, each named by its mount run; it keeps no per-request state.
type Router struct {
	links [][]byte
}

// NewRouter returns the router of a node whose links have the given mount runs,
// in string form: "/net/<module>/<name>", or "/net/<module>/<name>/<peer>" on a
// bus link.
func NewRouter(mountRuns ...string) (*Router, error) {
	r := &Router{}
	for _, s := range mountRuns {
		p, err := CanonicalPath(s)
		if err != nil {
			return nil, err
		}
		segs, _ := PathSegments(NewRope(p))
		if len(segs) < mountRunMinSegments || len(segs) > mountRunMaxSegments || segs[0] != mountRunHead {
			return nil, fmt.Errorf("tlv: %q is not a mount run (net/<module>/<name>[/<peer>])", s)
		}
		r.links = append(r.links, p)
	}
	return r, nil
}

// Links returns the canonical PATH payload of each link's mount run, in the
// order given to NewRouter. The slices belong to the router.
func (r *Router) Links() [][]byte { return r.links }

// A HopResult says what one hop did with a FWD.
type HopResult struct {
	// Terminus is true when the dst names a local vertex: it begins with no
	// link's mount run, or it is a mount run with nothing after it (the
	// connection's identity vertex). The frame is then the caller's to apply.
	Terminus bool
	// Link is the index of the egress link, when not at the terminus.
	Link int
	// Frame is the FWD to re-emit on that link, at rest: the caller attaches
	// the egress transport's fresh trailer (Egress).
	Frame *Node
}

// Hop performs one forward hop on fwd, a FWD at rest that arrived on link
// inbound (an index into Links). When fwd's dst begins with a link's mount run
// and has at least one segment after it, the hop strips that whole run from dst,
// prepends the inbound link's run to src, and re-emits every other byte as
// received: the OP and payload children are the same views, and every header
// keeps its LL form (a length that outgrows 16 bits sets LL). If two runs match,
// the longer one, the more specific link, wins.
//
// Hop checks the FWD's shape (OP, PATH, PATH, payload) and both routes, never the
// op or the payload, which a stateless hop does not interpret.
func (r *Router) Hop(fwd *Node, inbound int) (HopResult, error) {
	if inbound < 0 || inbound >= len(r.links) {
		return HopResult{}, fmt.Errorf("tlv: inbound link %d of %d", inbound, len(r.links))
	}
	if err := checkFwdShape(fwd); err != nil {
		return HopResult{}, err
	}
	dst, err := expectPath(fwd, 1)
	if err != nil {
		return HopResult{}, err
	}
	if _, err := expectPath(fwd, 2); err != nil {
		return HopResult{}, err
	}
	link := -1
	for i, run := range r.links {
		if len(run) < dst.Len() && hasPrefix(dst, run) && (link < 0 || len(run) > len(r.links[link])) {
			link = i
		}
	}
	if link < 0 {
		return HopResult{Terminus: true}, nil
	}
	op, dstNode, srcNode, payload := fwd.children[0], fwd.children[1], fwd.children[2], fwd.children[3]
	newDst := rerouted(dstNode, dst.Slice(len(r.links[link]), dst.Len()))
	newSrc := rerouted(srcNode, Concat(NewRope(r.links[inbound]), srcNode.payload))
	kids := []*Node{op, newDst, newSrc, payload}
	body := Concat(op.Rope(), newDst.Rope(), newSrc.Rope(), payload.Rope())
	out := &Node{typ: fwd.typ, opt: keepLL(fwd.opt&^(OptTS|OptCRC), body.Len()), payload: body, children: kids}
	return HopResult{Link: link, Frame: out}, nil
}

// rerouted returns route with a new payload. Its header keeps its LL form; a
// trailer of its own is dropped, since its check covered the old route.
func rerouted(route *Node, payload Rope) *Node {
	return &Node{typ: route.typ, opt: keepLL(route.opt&^(OptTS|OptCRC), payload.Len()), payload: payload}
}

// hasPrefix reports whether r begins with the bytes p. On PATH payloads a byte
// prefix is a segment prefix, since every record starts with its length.
func hasPrefix(r Rope, p []byte) bool {
	if r.Len() < len(p) {
		return false
	}
	return r.Slice(0, len(p)).EqualBytes(p)
}
