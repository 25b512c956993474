/*
 * binding.c — the conform.v1 side of the example binding: conform_call
 * (include/conform.h) decodes each Request, runs the op against this
 * binding's Ranvier code (framing.c, messages.c) and encodes the Response.
 *
 * It speaks conform.v1's binary encoding and implements the wire profile:
 * read_frames, write_frames, receive, decode and encode. Every other op is
 * answered Unimplemented, so those cases are skipped rather than failed.
 *
 * The binding keeps no state between calls: each input of each op runs
 * against fresh state, as conform.v1 asks.
 */
#include "conform.h"

#include <stdlib.h>
#include <string.h>

#include "framing.h"
#include "messages.h"
#include "pb.h"
#include "sha256.h"

/* conform.v1 field numbers (proto/conform/v1/conform.proto). */
enum {
	REQ_ID = 1,
	OP_READ_FRAMES = 10,
	OP_WRITE_FRAMES = 11,
	OP_RECEIVE = 12,
	OP_DECODE = 13,
	OP_ENCODE = 14,
	RESP_ID = 1,
	RESP_UNIMPLEMENTED = 2,
	RESP_ERROR = 3,
};

enum { READ_END_IDLE = 1, READ_END_WAITING = 2, READ_END_TOO_LARGE = 3, READ_END_CLOSED = 4, READ_END_TRUNCATED = 5 };
enum { RECEIVE_DELIVERED = 1, RECEIVE_SKIPPED_UNDECODABLE = 2, RECEIVE_SKIPPED_NO_VARIANT = 3 };

/* Data carries bytes up to 1 MiB, and their SHA-256 above. */
#define MAX_INLINE (1u << 20)

/* put_data writes a conform.v1 Data describing p[0:n] as field num of out. */
static void put_data(buf *out, uint32_t num, const uint8_t *p, size_t n)
{
	buf d;
	buf_init(&d);
	pb_uint(&d, 1, n);
	if (n > 0 && n <= MAX_INLINE) {
		pb_bytes(&d, 2, p, n);
	} else if (n > MAX_INLINE) {
		uint8_t sum[32];
		sha256(p, n, sum);
		pb_bytes(&d, 3, sum, 32);
	}
	pb_msg(out, num, &d);
	buf_free(&d);
}

/* A Blob is given literally (data) or described (fill: length and a pattern
 * repeated, then cut to length). */
typedef struct {
	const uint8_t *data;
	size_t len;
	int is_fill;
	uint64_t fill_len;
	const uint8_t *pattern;
	size_t pattern_len;
} blob;

static int parse_blob(const uint8_t *p, size_t n, blob *b)
{
	pb_reader r;
	pb_field f;
	int rc;
	memset(b, 0, sizeof *b);
	pb_reader_init(&r, p, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wt == WT_LEN) {
			b->data = f.data;
			b->len = f.len;
		} else if (f.num == 2 && f.wt == WT_LEN) {
			pb_reader fr;
			pb_field ff;
			b->is_fill = 1;
			pb_reader_init(&fr, f.data, f.len);
			while ((rc = pb_next(&fr, &ff)) == 1) {
				if (ff.num == 1 && ff.wt == WT_VARINT)
					b->fill_len = ff.v;
				else if (ff.num == 2 && ff.wt == WT_LEN)
					b->pattern = ff.data, b->pattern_len = ff.len;
			}
			if (rc < 0)
				return -1;
		}
	}
	return rc;
}

static uint64_t blob_len(const blob *b) { return b->is_fill ? b->fill_len : b->len; }

/* blob_bytes returns the blob's bytes; *owned is set when the caller must
 * free them. NULL when a fill cannot be expanded. */
static const uint8_t *blob_bytes(const blob *b, uint8_t **owned)
{
	*owned = NULL;
	if (!b->is_fill)
		return b->data ? b->data : (const uint8_t *)"";
	if (b->fill_len > (uint64_t)MAX_PAYLOAD * 2)
		return NULL;
	uint8_t *p = malloc(b->fill_len ? (size_t)b->fill_len : 1);
	if (!p)
		return NULL;
	for (size_t i = 0; i < b->fill_len; i++)
		p[i] = b->pattern_len ? b->pattern[i % b->pattern_len] : 0;
	*owned = p;
	return p;
}

/* ------------------------------------------------------------------------
 * read_frames and receive: a fresh reader per input, fed chunk by chunk.
 * ---------------------------------------------------------------------- */

/* feed runs one ReadInput through a fresh frame reader, calling on_frame for
 * each frame yielded and on_chunk_end after each chunk. It stops at a
 * prefix above the ceiling. */
