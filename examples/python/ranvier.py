"""Ranvier's messages as tables, from proto/ranvier/message/v1/message.proto
and proto/ranvier/control/v1/control.proto (numbers as the pins of docs/requirements.md
§1 pins them)."""

from protobuf import Field as F, Schema

SCHEMA = Schema()

M = "ranvier.message.v1."
C = "ranvier.control.v1."

# -- ranvier.message.v1 ------------------------------------------------------

SCHEMA.message(M + "Sample",
               F(1, "monotonic_timestamp_ns", "fixed64"),
               F(2, "sequence", "uint64"),
               F(3, "values", "bytes"),
               F(4, "source_timestamp_ns", "fixed64"),
               F(5, "stream_ref", "uint32"))
SCHEMA.enum(M + "Origin", {0: "ORIGIN_UNSPECIFIED", 1: "ORIGIN_RAW", 2: "ORIGIN_DERIVED", 3: "ORIGIN_EPHEMERAL"})
SCHEMA.message(M + "SchemaInfo",
               F(1, "schema_id", "string"),
               F(2, "descriptor", "bytes"))
SCHEMA.enum(M + "AssertionMethod", {0: "ASSERTION_METHOD_UNSPECIFIED", 1: "ASSERTION_METHOD_DECLARED",
                                    2: "ASSERTION_METHOD_OPERATING_SYSTEM", 3: "ASSERTION_METHOD_DIRECTORY"})
SCHEMA.message(M + "Identity",
               F(1, "name", "string"),
               F(2, "asserted_by", "enum", M + "AssertionMethod"))
SCHEMA.message(M + "Authorisation",
               F(1, "authority", "string"),
               F(2, "reference", "string"),
               F(3, "valid_from_unix_ns", "fixed64"),
               F(4, "valid_until_unix_ns", "fixed64"))
SCHEMA.message(M + "Setting",
               F(1, "key", "string"),
               F(2, "value", "string"))
SCHEMA.message(M + "Production",
               F(1, "settings", "message", M + "Setting", repeated=True))
SCHEMA.message(M + "StreamInfo",
               F(1, "name", "string"),
               F(2, "node", "string"),
               F(3, "schema", "message", M + "SchemaInfo"),
               F(4, "origin", "enum", M + "Origin"),
               F(5, "source_clock_domain", "string"),
               F(6, "host_id", "string"),
               F(7, "boot_id", "string"),
               F(8, "operator", "message", M + "Identity"),
               F(9, "authorisation", "message", M + "Authorisation"),
               F(10, "stream_ref", "uint32"),
               F(11, "production", "message", M + "Production"))
SCHEMA.message(M + "Request",
               F(1, "stream_name", "string"))
SCHEMA.message(M + "Frame",
               F(1, "announce", "message", M + "StreamInfo", oneof="payload"),
               F(2, "sample", "message", M + "Sample", oneof="payload"))

# -- ranvier.control.v1 ------------------------------------------------------

SCHEMA.message(C + "ToRuntime",
               F(1, "register", "message", C + "Register", oneof="message"),
               F(2, "listening", "message", C + "Listening", oneof="message"),
               F(3, "alive", "message", C + "Alive", oneof="message"),
               F(4, "stopping", "message", C + "Stopping", oneof="message"))
SCHEMA.message(C + "ToNode",
               F(1, "bind", "message", C + "Bind", oneof="message"),
               F(2, "refuse", "message", C + "Refuse", oneof="message"),
               F(3, "transport", "message", C + "Transport", oneof="message"),
               F(4, "stop", "message", C + "Stop", oneof="message"))
SCHEMA.message(C + "Register",
               F(1, "protocol", "uint32"),
               F(2, "node_id", "string"),
               F(3, "token", "string"),
               F(4, "accepts_transport", "bool"))
SCHEMA.message(C + "Endpoint",
               F(1, "stream_name", "string"),
               F(2, "address", "string"))
SCHEMA.message(C + "Listening",
               F(1, "endpoints", "message", C + "Endpoint", repeated=True))
SCHEMA.message(C + "Alive",
               F(1, "sequence", "uint64"))
SCHEMA.message(C + "Stopping")
SCHEMA.message(C + "BindingInfo",
               F(1, "port", "string"),
               F(2, "stream_name", "string"),
               F(3, "from", "string"))
SCHEMA.message(C + "Bind",
               F(1, "bindings", "message", C + "BindingInfo", repeated=True),
               F(2, "heartbeat_period_ms", "uint32"))
SCHEMA.enum(C + "RefuseReason", {0: "REFUSE_REASON_UNSPECIFIED", 1: "REFUSE_REASON_PROTOCOL", 2: "REFUSE_REASON_TOKEN",
                                 3: "REFUSE_REASON_UNKNOWN_NODE", 4: "REFUSE_REASON_PORT_DRIFT",
                                 5: "REFUSE_REASON_ALREADY_REGISTERED"})
SCHEMA.message(C + "Refuse",
               F(1, "reason", "enum", C + "RefuseReason"),
               F(2, "detail", "string"))
SCHEMA.enum(C + "TransportAction", {0: "TRANSPORT_ACTION_UNSPECIFIED", 1: "TRANSPORT_ACTION_PAUSE",
                                    2: "TRANSPORT_ACTION_RESUME"})
SCHEMA.message(C + "Transport",
               F(1, "action", "enum", C + "TransportAction"))
SCHEMA.message(C + "Stop",
               F(1, "deadline_ms", "uint32"))
