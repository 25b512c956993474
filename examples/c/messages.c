#include "messages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The schema, from proto/ranvier/message/v1 and proto/ranvier/control/v1.
 * ---------------------------------------------------------------------- */

typedef enum { K_STRING, K_BYTES, K_UINT64, K_UINT32, K_FIXED64, K_ENUM, K_BOOL, K_MSG } kind;

typedef struct {
	const char *const *names; /* indexed by value */
	int n;
} enum_desc;

typedef struct {
	uint32_t num;
	const char *name; /* as in the .proto */
	const char *json; /* lowerCamelCase, the canonical JSON name */
	kind k;
	int repeated;
	int oneof; /* member of the message's one oneof */
	const msg_desc *msg;
	const enum_desc *en;
} field_desc;

struct msg_desc {
	const char *full;
	const field_desc *f;
	int n;
};

#define F(num, name, json, k) {num, name, json, k, 0, 0, NULL, NULL}
#define FE(num, name, json, e) {num, name, json, K_ENUM, 0, 0, NULL, &e}
#define FM(num, name, json, m) {num, name, json, K_MSG, 0, 0, &m, NULL}
#define FR(num, name, json, m) {num, name, json, K_MSG, 1, 0, &m, NULL}
#define FO(num, name, json, m) {num, name, json, K_MSG, 0, 1, &m, NULL}
#define NFIELDS(a) ((int)(sizeof a / sizeof a[0]))
#define MSG(var, full, fields) static const msg_desc var = {full, fields, NFIELDS(fields)}

/* ranvier.message.v1 */
static const char *const origin_names[] = {"ORIGIN_UNSPECIFIED", "ORIGIN_RAW", "ORIGIN_DERIVED", "ORIGIN_EPHEMERAL"};
static const enum_desc E_Origin = {origin_names, 4};
static const char *const assertion_names[] = {"ASSERTION_METHOD_UNSPECIFIED", "ASSERTION_METHOD_DECLARED",
					      "ASSERTION_METHOD_OPERATING_SYSTEM", "ASSERTION_METHOD_DIRECTORY"};
static const enum_desc E_AssertionMethod = {assertion_names, 4};

static const field_desc sample_f[] = {
	F(1, "monotonic_timestamp_ns", "monotonicTimestampNs", K_FIXED64),
	F(2, "sequence", "sequence", K_UINT64),
	F(3, "values", "values", K_BYTES),
	F(4, "source_timestamp_ns", "sourceTimestampNs", K_FIXED64),
	F(5, "stream_ref", "streamRef", K_UINT32),
};
MSG(M_Sample, "ranvier.message.v1.Sample", sample_f);

static const field_desc schema_f[] = {
	F(1, "schema_id", "schemaId", K_STRING),
	F(2, "descriptor", "descriptor", K_BYTES), /* carried, never parsed (§4.4) */
};
MSG(M_SchemaInfo, "ranvier.message.v1.SchemaInfo", schema_f);

static const field_desc identity_f[] = {
	F(1, "name", "name", K_STRING),
	FE(2, "asserted_by", "assertedBy", E_AssertionMethod),
};
MSG(M_Identity, "ranvier.message.v1.Identity", identity_f);

static const field_desc authorisation_f[] = {
	F(1, "authority", "authority", K_STRING),
	F(2, "reference", "reference", K_STRING),
	F(3, "valid_from_unix_ns", "validFromUnixNs", K_FIXED64),
	F(4, "valid_until_unix_ns", "validUntilUnixNs", K_FIXED64),
};
MSG(M_Authorisation, "ranvier.message.v1.Authorisation", authorisation_f);

static const field_desc setting_f[] = {
	F(1, "key", "key", K_STRING),
	F(2, "value", "value", K_STRING),
};
MSG(M_Setting, "ranvier.message.v1.Setting", setting_f);

static const field_desc production_f[] = {
	FR(1, "settings", "settings", M_Setting),
};
MSG(M_Production, "ranvier.message.v1.Production", production_f);