typedef struct {
	frame_reader fr;
	int eos;
} feed_state;

typedef void (*frame_cb)(void *ctx, const uint8_t *payload, size_t n);
typedef void (*chunk_cb)(void *ctx);

static int feed(const uint8_t *in, size_t n, feed_state *st, frame_cb on_frame, chunk_cb on_chunk_end, void *ctx)
{
	pb_reader r;
	pb_field f;
	int rc;
	fr_init(&st->fr);
	st->eos = 0;
	pb_reader_init(&r, in, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 2 && f.wt == WT_VARINT) {
			st->eos = f.v != 0;
			continue;
		}
		if (f.num != 1 || f.wt != WT_LEN)
			continue;
		blob b;
		uint8_t *owned;
		if (parse_blob(f.data, f.len, &b) < 0)
			return -1;
		if (!st->fr.too_large) {
			const uint8_t *bytes = blob_bytes(&b, &owned);
			if (!bytes || fr_write(&st->fr, bytes, (size_t)blob_len(&b)) < 0) {
				free(owned);
				return -1;
			}
			free(owned);
			const uint8_t *payload;
			size_t plen;
			while (fr_next(&st->fr, &payload, &plen) == 1)
				on_frame(ctx, payload, plen);
		}
		if (on_chunk_end)
			on_chunk_end(ctx);
	}
	return rc;
}

typedef struct {
	buf out;   /* the ReadOutput */
	buf yield; /* the current chunk's ChunkYield */
} read_ctx;

static void read_frame(void *ctx, const uint8_t *p, size_t n)
{
	read_ctx *c = ctx;
	put_data(&c->yield, 1, p, n);
}

static void read_chunk_end(void *ctx)
{
	read_ctx *c = ctx;
	pb_msg(&c->out, 1, &c->yield); /* one entry per chunk, even if empty */
	c->yield.len = 0;
}

static int op_read_frames(const uint8_t *op, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, op, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num != 1 || f.wt != WT_LEN)
			continue;
		read_ctx c;
		feed_state st;
		buf_init(&c.out);
		buf_init(&c.yield);
		int frc = feed(f.data, f.len, &st, read_frame, read_chunk_end, &c);
		if (frc == 0) {
			int end;
			if (st.fr.too_large)
				end = READ_END_TOO_LARGE;
			else if (st.eos)
				end = fr_buffered(&st.fr) ? READ_END_TRUNCATED : READ_END_CLOSED;
			else
				end = fr_buffered(&st.fr) ? READ_END_WAITING : READ_END_IDLE;
			pb_uint(&c.out, 2, (uint64_t)end);
			if (st.fr.too_large)
				pb_uint(&c.out, 3, st.fr.claimed);
			pb_uint(&c.out, 4, fr_buffered(&st.fr));
			pb_msg(result, 1, &c.out);
		}
		fr_free(&st.fr);
		buf_free(&c.out);
		buf_free(&c.yield);
		if (frc < 0)
			return -1;
	}
	return rc;
}

typedef struct {
	buf out;
	uint64_t index, unreadable;
} recv_ctx;

/* recv_frame is the data-plane subscriber's step for one frame (§4, §6.3,
 * §6.4, §7.3): deliver a Frame with a variant; skip, and count, one that
 * does not decode or carries no known variant. */
static void recv_frame(void *ctx, const uint8_t *p, size_t n)
{
	recv_ctx *c = ctx;
	const msg_desc *frame = msg_lookup("ranvier.message.v1.Frame", 24);
	buf ev, js;
	const char *err;
	buf_init(&ev);
	buf_init(&js);
	pb_uint(&ev, 1, c->index++);
	if (msg_decode_json(frame, p, n, &js, &err) < 0) {
		pb_uint(&ev, 2, RECEIVE_SKIPPED_UNDECODABLE);
		c->unreadable++;
	} else if (!msg_has_variant(frame, p, n)) {
		pb_uint(&ev, 2, RECEIVE_SKIPPED_NO_VARIANT);
		c->unreadable++;
	} else {
		pb_uint(&ev, 2, RECEIVE_DELIVERED);
		pb_bytes(&ev, 3, js.p, js.len);
	}
	pb_msg(&c->out, 1, &ev);
	buf_free(&ev);
	buf_free(&js);
}

