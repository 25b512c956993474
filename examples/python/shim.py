#!/usr/bin/env python3
"""conform.v1 over stdio, in the JSON encoding: a Ranvier binding written in
Python from the specification, for the wire and streams profiles.

    conform run --sut 'exec:python3 examples/python/shim.py' --profile wire,streams

Every message is a Ranvier frame (a four-byte big-endian length, then the
JSON). The harness opens with an empty frame; the answer is the Hello. Then
one Request, one Response carrying its id, until stdin ends.
"""

import json
import os
import sys

# The modules beside this file, without leaving __pycache__ in the tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import streams  # noqa: E402
import wire  # noqa: E402
from framing import MAX_PAYLOAD, PREFIX  # noqa: E402

HELLO = {"implementation": "conform-python-example", "version": "0.1.0",
         "language": "python", "profiles": ["wire", "streams"]}

OPS = {
    "readFrames": wire.read_frames,
    "writeFrames": wire.write_frames,
    "receive": wire.receive,
    "decode": wire.decode,
    "encode": wire.encode,
    "track": streams.track,
    "driveQueue": streams.drive_queue,
    "receiveConnections": streams.receive_connections,
    "publish": streams.publish,
    "readAnnouncements": streams.read_announcements,
    "matchAnnouncements": streams.match_announcements,
    "latency": streams.latency,
}

# The JSON names of the ops, including the proto names a JSON parser must
# also accept.
ALIASES = {"read_frames": "readFrames", "write_frames": "writeFrames", "drive_queue": "driveQueue",
           "receive_connections": "receiveConnections", "read_announcements": "readAnnouncements",
           "match_announcements": "matchAnnouncements"}


def read_exactly(f, n):
    parts = []
    while n > 0:
        b = f.read(n)
        if not b:
            return None
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def read_message(f):
    prefix = read_exactly(f, PREFIX)
    if prefix is None:
        return None
    n = int.from_bytes(prefix, "big")
    if n > MAX_PAYLOAD:
        raise SystemExit("conform.v1 frame of %d bytes exceeds the ceiling" % n)
    if n == 0:
        return b""
    body = read_exactly(f, n)
    if body is None:
        raise SystemExit("stdin ended inside a frame")
    return body


def write_message(f, obj):
    body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    f.write(len(body).to_bytes(PREFIX, "big") + body)
    f.flush()


def answer(req):
    resp = {}
    if "id" in req:
        resp["id"] = req["id"]
    ops = [k for k in req if k != "id"]
    if len(ops) != 1:
        resp["error"] = {"message": "a request carries exactly one op, got %r" % ops}
        return resp
    name = ALIASES.get(ops[0], ops[0])
    handler = OPS.get(name)
    if handler is None:
        # Other suites (tlv, doppler) are not implemented here: skipped.
        resp["unimplemented"] = {"detail": "op %s is not implemented by this binding" % name}
        return resp
    try:
        resp[name] = handler(req[ops[0]] or {})
    except Exception as e:  # the op could not be carried out at all
        resp["error"] = {"message": "%s: %s: %s" % (name, type(e).__name__, e)}
    return resp


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        msg = read_message(stdin)
        if msg is None:
            return
        if not msg:
            write_message(stdout, HELLO)     # the empty opening request
            continue
        write_message(stdout, answer(json.loads(msg)))


if __name__ == "__main__":
    main()
