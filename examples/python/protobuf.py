"""A minimal proto3 codec driven by message tables, with protobuf's canonical
JSON mapping.

Only what the Ranvier messages need: varint scalars (uint32, uint64, int32
enums, bool), fixed64, and length-delimited fields (string, bytes, embedded
messages). Decoding follows the protobuf encoding rules: fields are read by
number, unknown fields are skipped whatever their wire type (ranvier-wire
§7.2), a known field arriving with another wire type is treated as unknown,
the last value of a scalar wins, repeated occurrences of an embedded message
merge, and the last member of a oneof wins.
"""

import base64
import json

# Kinds of field, named after their .proto types.
VARINT_KINDS = ("uint32", "uint64", "int32", "bool", "enum")
WIRE_VARINT, WIRE_FIXED64, WIRE_BYTES, WIRE_START, WIRE_END, WIRE_FIXED32 = 0, 1, 2, 3, 4, 5
MAX_FIELD_NUMBER = (1 << 29) - 1
U64 = (1 << 64) - 1


class DecodeError(Exception):
    pass


class Field:
    """One field of a message table."""

    def __init__(self, number, name, kind, ref=None, repeated=False, oneof=None):
        self.number = number
        self.name = name
        self.kind = kind          # see VARINT_KINDS, "fixed64", "string", "bytes", "message"
        self.ref = ref            # message or enum full name
        self.repeated = repeated
        self.oneof = oneof        # the oneof's name, for members of one
        self.json_name = lower_camel(name)

    @property
    def wire_type(self):
        if self.kind in VARINT_KINDS:
            return WIRE_VARINT
        if self.kind == "fixed64":
            return WIRE_FIXED64
        return WIRE_BYTES


def lower_camel(name):
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


class Schema:
    """Message and enum tables, by fully-qualified name."""

    def __init__(self):
        self.messages = {}   # name -> list of Field
        self.enums = {}      # name -> {number: value name}

    def message(self, name, *fields):
        self.messages[name] = list(fields)

    def enum(self, name, values):
        self.enums[name] = dict(values)

    def fields(self, name):
        try:
            return self.messages[name]
        except KeyError:
            raise ValueError("unknown message type %r" % name) from None


# ---------------------------------------------------------------------------
# Binary: the primitives.

def read_varint(buf, pos):
    """Returns (value, new position). At most ten bytes; the tenth may only
    carry the 64th bit."""
    result = 0
    shift = 0
    end = len(buf)
    for i in range(10):
        if pos >= end:
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        if i == 9 and b > 1:
            raise DecodeError("varint overflows 64 bits")
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise DecodeError("varint longer than ten bytes")


def write_varint(out, v):
    v &= U64
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def skip_field(buf, pos, number, wire_type, depth=0):
    """Skips one field's value; returns the new position."""
    end = len(buf)
    if wire_type == WIRE_VARINT:
        _, pos = read_varint(buf, pos)
        return pos
    if wire_type == WIRE_FIXED64:
        if pos + 8 > end:
            raise DecodeError("truncated fixed64")
        return pos + 8
    if wire_type == WIRE_FIXED32:
        if pos + 4 > end:
            raise DecodeError("truncated fixed32")
        return pos + 4
    if wire_type == WIRE_BYTES:
        n, pos = read_varint(buf, pos)
        if n > end - pos:
            raise DecodeError("truncated length-delimited field")
        return pos + n
    if wire_type == WIRE_START:
        if depth > 100:
            raise DecodeError("groups nested too deeply")
        while True:
            num, wt, pos = read_tag(buf, pos)
            if wt == WIRE_END:
                if num != number:
                    raise DecodeError("mismatched end group")
                return pos
            pos = skip_field(buf, pos, num, wt, depth + 1)
    if wire_type == WIRE_END:
        raise DecodeError("unexpected end group")
    raise DecodeError("invalid wire type %d" % wire_type)


def read_tag(buf, pos):
    tag, pos = read_varint(buf, pos)
    number, wire_type = tag >> 3, tag & 7
    if number < 1 or number > MAX_FIELD_NUMBER:
        raise DecodeError("invalid field number %d" % number)
    return number, wire_type, pos


# ---------------------------------------------------------------------------
# Binary decoding into a dict: field name -> value. A scalar is present once
# read (a zero read from the wire is the default, and JSON omits it); an
# embedded message is a dict; a repeated field is a list; a oneof stores its
# member's name under "__oneof_<name>".

