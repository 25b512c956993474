"""The wire ops of conform.v1 (ranvier-wire): readFrames, writeFrames,
receive, decode, encode."""

import protobuf
from conformjson import blob, data, b64, enc64
from framing import FrameReader, PayloadTooLarge, send_all, write_frame
from ranvier import SCHEMA

FRAME = "ranvier.message.v1.Frame"


def read_frames(op):
    """Each input's chunks, in order, to a fresh frame reader (§1.3)."""
    return {"outputs": [read_one(inp) for inp in op.get("inputs", [])]}


def read_one(inp):
    reader = FrameReader()
    yields = []
    failure = None
    for chunk in inp.get("chunks", []):
        frames, failure = reader.feed(blob(chunk))
        yields.append({"frames": [data(f) for f in frames]} if frames else {})
    out = {"yields": yields}
    if failure is not None:
        out["end"] = "READ_END_TOO_LARGE"
        out["claimed"] = str(failure.claimed)
    elif inp.get("endOfStream"):
        # Bytes left when the stream ends are a truncated frame, never
        # delivered (§1.3).
        out["end"] = "READ_END_TRUNCATED" if reader.buffered else "READ_END_CLOSED"
    else:
        out["end"] = "READ_END_WAITING" if reader.buffered else "READ_END_IDLE"
    if reader.buffered and failure is None:
        out["buffered"] = str(reader.buffered)
    return out


def write_frames(op):
    """Frames each payload (§1.4, §2), through the send helper when the input
    describes a socket that takes partial writes."""
    outs = []
    for inp in op.get("inputs", []):
        payload = blob(inp.get("payload"))
        try:
            frame = write_frame(payload)
        except PayloadTooLarge as e:
            outs.append({"written": {}, "refused": True, "refusedSize": str(e.size)})
            continue
        limits = [int(n) for n in inp.get("partialWrites", [])]
        if not limits:
            outs.append({"written": data(frame)})
            continue
        sink = bytearray()
        calls = [0]

        def send(view):
            n = min(limits[calls[0] % len(limits)], len(view))
            calls[0] += 1
            sink.extend(view[:n])
            return n

        send_all(send, frame)
        outs.append({"written": data(bytes(sink))})
    return {"outputs": outs}


def receive(op):
    """Plays one data-plane connection as a subscriber after its Request was
    sent (§4, §6.2-§6.4, §7; streams §3.6a)."""
    return {"outputs": [receive_one(inp) for inp in op.get("inputs", [])]}


def classify(payload):
    """What a subscriber makes of one frame's payload: ("delivered", frame),
    ("undecodable", None) or ("no_variant", None)."""
    try:
        frame = protobuf.decode(SCHEMA, FRAME, payload)
    except protobuf.DecodeError:
        return "undecodable", None      # skipped; the stream is still aligned (§6.3)
    if "__oneof_payload" not in frame:
        return "no_variant", None       # legal, skipped (§6.4, §7.3)
    return "delivered", frame


def receive_one(inp):
    reader = FrameReader()
    events = []
    unreadable = 0
    closed = False
    index = 0
    for chunk in inp.get("chunks", []):
        frames, failure = reader.feed(blob(chunk))
        for payload in frames:
            kind, frame = classify(payload)
            ev = {"frame": str(index)}
            if kind == "delivered":
                ev["action"] = "RECEIVE_ACTION_DELIVERED"
                ev["frameJson"] = protobuf.to_json(SCHEMA, FRAME, frame)
            else:
                unreadable += 1
                ev["action"] = ("RECEIVE_ACTION_SKIPPED_UNDECODABLE" if kind == "undecodable"
                                else "RECEIVE_ACTION_SKIPPED_NO_VARIANT")
            events.append(ev)
            index += 1
        if failure is not None:
            closed = True     # a framing error: close, never resynchronise (§6.2)
            break
    out = {"events": events}
    if closed:
        out["closed"] = True
    if unreadable:
        out["unreadable"] = str(unreadable)
    return out


def decode(op):
    outs = []
    for inp in op.get("inputs", []):
        typ = inp.get("messageType", "")
        try:
            msg = protobuf.decode(SCHEMA, typ, b64(inp, "payload"))
            outs.append({"json": protobuf.to_json(SCHEMA, typ, msg)})
        except (protobuf.DecodeError, ValueError) as e:
            outs.append({"error": str(e) or "decode failed", "failed": True})
    return {"outputs": outs}


def encode(op):
    outs = []
    for inp in op.get("inputs", []):
        typ = inp.get("messageType", "")
        try:
            msg = protobuf.from_json(SCHEMA, typ, inp.get("json", ""))
            payload = protobuf.encode(SCHEMA, typ, msg)
            outs.append({"payload": enc64(payload)} if payload else {})
        except (protobuf.JSONError, ValueError) as e:
            outs.append({"error": str(e) or "encode failed", "failed": True})
    return {"outputs": outs}