static const field_desc streaminfo_f[] = {
	F(1, "name", "name", K_STRING),
	F(2, "node", "node", K_STRING),
	FM(3, "schema", "schema", M_SchemaInfo),
	FE(4, "origin", "origin", E_Origin),
	F(5, "source_clock_domain", "sourceClockDomain", K_STRING),
	F(6, "host_id", "hostId", K_STRING),
	F(7, "boot_id", "bootId", K_STRING),
	FM(8, "operator", "operator", M_Identity),
	FM(9, "authorisation", "authorisation", M_Authorisation),
	F(10, "stream_ref", "streamRef", K_UINT32),
	FM(11, "production", "production", M_Production),
};
MSG(M_StreamInfo, "ranvier.message.v1.StreamInfo", streaminfo_f);

static const field_desc request_f[] = {
	F(1, "stream_name", "streamName", K_STRING),
};
MSG(M_Request, "ranvier.message.v1.Request", request_f);

static const field_desc frame_f[] = {
	FO(1, "announce", "announce", M_StreamInfo),
	FO(2, "sample", "sample", M_Sample),
};
MSG(M_Frame, "ranvier.message.v1.Frame", frame_f);

/* ranvier.control.v1 */
static const char *const refuse_names[] = {"REFUSE_REASON_UNSPECIFIED", "REFUSE_REASON_PROTOCOL", "REFUSE_REASON_TOKEN",
					   "REFUSE_REASON_UNKNOWN_NODE", "REFUSE_REASON_PORT_DRIFT",
					   "REFUSE_REASON_ALREADY_REGISTERED"};
static const enum_desc E_RefuseReason = {refuse_names, 6};
static const char *const action_names[] = {"TRANSPORT_ACTION_UNSPECIFIED", "TRANSPORT_ACTION_PAUSE", "TRANSPORT_ACTION_RESUME"};
static const enum_desc E_TransportAction = {action_names, 3};

static const field_desc register_f[] = {
	F(1, "protocol", "protocol", K_UINT32),
	F(2, "node_id", "nodeId", K_STRING),
	F(3, "token", "token", K_STRING),
	F(4, "accepts_transport", "acceptsTransport", K_BOOL),
};
MSG(M_Register, "ranvier.control.v1.Register", register_f);

static const field_desc endpoint_f[] = {
	F(1, "stream_name", "streamName", K_STRING),
	F(2, "address", "address", K_STRING),
};
MSG(M_Endpoint, "ranvier.control.v1.Endpoint", endpoint_f);

static const field_desc listening_f[] = {
	FR(1, "endpoints", "endpoints", M_Endpoint),
};
MSG(M_Listening, "ranvier.control.v1.Listening", listening_f);

static const field_desc alive_f[] = {
	F(1, "sequence", "sequence", K_UINT64),
};
MSG(M_Alive, "ranvier.control.v1.Alive", alive_f);

static const msg_desc M_Stopping = {"ranvier.control.v1.Stopping", NULL, 0};

static const field_desc bindinginfo_f[] = {
	F(1, "port", "port", K_STRING),
	F(2, "stream_name", "streamName", K_STRING),
	F(3, "from", "from", K_STRING),
};
MSG(M_BindingInfo, "ranvier.control.v1.BindingInfo", bindinginfo_f);

static const field_desc bind_f[] = {
	FR(1, "bindings", "bindings", M_BindingInfo),
	F(2, "heartbeat_period_ms", "heartbeatPeriodMs", K_UINT32),
};
MSG(M_Bind, "ranvier.control.v1.Bind", bind_f);

static const field_desc refuse_f[] = {
	FE(1, "reason", "reason", E_RefuseReason),
	F(2, "detail", "detail", K_STRING),
};
MSG(M_Refuse, "ranvier.control.v1.Refuse", refuse_f);

static const field_desc transport_f[] = {
	FE(1, "action", "action", E_TransportAction),
};
MSG(M_Transport, "ranvier.control.v1.Transport", transport_f);