static int op_receive(const uint8_t *op, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, op, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num != 1 || f.wt != WT_LEN)
			continue;
		recv_ctx c = {0};
		feed_state st;
		buf_init(&c.out);
		int frc = feed(f.data, f.len, &st, recv_frame, NULL, &c);
		if (frc == 0) {
			/* A prefix above the ceiling misaligns the stream: the
			 * subscriber closes the connection (§6.2). */
			pb_bool(&c.out, 2, st.fr.too_large);
			pb_uint(&c.out, 3, c.unreadable);
			pb_msg(result, 1, &c.out);
		}
		fr_free(&st.fr);
		buf_free(&c.out);
		if (frc < 0)
			return -1;
	}
	return rc;
}

/* ------------------------------------------------------------------------
 * write_frames: the writer, and the send helper over a partial-write sink.
 * ---------------------------------------------------------------------- */

typedef struct {
	buf got;
	const uint64_t *limits;
	size_t nlimits, calls;
} sink_state;

/* partial_sink accepts at most limits[i % n] bytes on its i-th call. */
static long partial_sink(void *ctx, const uint8_t *p, size_t n)
{
	sink_state *s = ctx;
	uint64_t max = s->limits[s->calls++ % s->nlimits];
	size_t k = n < max ? n : (size_t)max;
	buf_put(&s->got, p, k);
	return s->got.oom ? -1 : (long)k;
}

static int write_one(const uint8_t *in, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	blob b = {0};
	uint64_t *limits = NULL;
	size_t nlimits = 0, cap = 0;
	pb_reader_init(&r, in, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wt == WT_LEN) {
			if (parse_blob(f.data, f.len, &b) < 0)
				rc = -1;
		} else if (f.num == 2 && (f.wt == WT_VARINT || f.wt == WT_LEN)) {
			/* repeated uint32, packed or not */
			const uint8_t *p = f.data, *end = f.data + f.len;
			uint64_t v = f.v;
			do {
				if (f.wt == WT_LEN) {
					if (p >= end)
						break;
					if (pb_read_varint(&p, end, &v) < 0) {
						rc = -1;
						break;
					}
				}
				if (nlimits == cap) {
					cap = cap ? cap * 2 : 8;
					uint64_t *l = realloc(limits, cap * sizeof *l);
					if (!l) {
						rc = -1;
						break;
					}
					limits = l;
				}
				limits[nlimits++] = (uint32_t)v;
			} while (f.wt == WT_LEN);
		}
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		free(limits);
		return -1;
	}

	buf out;
	buf_init(&out);
	uint64_t size = blob_len(&b);
	if (size > MAX_PAYLOAD) {
		/* The writer refuses, reports the size, and writes nothing (§2). */
		pb_bool(&out, 2, 1);
		pb_uint(&out, 3, size);
	} else {
		uint8_t *owned;
		const uint8_t *payload = blob_bytes(&b, &owned);
		buf frame;
		buf_init(&frame);
		if (!payload || frame_append(&frame, payload, (size_t)size) < 0 || frame.oom) {
			rc = -1;
		} else if (nlimits == 0) {
			put_data(&out, 1, frame.p, frame.len);
		} else {
			sink_state s = {.limits = limits, .nlimits = nlimits};
			buf_init(&s.got);
			/* A sink that accepts nothing for a whole cycle of its
			 * limits never will: give up and report what it got. */
			(void)send_all(partial_sink, &s, frame.p, frame.len, (unsigned)nlimits + 1);
			put_data(&out, 1, s.got.p, s.got.len);
			buf_free(&s.got);
		}
		free(owned);
		buf_free(&frame);
	}
	if (rc == 0)
		pb_msg(result, 1, &out);
	buf_free(&out);
	free(limits);
	return rc;
}

static int op_write_frames(const uint8_t *op, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, op, n);
	while ((rc = pb_next(&r, &f)) == 1)
		if (f.num == 1 && f.wt == WT_LEN && write_one(f.data, f.len, result) < 0)
			return -1;
	return rc;
}

/* ------------------------------------------------------------------------
 * decode and encode.
 * ---------------------------------------------------------------------- */

/* two_strings reads an input whose fields 1 and 2 are a type name and a
 * payload. */
static int two_fields(const uint8_t *in, size_t n, pb_field *name, pb_field *body)
{
	pb_reader r;
	pb_field f;
	int rc;
	memset(name, 0, sizeof *name);
	memset(body, 0, sizeof *body);
	pb_reader_init(&r, in, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wt == WT_LEN)
			*name = f;
		else if (f.num == 2 && f.wt == WT_LEN)
			*body = f;
	}
	return rc;
}

