"""The streams ops of conform.v1 (ranvier-streams): track, driveQueue,
receiveConnections, publish, readAnnouncements, matchAnnouncements, latency.

Every input runs against fresh state. Connection identifiers in the inputs
only name an arrival path; each distinct value is a connection of our own
(§1, §2.2)."""

import collections
import time

import protobuf
from conformjson import blob, b64, enc64, u64
from framing import FrameReader
from ranvier import SCHEMA
from wire import classify

WINDOW = 64            # the reorder window (§3.4), exactly 64
DEFAULT_DEPTH = 1024   # §5.3 (Rust's choice; a MAY)
LATENCY_WINDOW = 256   # §4.5 / §10 (Rust's choice; a MAY)
U64 = (1 << 64) - 1


# ---------------------------------------------------------------------------
# The sequence tracker (§2.2, §3.2-§3.7).

class Tracker:
    """Gap accounting for one subscription, keyed on (connection, stream_ref)
    and never on the name (§2.2)."""

    def __init__(self):
        self.arrived = self.untracked = 0
        self.missing = self.breaks = self.duplicated = self.reordered = 0
        # (connection, stream_ref) -> [highest sequence, its timestamp,
        # bitmap of the WINDOW positions at and below it already seen]
        self.tracks = {}
        self.last_break = None

    def observe(self, conn, ref, seq, mono_ns):
        self.arrived += 1
        if ref == 0 or seq == 0:
            # Names no stream, or carries no sequence: left alone (§3.6).
            self.untracked += 1
            return
        t = self.tracks.get((conn, ref))
        if t is None:
            # The first sample sets the high-water mark, declares nothing (§3.2).
            self.tracks[(conn, ref)] = [seq, mono_ns, 1]
            return
        highest, highest_ns, seen = t
        if seq > highest:
            step = seq - highest
            if step > 1:
                # A gap: step - 1 missing, one break with its bounds (§3.3).
                self.missing += step - 1
                self.breaks += 1
                self.last_break = {"connection": conn, "stream_ref": ref, "after": highest, "before": seq,
                                   "missing": step - 1, "after_ns": highest_ns, "before_ns": mono_ns}
            seen = ((seen << step) | 1) & U64 if step < WINDOW else 1
            t[0], t[1], t[2] = seq, mono_ns, seen
            return
        distance = highest - seq
        if distance >= WINDOW:
            self.reordered += 1            # no history to judge it by (§3.4)
        elif seen >> distance & 1:
            self.duplicated += 1
        else:
            t[2] = seen | (1 << distance)
            self.reordered += 1
            self.missing = max(0, self.missing - 1)   # credited back; breaks never are

    def counters(self):
        out = {"arrived": str(self.arrived), "untracked": str(self.untracked), "missing": str(self.missing),
               "breaks": str(self.breaks), "duplicated": str(self.duplicated), "reordered": str(self.reordered),
               "streams": str(len(self.tracks))}
        b = self.last_break
        if b is not None:
            out["lastBreak"] = {"connection": str(b["connection"]), "streamRef": b["stream_ref"],
                                "after": str(b["after"]), "before": str(b["before"]), "missing": str(b["missing"]),
                                "afterNs": str(b["after_ns"]), "beforeNs": str(b["before_ns"])}
        return out


def arrival(a):
    """An Arrival from JSON: (connection, stream_ref, sequence, monotonic, source)."""
    return (u64(a, "connection"), int(a.get("streamRef", 0)), u64(a, "sequence"),
            u64(a, "monotonicTimestampNs"), u64(a, "sourceTimestampNs"))


def arrival_json(conn, ref, seq, mono, source):
    return {"connection": str(conn), "streamRef": ref, "sequence": str(seq),
            "monotonicTimestampNs": str(mono), "sourceTimestampNs": str(source)}


def track(op):
    outs = []
    for inp in op.get("inputs", []):
        t = Tracker()
        for a in inp.get("arrivals", []):
            conn, ref, seq, mono, _ = arrival(a)
            t.observe(conn, ref, seq, mono)
        outs.append({"counters": t.counters()})
    return {"outputs": outs}


# ---------------------------------------------------------------------------
# A subscription: the tracker sees each sample on arrival, then the loss
# policy runs (§3.1, §3.5, §5).

POLICIES = {"QUEUE_POLICY_DEFAULT": 0, "QUEUE_POLICY_DROP_OLDEST": 1, "QUEUE_POLICY_DROP_NEWEST": 2,
            "QUEUE_POLICY_BLOCK": 3, "QUEUE_POLICY_HALT": 4}
