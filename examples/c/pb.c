#include "pb.h"

#include <stdlib.h>
#include <string.h>

void buf_init(buf *b) { memset(b, 0, sizeof *b); }

void buf_free(buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

int buf_reserve(buf *b, size_t extra)
{
	if (b->oom)
		return -1;
	if (b->cap - b->len >= extra)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void buf_put(buf *b, const void *p, size_t n)
{
	if (n == 0 || buf_reserve(b, n) < 0)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void buf_byte(buf *b, uint8_t c) { buf_put(b, &c, 1); }

void buf_str(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

void pb_varint(buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		tmp[n++] = v ? (c | 0x80) : c;
	} while (v);
	buf_put(b, tmp, n);
}

void pb_tag(buf *b, uint32_t num, int wt) { pb_varint(b, ((uint64_t)num << 3) | (uint64_t)wt); }

void pb_uint(buf *b, uint32_t num, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, num, WT_VARINT);
	pb_varint(b, v);
}

void pb_bool(buf *b, uint32_t num, int v) { pb_uint(b, num, v ? 1 : 0); }

void pb_fixed64(buf *b, uint32_t num, uint64_t v)
{
	if (!v)
		return;
	uint8_t le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i)); /* little-endian, unlike the frame prefix */
	pb_tag(b, num, WT_I64);
	buf_put(b, le, 8);
}

void pb_bytes(buf *b, uint32_t num, const void *p, size_t n)
{
	pb_tag(b, num, WT_LEN);
	pb_varint(b, n);
	buf_put(b, p, n);
}

void pb_msg(buf *b, uint32_t num, const buf *child)
{
	if (child->oom)
		b->oom = 1;
	pb_bytes(b, num, child->p, child->len);
}

void pb_reader_init(pb_reader *r, const uint8_t *p, size_t n)
{
	r->p = p;
	r->end = p + n;
}

int pb_read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (p >= end)
			return -1;
		uint8_t c = *p++;
		if (i == 9 && c > 1)
			return -1; /* more than 64 bits */
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* read_tag reads a tag and checks the field number and wire type. */
static int read_tag(pb_reader *r, uint32_t *num, int *wt)
{
	uint64_t t;
	if (pb_read_varint(&r->p, r->end, &t) < 0)
		return -1;
	if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff)
		return -1;
	*num = (uint32_t)(t >> 3);
	*wt = (int)(t & 7);
	return 0;
}

/* skip_value skips the value of a field of wire type wt (a group to its
 * matching end, nested groups included). */
static int skip_value(pb_reader *r, uint32_t num, int wt, int depth)
{
	uint64_t v;
	switch (wt) {
	case WT_VARINT:
		return pb_read_varint(&r->p, r->end, &v);
	case WT_I64:
		if (r->end - r->p < 8)
			return -1;
		r->p += 8;
		return 0;
	case WT_I32:
		if (r->end - r->p < 4)
			return -1;
		r->p += 4;
		return 0;
	case WT_LEN:
		if (pb_read_varint(&r->p, r->end, &v) < 0 || v > (uint64_t)(r->end - r->p))
			return -1;
		r->p += v;
		return 0;
	case WT_SGROUP:
		if (depth > 100)
			return -1;
		for (;;) {
			uint32_t n;
			int w;
			if (r->p >= r->end || read_tag(r, &n, &w) < 0)
				return -1;
			if (w == WT_EGROUP)
				return n == num ? 0 : -1;
			if (skip_value(r, n, w, depth + 1) < 0)
				return -1;
		}
	default:
		return -1; /* an unmatched group end, or wire type 6 or 7 */
	}
}

int pb_next(pb_reader *r, pb_field *f)
{
	if (r->p >= r->end)
		return 0;
	if (read_tag(r, &f->num, &f->wt) < 0)
		return -1;
	f->v = 0;
	f->data = NULL;
	f->len = 0;
	const uint8_t *start = r->p;
	switch (f->wt) {
	case WT_VARINT:
		return pb_read_varint(&r->p, r->end, &f->v) < 0 ? -1 : 1;
	case WT_I64:
		if (r->end - r->p < 8)
			return -1;
		for (int i = 0; i < 8; i++)
			f->v |= (uint64_t)r->p[i] << (8 * i);
		r->p += 8;
		return 1;
	case WT_I32:
		if (r->end - r->p < 4)
			return -1;
		for (int i = 0; i < 4; i++)
			f->v |= (uint64_t)r->p[i] << (8 * i);
		r->p += 4;
		return 1;
	case WT_LEN: {
		uint64_t n;
		if (pb_read_varint(&r->p, r->end, &n) < 0 || n > (uint64_t)(r->end - r->p))
			return -1;
		f->data = r->p;
		f->len = (size_t)n;
		r->p += n;
		return 1;
	}
	case WT_SGROUP:
		if (skip_value(r, f->num, WT_SGROUP, 0) < 0)
			return -1;
		f->data = start;
		f->len = (size_t)(r->p - start);
		return 1;
	default:
		return -1;
	}
}
