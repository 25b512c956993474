/*
 * framing.h — Ranvier framing (ranvier-wire §1, §2): a frame is a four-byte
 * big-endian length counting the payload alone, then the payload; payloads
 * of at most MAX_PAYLOAD bytes.
 */
#ifndef EXAMPLE_FRAMING_H
#define EXAMPLE_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

#define PREFIX_LEN 4
#define MAX_PAYLOAD (16u * 1024u * 1024u) /* inclusive (§2) */

/* frame_reader accumulates bytes and yields whole frames (§1.3). It holds
 * only what has arrived, never what a prefix claims (§2), and drains the
 * bytes it has yielded. After a prefix above the ceiling it is refused for
 * good: it never resynchronises (§6.2). */
typedef struct {
	uint8_t *buf;
	size_t off, len, cap;
	int too_large;
	uint64_t claimed;
} frame_reader;

void fr_init(frame_reader *r);
void fr_free(frame_reader *r);
/* fr_write appends bytes that arrived; -1 when out of memory. */
int fr_write(frame_reader *r, const uint8_t *p, size_t n);
/* fr_next: 1 and the payload (valid until the next fr_write) when a whole
 * frame is buffered, 0 when the reader must wait, -1 when the prefix claims
 * more than MAX_PAYLOAD (r->claimed says how much). */
int fr_next(frame_reader *r, const uint8_t **payload, size_t *n);
/* fr_buffered: bytes held and not yet yielded. */
size_t fr_buffered(const frame_reader *r);

/* frame_append writes the frame carrying payload to out. It refuses a
 * payload above MAX_PAYLOAD, writing nothing, and returns -1 (§2). */
int frame_append(buf *out, const uint8_t *payload, size_t n);

/* A sink is a socket-like write: it accepts up to n bytes and returns how
 * many it took (possibly 0, a full socket buffer), or -1 on error. */
typedef long (*sink_fn)(void *ctx, const uint8_t *p, size_t n);

/* send_all writes all n bytes through sink, resuming each time from the
 * first byte not yet accepted (§1.4). A sink accepting nothing is a full
 * buffer, not a broken peer (§6.5): send_all tries again, and gives up
 * (returning -1) only after max_idle consecutive calls accepted nothing. */
int send_all(sink_fn sink, void *ctx, const uint8_t *p, size_t n, unsigned max_idle);

#endif
