#!/usr/bin/env python3
"""The smallest complete conform.v1 shim: the wire profile's readFrames op,
in Python 3.8+ with the standard library only, speaking JSON on stdio.

    conform run --sut 'exec:python3 examples/minimal/shim.py' --profile wire --allow-unimplemented
"""
import base64, hashlib, json, sys

HELLO = {"implementation": "minimal-shim", "version": "0.1.0",
         "language": "python", "profiles": ["wire"]}
CEILING = 16 * 1024 * 1024      # ranvier-wire §2: the largest payload, inclusive


# Every message is a frame: a 4-byte big-endian length, then that many bytes.
def read_message(f):
    prefix = f.read(4)
    if len(prefix) < 4:
        return None                 # stdin ended: so does the session
    return f.read(int.from_bytes(prefix, "big"))


def write_message(f, obj):
    body = json.dumps(obj).encode()
    f.write(len(body).to_bytes(4, "big") + body)
    f.flush()


# Bytes travel as base64, 64-bit integers as strings.
def b64(raw):
    return base64.b64encode(raw).decode()


# An input chunk (a Blob): literal data, or a pattern repeated to a length.
def blob(b):
    if "fill" in b:
        n = int(b["fill"].get("length", "0"))
        pattern = base64.b64decode(b["fill"].get("pattern", "")) or b"\0"
        return (pattern * (n // len(pattern) + 1))[:n]
    return base64.b64decode(b.get("data", ""))


# A frame yielded (a Data): its length, and its bytes up to 1 MiB or their
# SHA-256 above.
def data(payload):
    if len(payload) > 1 << 20:
        return {"length": str(len(payload)), "sha256": b64(hashlib.sha256(payload).digest())}
    return {"length": str(len(payload)), "bytes": b64(payload)}


# readFrames: one fresh frame reader per input (ranvier-wire §1.3), fed the
# chunks in order; the frames it yielded after each chunk, then its end state.
def read_frames(inp):
    buf, yields, end, claimed = bytearray(), [], None, 0
    for chunk in inp.get("chunks", []):
        frames = []
        if end is None:             # after TOO_LARGE a reader yields nothing more
            buf += blob(chunk)
            while len(buf) >= 4:
                n = int.from_bytes(buf[:4], "big")
                if n > CEILING:
                    end, claimed = "READ_END_TOO_LARGE", n
                    break
                if len(buf) < 4 + n:
                    break           # not yet: wait for the rest of the frame
                frames.append(data(bytes(buf[4:4 + n])))
                del buf[:4 + n]
        yields.append({"frames": frames})
    if end is None and inp.get("endOfStream"):
        end = "READ_END_TRUNCATED" if buf else "READ_END_CLOSED"
    elif end is None:
        end = "READ_END_WAITING" if buf else "READ_END_IDLE"
    return {"yields": yields, "end": end, "claimed": str(claimed), "buffered": str(len(buf))}


# The session: the harness opens with an empty message, answered with the
# Hello; then each request gets one response carrying the request's id.
def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (msg := read_message(stdin)) is not None:
        if not msg:
            write_message(stdout, HELLO)
            continue
        req = json.loads(msg)
        if "readFrames" in req:
            outputs = [read_frames(i) for i in req["readFrames"].get("inputs", [])]
            write_message(stdout, {"id": req["id"], "readFrames": {"outputs": outputs}})
        else:                       # any other op: its cases are skipped
            write_message(stdout, {"id": req["id"], "unimplemented": {"detail": "readFrames only"}})


if __name__ == "__main__":
    main()