POLICY_NAMES = {v: k for k, v in POLICIES.items()}
DROP_OLDEST, DROP_NEWEST = 1, 2


class Refused(Exception):
    pass


class Subscription:
    def __init__(self, depth, policy):
        if policy == 0:
            policy = DROP_OLDEST
        if policy not in (DROP_OLDEST, DROP_NEWEST):
            # Refused rather than substituted (§5.2).
            raise Refused("policy %s is not implemented" % POLICY_NAMES.get(policy, policy))
        if depth == 0:
            raise Refused("a queue depth of 0 could never deliver anything")
        self.depth, self.policy = depth, policy
        self.queue = collections.deque()
        self.tracker = Tracker()
        self.delivered = self.dropped = self.peak = 0

    def push(self, a):
        conn, ref, seq, mono, _ = a
        self.tracker.observe(conn, ref, seq, mono)      # before the policy (§3.1)
        if len(self.queue) < self.depth:
            self.queue.append(a)
            self.delivered += 1
        elif self.policy == DROP_OLDEST:
            self.queue.popleft()                         # overwrite the oldest unread
            self.queue.append(a)
            self.delivered += 1
            self.dropped += 1
        else:
            self.dropped += 1                            # discard the arrival
        self.peak = max(self.peak, len(self.queue))      # recorded after the push (§5.4)

    def pop(self, n):
        out = []
        while n > 0 and self.queue:
            out.append(self.queue.popleft())
            n -= 1
        return out


def drive_queue(op):
    outs = []
    for inp in op.get("inputs", []):
        depth = int(inp["depth"]) if "depth" in inp else DEFAULT_DEPTH
        policy = inp.get("policy", 0)
        policy = POLICIES.get(policy, -1) if isinstance(policy, str) else int(policy)
        try:
            sub = Subscription(depth, policy)
        except Refused as e:
            outs.append({"refused": True, "refusal": str(e)})
            continue
        read = []
        for step in inp.get("steps", []):
            if "push" in step:
                sub.push(arrival(step["push"]))
            elif "pop" in step:
                read.extend(sub.pop(int(step["pop"])))
        outs.append({"depth": sub.depth, "policy": POLICY_NAMES[sub.policy],
                     "delivered": str(sub.delivered), "dropped": str(sub.dropped),
                     "readable": str(len(sub.queue)), "peak": str(sub.peak),
                     "read": [arrival_json(*a) for a in read], "gaps": sub.tracker.counters()})
    return {"outputs": outs}


# ---------------------------------------------------------------------------
# Several data-plane connections, each with its own frame reader, and the
# unreadable count kept per connection (wire §4, §6; streams §3.6a).

def receive_connections(op):
    outs = []
    for inp in op.get("inputs", []):
        conns = {}     # insertion-ordered: the order each first appeared
        for seg in inp.get("segments", []):
            cid = u64(seg, "connection")
            c = conns.get(cid)
            if c is None:
                c = conns[cid] = {"reader": FrameReader(), "samples": 0, "announcements": 0,
                                  "unreadable": 0, "closed": False, "frames": []}
            if c["closed"]:
                continue
            frames, failure = c["reader"].feed(blob(seg.get("bytes")))
            for payload in frames:
                kind, frame = classify(payload)
                if kind == "delivered":
                    if frame["__oneof_payload"] == "sample":
                        c["samples"] += 1
                        c["frames"].append("FRAME_KIND_SAMPLE")
                    else:
                        c["announcements"] += 1
                        c["frames"].append("FRAME_KIND_ANNOUNCE")
                else:
                    c["unreadable"] += 1
                    c["frames"].append("FRAME_KIND_UNDECODABLE" if kind == "undecodable" else "FRAME_KIND_NO_VARIANT")
            if failure is not None:
                c["closed"] = True     # misaligned: closed, and not counted unreadable
        outs.append({"connections": [
            {"connection": str(cid), "samples": str(c["samples"]), "announcements": str(c["announcements"]),
             "unreadable": str(c["unreadable"]), "closed": c["closed"], "frames": c["frames"]}
            for cid, c in conns.items()]})
    return {"outputs": outs}


# ---------------------------------------------------------------------------
# A publisher-side runtime (§2, §4.1, §4.2, §5.1).

LOCAL_CONNECTION = 1


