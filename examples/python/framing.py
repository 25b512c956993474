"""Ranvier framing (ranvier-wire §1, §2): a four-byte big-endian length that
counts the payload alone, then the payload, at most MAX_PAYLOAD bytes."""

PREFIX = 4
MAX_PAYLOAD = 16 * 1024 * 1024   # 16,777,216: inclusive (§2)


class TooLarge(Exception):
    """A prefix claimed more than MAX_PAYLOAD (§2, §6.1)."""

    def __init__(self, claimed):
        super().__init__("frame length %d exceeds %d" % (claimed, MAX_PAYLOAD))
        self.claimed = claimed


class PayloadTooLarge(Exception):
    """A writer was handed a payload above MAX_PAYLOAD (§2)."""

    def __init__(self, size):
        super().__init__("payload of %d bytes exceeds %d" % (size, MAX_PAYLOAD))
        self.size = size


class FrameReader:
    """Accumulates bytes and yields each frame once all of it has arrived
    (§1.3). It holds at most one incomplete frame, and never allocates on the
    strength of a length prefix: the buffer grows only with bytes that came."""

    def __init__(self):
        self.buf = bytearray()
        self.failed = None        # the TooLarge that stopped the reader

    def feed(self, data):
        """Adds bytes; returns (frames, failure): the payloads of every frame
        now complete, and the TooLarge that stopped the reader, if a prefix
        claimed more than the ceiling. After that the stream is no longer
        aligned, and the reader yields nothing more (§6.2)."""
        if self.failed is not None:
            return [], self.failed
        buf = self.buf
        buf += data
        frames = []
        start = 0
        while len(buf) - start >= PREFIX:
            n = int.from_bytes(buf[start:start + PREFIX], "big")
            if n > MAX_PAYLOAD:
                self.failed = TooLarge(n)
                break
            if len(buf) - start < PREFIX + n:
                break
            frames.append(bytes(buf[start + PREFIX:start + PREFIX + n]))
            start += PREFIX + n
        del buf[:start]
        return frames, self.failed

    @property
    def buffered(self):
        return len(self.buf)


def write_frame(payload):
    """The prefix and the payload as one unit (§1.4); refuses, writing nothing,
    a payload above the ceiling (§2)."""
    if len(payload) > MAX_PAYLOAD:
        raise PayloadTooLarge(len(payload))
    return len(payload).to_bytes(PREFIX, "big") + payload


def send_all(send, data):
    """Writes data through send, which may accept fewer bytes than offered,
    resuming from what was actually written rather than re-sending (§1.4).
    send(view) returns how many bytes it took. Gives up, returning the count
    written, when the socket takes nothing for a whole round of attempts
    (standing in for a timeout with no progress, wire §6.5)."""
    view = memoryview(data)
    sent = 0
    idle = 0
    while sent < len(data):
        n = send(view[sent:])
        if n == 0:
            idle += 1
            if idle > 1000:
                break
            continue
        idle = 0
        sent += n
    return sent
