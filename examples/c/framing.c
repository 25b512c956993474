#include "framing.h"

#include <stdlib.h>
#include <string.h>

void fr_init(frame_reader *r) { memset(r, 0, sizeof *r); }

void fr_free(frame_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof *r);
}

size_t fr_buffered(const frame_reader *r) { return r->len - r->off; }

int fr_write(frame_reader *r, const uint8_t *p, size_t n)
{
	if (r->too_large || n == 0)
		return 0; /* nothing after a refused prefix is read */
	/* Drain what has been yielded: what is left is at most one incomplete
	 * frame. */
	if (r->off > 0) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->cap - r->len < n) {
		size_t cap = r->cap ? r->cap : 256;
		while (cap - r->len < n)
			cap *= 2;
		uint8_t *b = realloc(r->buf, cap);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	return 0;
}

int fr_next(frame_reader *r, const uint8_t **payload, size_t *n)
{
	if (r->too_large)
		return -1;
	size_t have = r->len - r->off;
	/* 1. Fewer than four bytes: not yet a length. Wait. */
	if (have < PREFIX_LEN)
		return 0;
	/* 2. The length, big-endian. */
	const uint8_t *b = r->buf + r->off;
	uint32_t len = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	/* 3. Above the ceiling: refuse, and hold nothing more. */
	if (len > MAX_PAYLOAD) {
		r->too_large = 1;
		r->claimed = len;
		r->off = r->len = 0;
		return -1;
	}
	/* 4. The whole frame has not arrived. Wait. */
	if (have - PREFIX_LEN < len)
		return 0;
	/* 5. Yield the payload and consume the frame. */
	*payload = b + PREFIX_LEN;
	*n = len;
	r->off += PREFIX_LEN + (size_t)len;
	return 1;
}

int frame_append(buf *out, const uint8_t *payload, size_t n)
{
	if (n > MAX_PAYLOAD)
		return -1;
	uint8_t prefix[PREFIX_LEN] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
	/* The prefix and the payload as one unit (§1.4). */
	if (buf_reserve(out, PREFIX_LEN + n) < 0)
		return -1;
	buf_put(out, prefix, PREFIX_LEN);
	buf_put(out, payload, n);
	return 0;
}

int send_all(sink_fn sink, void *ctx, const uint8_t *p, size_t n, unsigned max_idle)
{
	size_t sent = 0;
	unsigned idle = 0;
	while (sent < n) {
		long k = sink(ctx, p + sent, n - sent);
		if (k < 0 || (size_t)k > n - sent)
			return -1;
		if (k == 0) {
			if (++idle >= max_idle)
				return -1;
			continue;
		}
		idle = 0;
		sent += (size_t)k;
	}
	return 0;
}