static const field_desc stop_f[] = {
	F(1, "deadline_ms", "deadlineMs", K_UINT32),
};
MSG(M_Stop, "ranvier.control.v1.Stop", stop_f);

static const field_desc toruntime_f[] = {
	FO(1, "register", "register", M_Register),
	FO(2, "listening", "listening", M_Listening),
	FO(3, "alive", "alive", M_Alive), /* pinned by §5.3 */
	FO(4, "stopping", "stopping", M_Stopping),
};
MSG(M_ToRuntime, "ranvier.control.v1.ToRuntime", toruntime_f);

static const field_desc tonode_f[] = {
	FO(1, "bind", "bind", M_Bind),
	FO(2, "refuse", "refuse", M_Refuse),
	FO(3, "transport", "transport", M_Transport),
	FO(4, "stop", "stop", M_Stop),
};
MSG(M_ToNode, "ranvier.control.v1.ToNode", tonode_f);

static const msg_desc *const all_messages[] = {
	&M_Sample, &M_SchemaInfo, &M_Identity, &M_Authorisation, &M_Setting, &M_Production, &M_StreamInfo,
	&M_Request, &M_Frame, &M_Register, &M_Endpoint, &M_Listening, &M_Alive, &M_Stopping,
	&M_BindingInfo, &M_Bind, &M_Refuse, &M_Transport, &M_Stop, &M_ToRuntime, &M_ToNode,
};

const msg_desc *msg_lookup(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof all_messages / sizeof all_messages[0]; i++) {
		const char *full = all_messages[i]->full;
		if (strlen(full) == n && memcmp(full, name, n) == 0)
			return all_messages[i];
	}
	return NULL;
}

static const field_desc *field_by_num(const msg_desc *m, uint32_t num)
{
	for (int i = 0; i < m->n; i++)
		if (m->f[i].num == num)
			return &m->f[i];
	return NULL;
}

static int wire_type_of(kind k)
{
	switch (k) {
	case K_STRING:
	case K_BYTES:
	case K_MSG:
		return WT_LEN;
	case K_FIXED64:
		return WT_I64;
	default:
		return WT_VARINT;
	}
}

/* ------------------------------------------------------------------------
 * Decoding.
 * ---------------------------------------------------------------------- */

/* utf8_valid: proto3 strings must be well-formed UTF-8. */
static int utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		int len;
		uint32_t cp;
		if ((c & 0xe0) == 0xc0)
			len = 2, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			len = 3, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			len = 4, cp = c & 0x07;
		else
			return 0;
		if (n - i < (size_t)len)
			return 0;
		for (int j = 1; j < len; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += (size_t)len;
	}
	return 1;
}

/* validate checks that payload is a valid encoding of m: every field well
 * formed, every known string UTF-8, every known submessage valid in turn.
 * A known field number arriving with another wire type is treated as an
 * unknown field, as protobuf's own runtimes do. */
static int validate(const msg_desc *m, const uint8_t *p, size_t n, int depth, const char **err)
{
	if (depth > 100) {
		*err = "messages nested too deeply";
		return -1;
	}
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, p, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		const field_desc *fd = field_by_num(m, f.num);
		if (!fd || wire_type_of(fd->k) != f.wt)
			continue;
		if (fd->k == K_STRING && !utf8_valid(f.data, f.len)) {
			*err = "a string field is not valid UTF-8";
			return -1;
		}
		if (fd->k == K_MSG && validate(fd->msg, f.data, f.len, depth + 1, err) < 0)
			return -1;
	}
	if (rc < 0) {
		*err = "the payload is not a valid protobuf encoding (it ends mid-field or holds a malformed tag)";
		return -1;
	}
	return 0;
}

/* oneof_winner returns the field number of the oneof member set after
 * decoding (0: none) and the offset from which its occurrences count: a
 * member replaces another, and merges with earlier occurrences of itself. */