def decode(schema, type_name, buf):
    fields = {f.number: f for f in schema.fields(type_name)}
    msg = {}
    pos = 0
    end = len(buf)
    while pos < end:
        number, wire_type, pos = read_tag(buf, pos)
        f = fields.get(number)
        if f is None or wire_type != f.wire_type:
            pos = skip_field(buf, pos, number, wire_type)   # unknown: skipped
            continue
        if wire_type == WIRE_VARINT:
            v, pos = read_varint(buf, pos)
            if f.kind == "uint32":
                v &= 0xFFFFFFFF
            elif f.kind in ("int32", "enum"):
                v &= 0xFFFFFFFF
                if v >= 1 << 31:
                    v -= 1 << 32
            elif f.kind == "bool":
                v = v != 0
        elif wire_type == WIRE_FIXED64:
            if pos + 8 > end:
                raise DecodeError("truncated fixed64")
            v = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        else:
            n, pos = read_varint(buf, pos)
            if n > end - pos:
                raise DecodeError("truncated length-delimited field")
            raw = bytes(buf[pos:pos + n])
            pos += n
            if f.kind == "string":
                try:
                    v = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise DecodeError("field %s is not valid UTF-8" % f.name) from None
            elif f.kind == "bytes":
                v = raw
            else:
                v = decode(schema, f.ref, raw)
                if not f.repeated:
                    prev = msg.get(f.name)
                    if prev is not None and (f.oneof is None or msg.get("__oneof_" + f.oneof) == f.name):
                        v = merge(schema, f.ref, prev, v)
        if f.oneof is not None:
            other = msg.get("__oneof_" + f.oneof)
            if other is not None and other != f.name:
                del msg[other]
            msg["__oneof_" + f.oneof] = f.name
        if f.repeated:
            msg.setdefault(f.name, []).append(v)
        else:
            msg[f.name] = v
    return msg


def merge(schema, type_name, old, new):
    """Merges new into old as protobuf merges a repeated embedded message."""
    out = dict(old)
    for f in schema.fields(type_name):
        if f.name not in new:
            continue
        if f.oneof is not None:
            cur = out.get("__oneof_" + f.oneof)
            if cur is not None and cur != f.name:
                del out[cur]
            out["__oneof_" + f.oneof] = f.name
        if f.repeated:
            out[f.name] = out.get(f.name, []) + new[f.name]
        elif f.kind == "message" and f.name in out:
            out[f.name] = merge(schema, f.ref, out[f.name], new[f.name])
        else:
            out[f.name] = new[f.name]
    return out


# ---------------------------------------------------------------------------
# Binary encoding from the same dict form, fields in ascending number order.
# proto3: a scalar holding its default is not written, except as a oneof
# member; an embedded message is written whenever it is present.

def encode(schema, type_name, msg):
    out = bytearray()
    for f in sorted(schema.fields(type_name), key=lambda f: f.number):
        if f.name not in msg:
            continue
        values = msg[f.name] if f.repeated else [msg[f.name]]
        for v in values:
            if f.kind != "message" and not f.repeated and f.oneof is None and is_default(f, v):
                continue
            write_varint(out, (f.number << 3) | f.wire_type)
            if f.wire_type == WIRE_VARINT:
                write_varint(out, int(v))
            elif f.wire_type == WIRE_FIXED64:
                out += (v & U64).to_bytes(8, "little")
            else:
                if f.kind == "string":
                    raw = v.encode("utf-8")
                elif f.kind == "bytes":
                    raw = v
                else:
                    raw = encode(schema, f.ref, v)
                write_varint(out, len(raw))
                out += raw
    return bytes(out)


def is_default(f, v):
    if f.kind in ("string", "bytes"):
        return len(v) == 0
    if f.kind == "bool":
        return not v
    return v == 0


# ---------------------------------------------------------------------------
# Canonical JSON (protobuf's JSON mapping): lowerCamelCase names, 64-bit
# integers as strings, bytes as standard base64, enum values by name when the
# enum declares them and as numbers when it does not, defaults omitted.

def to_json_value(schema, type_name, msg):
    obj = {}
    for f in schema.fields(type_name):
        if f.name not in msg:
            continue
        v = msg[f.name]
        if f.repeated:
            if v:
                obj[f.json_name] = [json_scalar(schema, f, x) for x in v]
            continue
        if f.kind != "message" and f.oneof is None and is_default(f, v):
            continue
        obj[f.json_name] = json_scalar(schema, f, v)
    return obj