def host_clock_ns():
    """The host's system-wide, sleep-inclusive monotonic clock (§4.1)."""
    try:
        return time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    except AttributeError:
        return time.monotonic_ns()


class Stream:
    def __init__(self, ref, connection, domain, adopted):
        self.ref, self.connection, self.domain, self.adopted = ref, connection, domain, adopted
        self.sent = 0
        self.last_sequence = 0
        self.closed = False


class Runtime:
    def __init__(self):
        self.next_ref = 1            # from 1, one counter, never reused (§2.6)
        self.next_connection = LOCAL_CONNECTION + 1
        self.streams = []            # by handle
        self.last_stamp = 0

    def declare(self, name, domain, adopted):
        if not name:
            raise Refused("a stream needs a name (wire §4.4)")
        ref = self.next_ref
        self.next_ref += 1
        if adopted:
            # An adopted stream is a connection of its own (§2.5).
            conn = self.next_connection
            self.next_connection += 1
        else:
            conn = LOCAL_CONNECTION
        s = Stream(ref, conn, domain, adopted)
        self.streams.append(s)
        return s

    def stream(self, handle, adopted):
        if handle >= len(self.streams) or self.streams[handle] is None or self.streams[handle].closed:
            raise Refused("no open stream #%d" % handle)
        s = self.streams[handle]
        if s.adopted != adopted:
            raise Refused("stream #%d is %s" % (handle, "adopted" if s.adopted else "produced"))
        return s

    def publish(self, s, source_ns):
        # The runtime numbers and stamps; the node supplies neither (§2.1, §4.1).
        s.sent += 1
        s.last_sequence = s.sent
        stamp = max(host_clock_ns(), self.last_stamp)
        self.last_stamp = stamp
        if not s.domain:
            source_ns = 0        # no clock domain: no source timestamp carried (§4.2)
        return arrival_json(s.connection, s.ref, s.last_sequence, stamp, source_ns)

    def republish(self, s, recorded):
        # Sequence and both timestamps pass through; only stream_ref is
        # overwritten (§2.5).
        _, _, seq, mono, source = recorded
        s.sent += 1
        s.last_sequence = seq
        return arrival_json(s.connection, s.ref, seq, mono, source)


def publish(op):
    outs = []
    for inp in op.get("inputs", []):
        rt = Runtime()
        events = []
        for step in inp.get("steps", []):
            try:
                if "open" in step or "adopt" in step:
                    adopted = "adopt" in step
                    spec = step["adopt" if adopted else "open"]
                    s = rt.declare(spec.get("name", ""), spec.get("sourceClockDomain", ""), adopted)
                    events.append({"streamRef": s.ref, "connection": str(s.connection)})
                elif "publish" in step:
                    p = step["publish"]
                    s = rt.stream(int(p.get("stream", 0)), False)
                    events.append({"connection": str(s.connection), "sample": rt.publish(s, u64(p, "sourceTimestampNs"))})
                elif "republish" in step:
                    p = step["republish"]
                    s = rt.stream(int(p.get("stream", 0)), True)
                    events.append({"connection": str(s.connection),
                                   "sample": rt.republish(s, arrival(p.get("sample", {})))})
                elif "close" in step:
                    h = int(step["close"])
                    if h < len(rt.streams):
                        rt.streams[h].closed = True
                    events.append({})
                else:
                    events.append({"refused": True, "refusal": "an empty step"})
            except Refused as e:
                if ("open" in step or "adopt" in step):
                    rt.streams.append(None)   # the handle is spent either way
                events.append({"refused": True, "refusal": str(e)})
        outs.append({"events": events, "streams": [
            {"streamRef": s.ref, "sent": str(s.sent), "lastSequence": str(s.last_sequence),
             "carriesSourceTimestamp": bool(s.domain) and not s.adopted}
            for s in rt.streams if s is not None]})
    return {"outputs": outs}


# ---------------------------------------------------------------------------
# Reading announcements as a consumer does (§6.6) and matching them to
# samples (§6.4, §6.5, §6.7).

STREAM_INFO = "ranvier.message.v1.StreamInfo"