static uint32_t oneof_winner(const msg_desc *m, const uint8_t *p, size_t n, size_t *from)
{
	pb_reader r;
	pb_field f;
	uint32_t cur = 0;
	*from = 0;
	pb_reader_init(&r, p, n);
	for (;;) {
		size_t at = (size_t)(r.p - p);
		if (pb_next(&r, &f) != 1)
			break;
		const field_desc *fd = field_by_num(m, f.num);
		if (fd && fd->oneof && wire_type_of(fd->k) == f.wt && f.num != cur) {
			cur = f.num;
			*from = at;
		}
	}
	return cur;
}

int msg_has_variant(const msg_desc *m, const uint8_t *p, size_t n)
{
	size_t from;
	return oneof_winner(m, p, n, &from) != 0;
}

static void json_string(buf *out, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	buf_byte(out, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c == '"' || c == '\\') {
			buf_byte(out, '\\');
			buf_byte(out, c);
		} else if (c < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			buf_put(out, e, 6);
		} else {
			buf_byte(out, c);
		}
	}
	buf_byte(out, '"');
}

static void json_base64(buf *out, const uint8_t *s, size_t n)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	buf_byte(out, '"');
	if (buf_reserve(out, (n + 2) / 3 * 4 + 1) < 0)
		return;
	size_t i = 0;
	for (; n - i >= 3; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		char q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], tbl[v & 63]};
		buf_put(out, q, 4);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		char q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], '=', '='};
		buf_put(out, q, 4);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		char q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], '='};
		buf_put(out, q, 4);
	}
	buf_byte(out, '"');
}

static void json_key(buf *out, int *first, const char *key)
{
	if (!*first)
		buf_byte(out, ',');
	*first = 0;
	json_string(out, (const uint8_t *)key, strlen(key));
	buf_byte(out, ':');
}

static void emit(const msg_desc *m, const uint8_t *p, size_t n, buf *out);

/* emit_field writes field fd of the message in [p, p+n) counting only
 * occurrences at offset from or later. Defaults are omitted, as canonical
 * JSON omits them; a submessage that is present is written even if empty. */
static void emit_field(const field_desc *fd, const uint8_t *p, size_t n, size_t from, buf *out, int *first)
{
	pb_reader r;
	pb_field f;
	int wt = wire_type_of(fd->k);
	int count = 0;
	pb_field last = {0};
	buf merged;
	buf_init(&merged);

	pb_reader_init(&r, p + from, n - from);
	while (pb_next(&r, &f) == 1) {
		if (f.num != fd->num || f.wt != wt)
			continue;
		if (fd->k == K_MSG && fd->repeated) {
			if (count == 0) {
				json_key(out, first, fd->json);
				buf_byte(out, '[');
			} else {
				buf_byte(out, ',');
			}
			emit(fd->msg, f.data, f.len, out);
		} else if (fd->k == K_MSG) {
			/* Occurrences of a singular submessage merge: decoding
			 * their concatenation is exactly that merge. */
			buf_put(&merged, f.data, f.len);
			if (merged.oom)
				out->oom = 1;
		}
		last = f;
		count++;
	}
	if (count == 0)
		goto done;
	char num[32];
	switch (fd->k) {
	case K_MSG:
		if (fd->repeated) {
			buf_byte(out, ']');
		} else {
			json_key(out, first, fd->json);
			emit(fd->msg, merged.p, merged.len, out);
		}
		break;
	case K_STRING:
		if (last.len) {
			json_key(out, first, fd->json);
			json_string(out, last.data, last.len);
		}
		break;
	case K_BYTES:
		if (last.len) {
			json_key(out, first, fd->json);
			json_base64(out, last.data, last.len);
		}
		break;
	case K_UINT64:
	case K_FIXED64: /* 64-bit integers are strings in canonical JSON */
		if (last.v) {
			json_key(out, first, fd->json);
			snprintf(num, sizeof num, "\"%llu\"", (unsigned long long)last.v);
			buf_str(out, num);
		}
		break;
	case K_UINT32:
		if ((uint32_t)last.v) {
			json_key(out, first, fd->json);
			snprintf(num, sizeof num, "%lu", (unsigned long)(uint32_t)last.v);
			buf_str(out, num);
		}
		break;
	case K_BOOL:
		if (last.v) {
			json_key(out, first, fd->json);
			buf_str(out, "true");
		}
		break;
	case K_ENUM: {
		/* Open enums: a declared value by name, any other as its
		 * integer (§7.4). */
		int32_t v = (int32_t)(uint32_t)last.v;
		if (v) {
			json_key(out, first, fd->json);
			if (v > 0 && v < fd->en->n) {
				json_string(out, (const uint8_t *)fd->en->names[v], strlen(fd->en->names[v]));
			} else {
				snprintf(num, sizeof num, "%ld", (long)v);
				buf_str(out, num);
			}
		}
		break;
	}
	}
done:
	buf_free(&merged);
}

