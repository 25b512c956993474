/*
 * pb.h — the few protobuf binary encoding primitives this binding needs,
 * written by hand from the protobuf encoding rules: varints, tags, the four
 * wire types in use, and a growable output buffer.
 */
#ifndef EXAMPLE_PB_H
#define EXAMPLE_PB_H

#include <stddef.h>
#include <stdint.h>

/* Wire types. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* buf is a growable byte buffer. After an allocation failure it sets oom
 * and ignores further writes; check oom once at the end. */
typedef struct {
	uint8_t *p;
	size_t len, cap;
	int oom;
} buf;

void buf_init(buf *b);
void buf_free(buf *b);
int buf_reserve(buf *b, size_t extra);
void buf_put(buf *b, const void *p, size_t n);
void buf_byte(buf *b, uint8_t c);
void buf_str(buf *b, const char *s);

/* Writing. */
void pb_varint(buf *b, uint64_t v);
void pb_tag(buf *b, uint32_t num, int wt);
void pb_uint(buf *b, uint32_t num, uint64_t v);      /* varint field, omitted when 0 */
void pb_bool(buf *b, uint32_t num, int v);           /* omitted when false */
void pb_fixed64(buf *b, uint32_t num, uint64_t v);   /* omitted when 0 */
void pb_bytes(buf *b, uint32_t num, const void *p, size_t n); /* always written */
void pb_msg(buf *b, uint32_t num, const buf *child); /* always written; child's oom propagates */

/* Reading. A field as it appears on the wire. For WT_LEN, data/len are the
 * contents; for WT_VARINT, WT_I64 and WT_I32, v is the value. */
typedef struct {
	uint32_t num;
	int wt;
	uint64_t v;
	const uint8_t *data;
	size_t len;
} pb_field;

typedef struct {
	const uint8_t *p, *end;
} pb_reader;

void pb_reader_init(pb_reader *r, const uint8_t *p, size_t n);
/* pb_next reads the next field: 1 when it read one, 0 at the end of the
 * message, -1 when the bytes are not a valid encoding (truncated, a bad wire
 * type, field number 0, an unmatched group end...). Groups are skipped
 * whole and returned with wt WT_SGROUP. */
int pb_next(pb_reader *r, pb_field *f);
/* pb_read_varint reads one varint from [*p, end); -1 when malformed. */
int pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

#endif