def read_announcement(payload):
    """A StreamInfo as read: empty strings are absent, an empty schema is no
    schema, host and boot are a pair, unknown enum values read unspecified.
    Raises DecodeError when the bytes are no StreamInfo."""
    m = protobuf.decode(SCHEMA, STREAM_INFO, payload)
    out = {}
    if m.get("name"):
        out["name"] = m["name"]
    if m.get("node"):
        out["node"] = m["node"]
    if m.get("stream_ref"):
        out["streamRef"] = m["stream_ref"]
    schema = m.get("schema")
    if schema is not None and (schema.get("schema_id") or schema.get("descriptor")):
        s = {}
        if schema.get("schema_id"):
            s["schemaId"] = schema["schema_id"]
        if schema.get("descriptor"):
            s["descriptor"] = enc64(schema["descriptor"])   # carried, never parsed (§6.2)
        out["schema"] = s
    origin = m.get("origin", 0)
    if origin in (1, 2, 3):
        out["origin"] = origin
    if m.get("source_clock_domain"):
        out["sourceClockDomain"] = m["source_clock_domain"]
    if m.get("host_id") and m.get("boot_id"):
        out["clock"] = {"hostId": m["host_id"], "bootId": m["boot_id"]}
    op = m.get("operator")
    if op is not None:
        r = {}
        if op.get("name"):
            r["name"] = op["name"]
        if op.get("asserted_by", 0) in (1, 2, 3):
            r["assertedBy"] = op["asserted_by"]
        if r:
            out["operator"] = r
    auth = m.get("authorisation")
    if auth is not None:
        r = {}
        for src, dst in (("authority", "authority"), ("reference", "reference")):
            if auth.get(src):
                r[dst] = auth[src]
        for src, dst in (("valid_from_unix_ns", "validFromUnixNs"), ("valid_until_unix_ns", "validUntilUnixNs")):
            if auth.get(src):
                r[dst] = str(auth[src])
        if r:
            out["authorisation"] = r
    prod = m.get("production")
    if prod is not None:
        # Present, even with no settings, is a statement about what the
        # producer did; only absence says nobody was asked (§6.1).
        settings = [{"key": s.get("key", ""), "value": s.get("value", "")} for s in prod.get("settings", [])]
        out["production"] = {"settings": settings} if settings else {}
    return out


def read_announcements(op):
    outs = []
    for inp in op.get("inputs", []):
        try:
            outs.append({"announcement": read_announcement(b64(inp, "streamInfo"))})
        except protobuf.DecodeError as e:
            outs.append({"refused": True, "refusal": "not a StreamInfo: %s" % e})
    return {"outputs": outs}


def match_announcements(op):
    outs = []
    for inp in op.get("inputs", []):
        heard = {}       # (connection, stream_ref) -> the first announcement read
        answers = []
        for ev in inp.get("events", []):
            conn = u64(ev, "connection")
            if "announce" in ev:
                try:
                    a = read_announcement(b64(ev, "announce"))
                except protobuf.DecodeError:
                    a = None
                # A stream does not re-announce: a second one for a reference
                # is not an update (§6.4).
                if a is not None and (conn, a.get("streamRef", 0)) not in heard:
                    heard[(conn, a.get("streamRef", 0))] = a
                answers.append({})
            elif "sampleRef" in ev:
                # By reference on its connection, never by name (§6.5, §6.7).
                a = heard.get((conn, int(ev["sampleRef"])))
                answers.append({"matched": a} if a is not None else {"schemaUnknown": True})
            elif "list" in ev:
                name = ev["list"]
                answers.append({"listed": [a for a in heard.values() if a.get("name", "") == name]})
            else:
                answers.append({})
        outs.append({"answers": answers})
    return {"outputs": outs}


# ---------------------------------------------------------------------------
# Delivery latency (§4.5): the consumer's clock at hand-over minus the
# sample's monotonic_timestamp_ns, saturating at zero; p50, p99 and the
# maximum by nearest rank over the last 256 deliveries.

def nearest_rank(sorted_ages, fraction):
    x = (len(sorted_ages) - 1) * fraction
    return sorted_ages[int(x + 0.5)]


def latency(op):
    outs = []
    for inp in op.get("inputs", []):
        window = collections.deque(maxlen=LATENCY_WINDOW)
        for h in inp.get("handovers", []):
            window.append(max(0, u64(h, "nowNs") - u64(h, "monotonicTimestampNs")))
        if not window:
            outs.append({})            # absent, which is not zero
            continue
        ages = sorted(window)
        outs.append({"present": True, "p50Ns": str(nearest_rank(ages, 0.5)),
                     "p99Ns": str(nearest_rank(ages, 0.99)), "maxNs": str(ages[-1])})
    return {"outputs": outs}