static void emit(const msg_desc *m, const uint8_t *p, size_t n, buf *out)
{
	size_t from = 0;
	uint32_t winner = oneof_winner(m, p, n, &from);
	int first = 1;
	buf_byte(out, '{');
	for (int i = 0; i < m->n; i++) {
		const field_desc *fd = &m->f[i];
		if (fd->oneof && fd->num != winner)
			continue; /* an unknown variant leaves none set (§7.3) */
		emit_field(fd, p, n, fd->oneof ? from : 0, out, &first);
	}
	buf_byte(out, '}');
}

int msg_decode_json(const msg_desc *m, const uint8_t *payload, size_t n, buf *out, const char **err)
{
	if (validate(m, payload, n, 0, err) < 0)
		return -1;
	emit(m, payload, n, out);
	if (out->oom) {
		*err = "out of memory";
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * A small JSON parser, enough for canonical protobuf JSON.
 * ---------------------------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jv {
	jtype t;
	int b;
	char *s; /* J_STR: the decoded string; J_NUM: the number's text */
	size_t slen;
	struct jv *kids; /* J_ARR, J_OBJ */
	char **keys;     /* J_OBJ */
	size_t *klens;
	size_t n;
} jv;

typedef struct {
	const char *p, *end;
	const char *err;
	int depth;
} jparser;

static void jv_free(jv *v)
{
	free(v->s);
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->klens);
	memset(v, 0, sizeof *v);
}

static void ws(jparser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static void put_utf8(buf *b, uint32_t cp)
{
	if (cp < 0x80) {
		buf_byte(b, (uint8_t)cp);
	} else if (cp < 0x800) {
		buf_byte(b, (uint8_t)(0xc0 | cp >> 6));
		buf_byte(b, (uint8_t)(0x80 | (cp & 63)));
	} else if (cp < 0x10000) {
		buf_byte(b, (uint8_t)(0xe0 | cp >> 12));
		buf_byte(b, (uint8_t)(0x80 | ((cp >> 6) & 63)));
		buf_byte(b, (uint8_t)(0x80 | (cp & 63)));
	} else {
		buf_byte(b, (uint8_t)(0xf0 | cp >> 18));
		buf_byte(b, (uint8_t)(0x80 | ((cp >> 12) & 63)));
		buf_byte(b, (uint8_t)(0x80 | ((cp >> 6) & 63)));
		buf_byte(b, (uint8_t)(0x80 | (cp & 63)));
	}
}

/* jstring parses a JSON string at ps->p (which is at the opening quote). */
static int jstring(jparser *ps, char **s, size_t *n)
{
	buf b;
	buf_init(&b);
	ps->p++;
	for (;;) {
		if (ps->p >= ps->end) {
			ps->err = "unterminated string";
			goto fail;
		}
		char c = *ps->p++;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20) {
			ps->err = "control character in string";
			goto fail;
		}
		if (c != '\\') {
			buf_byte(&b, (uint8_t)c);
			continue;
		}
		if (ps->p >= ps->end) {
			ps->err = "unterminated escape";
			goto fail;
		}
		c = *ps->p++;
		switch (c) {
		case '"': case '\\': case '/': buf_byte(&b, (uint8_t)c); break;
		case 'b': buf_byte(&b, '\b'); break;
		case 'f': buf_byte(&b, '\f'); break;
		case 'n': buf_byte(&b, '\n'); break;
		case 'r': buf_byte(&b, '\r'); break;
		case 't': buf_byte(&b, '\t'); break;
		case 'u': {
			uint32_t cp, lo;
			if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0) {
				ps->err = "bad \\u escape";
				goto fail;
			}
			ps->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u' &&
			    hex4(ps->p + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				ps->p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				ps->err = "unpaired surrogate in \\u escape";
				goto fail;
			}
			put_utf8(&b, cp);
			break;
		}
		default:
			ps->err = "bad escape";
			goto fail;
		}
	}
	buf_byte(&b, 0);
	if (b.oom) {
		ps->err = "out of memory";
		goto fail;
	}
	*s = (char *)b.p;
	*n = b.len - 1;
	return 0;
fail:
	buf_free(&b);
	return -1;
}

