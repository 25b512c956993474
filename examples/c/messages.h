/*
 * messages.h — the Ranvier messages (ranvier.message.v1, ranvier.control.v1;
 * proto/ranvier/...), described as tables, with a decoder that renders a
 * payload as protobuf's canonical JSON and an encoder that takes canonical
 * JSON and writes the binary encoding.
 */
#ifndef EXAMPLE_MESSAGES_H
#define EXAMPLE_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

typedef struct msg_desc msg_desc;

/* msg_lookup finds a message by its fully-qualified name, or NULL. */
const msg_desc *msg_lookup(const char *full_name, size_t n);

/* msg_decode_json decodes payload as m and writes its canonical JSON to out.
 * Unknown fields are skipped (§7.2), unknown enum values are kept as
 * integers (§7.4), an unknown oneof variant leaves none set (§7.3). Returns
 * 0, or -1 with a reason in err (a payload that ends mid-field, §7.5). */
int msg_decode_json(const msg_desc *m, const uint8_t *payload, size_t n, buf *out, const char **err);

/* msg_encode_json parses canonical JSON as m and writes its binary encoding
 * to out, fields in ascending number order, defaults omitted. Returns 0, or
 * -1 with a reason in errbuf. */
int msg_encode_json(const msg_desc *m, const char *json, size_t n, buf *out, char *errbuf, size_t errlen);

/* msg_has_variant reports whether a payload of m (already known to decode)
 * sets a known variant of m's oneof. */
int msg_has_variant(const msg_desc *m, const uint8_t *payload, size_t n);

#endif