def json_scalar(schema, f, v):
    if f.kind == "message":
        return to_json_value(schema, f.ref, v)
    if f.kind in ("uint64", "fixed64"):
        return str(v)
    if f.kind == "bytes":
        return base64.b64encode(v).decode("ascii")
    if f.kind == "enum":
        return schema.enums[f.ref].get(v, v)
    return v


def to_json(schema, type_name, msg):
    return json.dumps(to_json_value(schema, type_name, msg), separators=(",", ":"), ensure_ascii=False)


# Parsing canonical JSON into the dict form. Accepts what protobuf's JSON
# mapping accepts: the JSON name or the .proto name, 64-bit integers as
# strings or numbers, enums by name or number, base64 standard or URL-safe
# with or without padding, null as the default. Unknown names are refused.

class JSONError(Exception):
    pass


def from_json(schema, type_name, text):
    try:
        value = json.loads(text)
    except ValueError as e:
        raise JSONError("not JSON: %s" % e) from None
    return from_json_value(schema, type_name, value)


def from_json_value(schema, type_name, obj):
    if not isinstance(obj, dict):
        raise JSONError("%s: expected an object" % type_name)
    by_name = {}
    for f in schema.fields(type_name):
        by_name[f.json_name] = f
        by_name[f.name] = f
    msg = {}
    oneofs = {}
    for key, v in obj.items():
        f = by_name.get(key)
        if f is None:
            raise JSONError("%s has no field %r" % (type_name, key))
        if f.name in msg:
            raise JSONError("field %s given twice" % f.name)
        if v is None:
            continue
        if f.oneof is not None:
            if f.oneof in oneofs:
                raise JSONError("oneof %s set twice (%s and %s)" % (f.oneof, oneofs[f.oneof], f.name))
            oneofs[f.oneof] = f.name
        if f.repeated:
            if not isinstance(v, list):
                raise JSONError("field %s: expected a list" % f.name)
            msg[f.name] = [parse_scalar(schema, f, x) for x in v]
        else:
            msg[f.name] = parse_scalar(schema, f, v)
    return msg


def parse_scalar(schema, f, v):
    k = f.kind
    if k == "message":
        return from_json_value(schema, f.ref, v)
    if k == "string":
        if not isinstance(v, str):
            raise JSONError("field %s: expected a string" % f.name)
        return v
    if k == "bytes":
        if not isinstance(v, str):
            raise JSONError("field %s: expected base64" % f.name)
        return parse_base64(v, f.name)
    if k == "bool":
        if not isinstance(v, bool):
            raise JSONError("field %s: expected true or false" % f.name)
        return v
    if k == "enum":
        if isinstance(v, str):
            for number, name in schema.enums[f.ref].items():
                if name == v:
                    return number
            raise JSONError("field %s: %r is not a value of %s" % (f.name, v, f.ref))
        return parse_int(v, f.name, -(1 << 31), (1 << 31) - 1)
    if k == "int32":
        return parse_int(v, f.name, -(1 << 31), (1 << 31) - 1)
    if k == "uint32":
        return parse_int(v, f.name, 0, (1 << 32) - 1)
    return parse_int(v, f.name, 0, U64)      # uint64, fixed64


def parse_int(v, name, lo, hi):
    if isinstance(v, bool):
        raise JSONError("field %s: expected an integer" % name)
    if isinstance(v, str):
        try:
            if any(c in v for c in ".eE"):
                f = float(v)
                if f != int(f):
                    raise ValueError
                n = int(f)
            else:
                n = int(v, 10)
        except ValueError:
            raise JSONError("field %s: %r is not an integer" % (name, v)) from None
        if v != v.strip():
            raise JSONError("field %s: %r is not an integer" % (name, v))
    elif isinstance(v, int):
        n = v
    elif isinstance(v, float) and v == int(v):
        n = int(v)
    else:
        raise JSONError("field %s: expected an integer" % name)
    if not lo <= n <= hi:
        raise JSONError("field %s: %d is out of range" % (name, n))
    return n


def parse_base64(s, name):
    t = s.replace("-", "+").replace("_", "/").rstrip("=")
    t += "=" * (-len(t) % 4)
    try:
        return base64.b64decode(t, validate=True)
    except ValueError:
        raise JSONError("field %s: %r is not base64" % (name, s)) from None