static int jvalue(jparser *ps, jv *v);

static int jpush(jv *v, size_t *cap, int obj)
{
	if (v->n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 4;
	jv *k = realloc(v->kids, c * sizeof *k);
	if (!k)
		return -1;
	v->kids = k;
	if (obj) {
		char **keys = realloc(v->keys, c * sizeof *keys);
		if (!keys)
			return -1;
		v->keys = keys;
		size_t *kl = realloc(v->klens, c * sizeof *kl);
		if (!kl)
			return -1;
		v->klens = kl;
	}
	*cap = c;
	return 0;
}

static int jvalue(jparser *ps, jv *v)
{
	memset(v, 0, sizeof *v);
	ws(ps);
	if (ps->p >= ps->end) {
		ps->err = "unexpected end of JSON";
		return -1;
	}
	if (++ps->depth > 100) {
		ps->err = "JSON nested too deeply";
		return -1;
	}
	int rc = 0;
	char c = *ps->p;
	size_t rest = (size_t)(ps->end - ps->p), cap = 0;
	if (c == '"') {
		v->t = J_STR;
		rc = jstring(ps, &v->s, &v->slen);
	} else if (c == '{' || c == '[') {
		int obj = c == '{';
		v->t = obj ? J_OBJ : J_ARR;
		ps->p++;
		ws(ps);
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			goto out;
		}
		for (;;) {
			if (jpush(v, &cap, obj) < 0) {
				ps->err = "out of memory";
				rc = -1;
				goto out;
			}
			if (obj) {
				ws(ps);
				if (ps->p >= ps->end || *ps->p != '"') {
					ps->err = "expected a key";
					rc = -1;
					goto out;
				}
				if (jstring(ps, &v->keys[v->n], &v->klens[v->n]) < 0) {
					rc = -1;
					goto out;
				}
				ws(ps);
				if (ps->p >= ps->end || *ps->p != ':') {
					free(v->keys[v->n]);
					ps->err = "expected ':'";
					rc = -1;
					goto out;
				}
				ps->p++;
			}
			if (jvalue(ps, &v->kids[v->n]) < 0) {
				if (obj)
					free(v->keys[v->n]);
				rc = -1;
				goto out;
			}
			v->n++;
			ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
				ps->p++;
				break;
			}
			ps->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
			rc = -1;
			goto out;
		}
	} else if (rest >= 4 && memcmp(ps->p, "null", 4) == 0) {
		v->t = J_NULL;
		ps->p += 4;
	} else if (rest >= 4 && memcmp(ps->p, "true", 4) == 0) {
		v->t = J_BOOL;
		v->b = 1;
		ps->p += 4;
	} else if (rest >= 5 && memcmp(ps->p, "false", 5) == 0) {
		v->t = J_BOOL;
		ps->p += 5;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		const char *start = ps->p;
		while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p))
			ps->p++;
		v->t = J_NUM;
		v->slen = (size_t)(ps->p - start);
		v->s = malloc(v->slen + 1);
		if (!v->s) {
			ps->err = "out of memory";
			rc = -1;
		} else {
			memcpy(v->s, start, v->slen);
			v->s[v->slen] = 0;
		}
	} else {
		ps->err = "unexpected character in JSON";
		rc = -1;
	}