static void put_failure(buf *out, const char *why)
{
	pb_bytes(out, 2, why, strlen(why));
	pb_bool(out, 3, 1);
}

static int op_decode(const uint8_t *op, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, op, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num != 1 || f.wt != WT_LEN)
			continue;
		pb_field name, payload;
		if (two_fields(f.data, f.len, &name, &payload) < 0)
			return -1;
		buf out, js;
		buf_init(&out);
		buf_init(&js);
		const msg_desc *m = msg_lookup((const char *)name.data, name.len);
		const char *err;
		if (!m)
			put_failure(&out, "unknown message type");
		else if (msg_decode_json(m, payload.data ? payload.data : (const uint8_t *)"", payload.len, &js, &err) < 0)
			put_failure(&out, err);
		else
			pb_bytes(&out, 1, js.p, js.len);
		pb_msg(result, 1, &out);
		buf_free(&out);
		buf_free(&js);
	}
	return rc;
}

static int op_encode(const uint8_t *op, size_t n, buf *result)
{
	pb_reader r;
	pb_field f;
	int rc;
	pb_reader_init(&r, op, n);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num != 1 || f.wt != WT_LEN)
			continue;
		pb_field name, json;
		if (two_fields(f.data, f.len, &name, &json) < 0)
			return -1;
		buf out, payload;
		buf_init(&out);
		buf_init(&payload);
		const msg_desc *m = msg_lookup((const char *)name.data, name.len);
		char err[256];
		if (!m)
			put_failure(&out, "unknown message type");
		else if (msg_encode_json(m, (const char *)json.data, json.len, &payload, err, sizeof err) < 0)
			put_failure(&out, err);
		else if (payload.len)
			pb_bytes(&out, 1, payload.p, payload.len);
		pb_msg(result, 1, &out);
		buf_free(&out);
		buf_free(&payload);
	}
	return rc;
}

/* ------------------------------------------------------------------------
 * conform_call.
 * ---------------------------------------------------------------------- */

static void hello(buf *out)
{
	static const char *const fields[] = {"conform C example", "0.1.0", "C"};
	for (uint32_t i = 0; i < 3; i++)
		pb_bytes(out, i + 1, fields[i], strlen(fields[i]));
	pb_bytes(out, 4, "wire", 4); /* profiles */
}

static void simple_result(buf *out, uint32_t num, const char *text)
{
	buf m;
	buf_init(&m);
	pb_bytes(&m, 1, text, strlen(text));
	pb_msg(out, num, &m);
	buf_free(&m);
}

static void respond(const uint8_t *req, size_t len, buf *out)
{
	pb_reader r;
	pb_field f, op = {0};
	int rc;
	uint64_t id = 0;
	pb_reader_init(&r, req, len);
	while ((rc = pb_next(&r, &f)) == 1) {
		if (f.num == REQ_ID && f.wt == WT_VARINT)
			id = f.v;
		else if (f.num >= 10 && f.num <= 29 && f.wt == WT_LEN)
			op = f; /* a oneof: the last one wins */
	}
	pb_uint(out, RESP_ID, id);
	if (rc < 0) {
		simple_result(out, RESP_ERROR, "the request is not a valid conform.v1 Request");
		return;
	}
	int (*run)(const uint8_t *, size_t, buf *) = NULL;
	switch (op.num) {
	case OP_READ_FRAMES: run = op_read_frames; break;
	case OP_WRITE_FRAMES: run = op_write_frames; break;
	case OP_RECEIVE: run = op_receive; break;
	case OP_DECODE: run = op_decode; break;
	case OP_ENCODE: run = op_encode; break;
	case 0:
		simple_result(out, RESP_ERROR, "the request carries no op");
		return;
	default:
		simple_result(out, RESP_UNIMPLEMENTED, "the C example implements the wire profile only");
		return;
	}
	buf result;
	buf_init(&result);
	if (run(op.data, op.len, &result) < 0 || result.oom) {
		simple_result(out, RESP_ERROR, "the op's inputs are malformed, or memory ran out");
	} else {
		pb_msg(out, op.num, &result); /* a result carries its op's number */
	}
	buf_free(&result);
}

int conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len)
{
	buf out;
	buf_init(&out);
	if (len == 0)
		hello(&out); /* the opening request: answer with the Hello */
	else
		respond(req, len, &out);
	if (out.oom) {
		buf_free(&out);
		return -1;
	}
	if (!out.p && !(out.p = malloc(1)))
		return -1;
	*resp = out.p;
	*resp_len = out.len;
	return 0;
}

void conform_free(uint8_t *resp) { free(resp); }