out:
	ps->depth--;
	if (rc < 0)
		jv_free(v);
	return rc;
}

/* ------------------------------------------------------------------------
 * Encoding from JSON.
 * ---------------------------------------------------------------------- */

/* parse_uint reads an unsigned decimal integer, given as a JSON number or
 * (as canonical JSON writes 64-bit integers) a string. */
static int parse_uint(const jv *v, uint64_t max, uint64_t *out)
{
	if ((v->t != J_NUM && v->t != J_STR) || v->slen == 0)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < v->slen; i++) {
		char c = v->s[i];
		if (c < '0' || c > '9')
			return -1;
		uint64_t d = (uint64_t)(c - '0');
		if (x > (max - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int parse_enum(const field_desc *fd, const jv *v, int32_t *out)
{
	if (v->t == J_STR) {
		for (int i = 0; i < fd->en->n; i++) {
			if (strlen(fd->en->names[i]) == v->slen && memcmp(fd->en->names[i], v->s, v->slen) == 0) {
				*out = i;
				return 0;
			}
		}
		return -1;
	}
	if (v->t != J_NUM || v->slen == 0)
		return -1;
	int neg = v->s[0] == '-';
	uint64_t x = 0;
	jv mag = *v;
	mag.s += neg;
	mag.slen -= (size_t)neg;
	if (parse_uint(&mag, neg ? 0x80000000u : 0x7fffffffu, &x) < 0)
		return -1;
	*out = neg ? (int32_t)(-(int64_t)x) : (int32_t)x;
	return 0;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+' || c == '-') return 62;
	if (c == '/' || c == '_') return 63;
	return -1;
}

/* base64_decode accepts the standard and URL-safe alphabets, with or
 * without padding, as canonical JSON readers do. */
static int base64_decode(const char *s, size_t n, buf *out)
{
	while (n > 0 && s[n - 1] == '=')
		n--;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int d = b64val(s[i]);
		if (d < 0)
			return -1;
		acc = acc << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf_byte(out, (uint8_t)(acc >> bits));
		}
	}
	return bits >= 6 ? -1 : 0;
}

static int encode(const msg_desc *m, const jv *obj, buf *out, char *err, size_t errlen, int depth);

static int fail(char *err, size_t errlen, const msg_desc *m, const char *field, const char *why)
{
	snprintf(err, errlen, "%s%s%s: %s", m->full, field ? "." : "", field ? field : "", why);
	return -1;
}

static int encode_field(const field_desc *fd, const jv *v, buf *out, char *err, size_t errlen, const msg_desc *m, int depth)
{
	uint64_t u;
	int32_t e;
	switch (fd->k) {
	case K_STRING:
		if (v->t != J_STR)
			return fail(err, errlen, m, fd->name, "expected a string");
		if (v->slen)
			pb_bytes(out, fd->num, v->s, v->slen);
		return 0;
	case K_BYTES: {
		if (v->t != J_STR)
			return fail(err, errlen, m, fd->name, "expected base64 in a string");
		buf b;
		buf_init(&b);
		if (base64_decode(v->s, v->slen, &b) < 0) {
			buf_free(&b);
			return fail(err, errlen, m, fd->name, "not base64");
		}
		if (b.len)
			pb_msg(out, fd->num, &b);
		buf_free(&b);
		return 0;
	}
	case K_UINT64:
		if (parse_uint(v, UINT64_MAX, &u) < 0)
			return fail(err, errlen, m, fd->name, "expected an unsigned 64-bit integer");
		pb_uint(out, fd->num, u);
		return 0;
	case K_FIXED64:
		if (parse_uint(v, UINT64_MAX, &u) < 0)
			return fail(err, errlen, m, fd->name, "expected an unsigned 64-bit integer");
		pb_fixed64(out, fd->num, u);
		return 0;
	case K_UINT32:
		if (parse_uint(v, UINT32_MAX, &u) < 0)
			return fail(err, errlen, m, fd->name, "expected an unsigned 32-bit integer");
		pb_uint(out, fd->num, u);
		return 0;
	case K_BOOL:
		if (v->t != J_BOOL)
			return fail(err, errlen, m, fd->name, "expected true or false");
		pb_bool(out, fd->num, v->b);
		return 0;
	case K_ENUM:
		if (parse_enum(fd, v, &e) < 0)
			return fail(err, errlen, m, fd->name, "expected an enum value name or number");
		/* An enum is an int32 varint: negative values take ten bytes. */
		pb_uint(out, fd->num, (uint64_t)(int64_t)e);
		return 0;
	case K_MSG: {
		buf child;
		buf_init(&child);
		int rc = encode(fd->msg, v, &child, err, errlen, depth + 1);
		if (rc == 0)
			pb_msg(out, fd->num, &child); /* present, so written even if empty */
		buf_free(&child);
		return rc;
	}
	}
	return -1;
}

static const jv *member(const jv *obj, const field_desc *fd)
{
	for (size_t i = 0; i < obj->n; i++) {
		size_t kl = obj->klens[i];
		if ((strlen(fd->json) == kl && memcmp(obj->keys[i], fd->json, kl) == 0) ||
		    (strlen(fd->name) == kl && memcmp(obj->keys[i], fd->name, kl) == 0))
			return &obj->kids[i];
	}
	return NULL;
}

static int encode(const msg_desc *m, const jv *obj, buf *out, char *err, size_t errlen, int depth)
{
	if (depth > 100)
		return fail(err, errlen, m, NULL, "nested too deeply");
	if (obj->t != J_OBJ)
		return fail(err, errlen, m, NULL, "expected a JSON object");
	/* Every key must name a field. */
	for (size_t i = 0; i < obj->n; i++) {
		int known = 0;
		for (int j = 0; j < m->n && !known; j++) {
			const field_desc *fd = &m->f[j];
			size_t kl = obj->klens[i];
			known = (strlen(fd->json) == kl && memcmp(obj->keys[i], fd->json, kl) == 0) ||
				(strlen(fd->name) == kl && memcmp(obj->keys[i], fd->name, kl) == 0);
		}
		if (!known) {
			char why[160];
			snprintf(why, sizeof why, "unknown field \"%.100s\"", obj->keys[i]);
			return fail(err, errlen, m, NULL, why);
		}
	}
	int oneofs = 0;
	for (int j = 0; j < m->n; j++) {
		const field_desc *fd = &m->f[j];
		const jv *v = member(obj, fd);
		if (!v || v->t == J_NULL)
			continue;
		if (fd->oneof && ++oneofs > 1)
			return fail(err, errlen, m, fd->name, "a second member of the oneof is set");
		if (fd->repeated) {
			if (v->t != J_ARR)
				return fail(err, errlen, m, fd->name, "expected an array");
			for (size_t i = 0; i < v->n; i++)
				if (encode_field(fd, &v->kids[i], out, err, errlen, m, depth) < 0)
					return -1;
			continue;
		}
		if (encode_field(fd, v, out, err, errlen, m, depth) < 0)
			return -1;
	}
	return 0;
}

int msg_encode_json(const msg_desc *m, const char *json, size_t n, buf *out, char *err, size_t errlen)
{
	jparser ps = {json, json + n, NULL, 0};
	jv root;
	if (jvalue(&ps, &root) < 0) {
		snprintf(err, errlen, "invalid JSON: %s", ps.err ? ps.err : "?");
		return -1;
	}
	ws(&ps);
	if (ps.p != ps.end) {
		jv_free(&root);
		snprintf(err, errlen, "invalid JSON: text after the value");
		return -1;
	}
	int rc = encode(m, &root, out, err, errlen, 0);
	jv_free(&root);
	if (rc == 0 && out->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return rc;
}
