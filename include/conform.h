/*
 * conform.h — the C ABI of conform's lib: carrier.
 *
 * A binding built as a shared library exports the two functions below and is
 * run with
 *
 *     conform run --sut lib:./libmybinding.so
 *
 * conform never loads the library into its own process: it starts a child
 * host process ("conform lib-host PATH") that loads it, so a segfault or an
 * abort in the library is recorded as an error naming the signal, the host is
 * restarted, and the run goes on. The library may therefore keep state in
 * globals, but must not rely on it surviving a crash.
 *
 * The messages are those of conform.v1 (proto/conform/v1/conform.proto). Over
 * this ABI each message is one bare payload: there is NO length prefix (the
 * 4-byte framing of the exec and tcp carriers is the host's business).
 *
 *   - The first call carries the empty request (len == 0). The library
 *     answers it with its Hello.
 *   - Every later call carries one Request; the library answers with one
 *     Response carrying the same id.
 *   - The library chooses the encoding by its answer to the first call: the
 *     protobuf binary encoding, or protobuf's canonical JSON mapping (a JSON
 *     Hello starts with '{'). Requests arrive, and responses must be given,
 *     in that encoding for the rest of the session.
 *   - An op the library does not implement is answered with the
 *     Response.unimplemented result: the case is skipped, never failed.
 *
 * Calls are made one at a time, from one thread.
 */
#ifndef CONFORM_H
#define CONFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CONFORM_EXPORT keeps the two symbols visible when the library is built
 * with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define CONFORM_EXPORT __attribute__((visibility("default")))
#else
#define CONFORM_EXPORT
#endif

/*
 * conform_call answers one conform.v1 message.
 *
 * req points to len bytes: the bare request payload. It is never NULL (for
 * the empty request it points to zero readable bytes), and it is valid only
 * for the duration of the call.
 *
 * On success the library stores in *resp a buffer it allocated holding the
 * bare response payload, stores its size in *resp_len, and returns 0. conform
 * copies the answer and then passes *resp to conform_free, exactly once.
 * An empty answer (*resp_len == 0) must still be a non-NULL pointer.
 *
 * A non-zero return, or a return of 0 with *resp left NULL, means the library
 * could not answer at all. conform then ignores *resp (it does not free it)
 * and reports the op to the harness as a conform.v1 Error; if it happens on
 * the first call there is no session, and the library is reported as never
 * having said Hello. Prefer answering Response.error yourself: it carries
 * your message.
 */
CONFORM_EXPORT int conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len);

/*
 * conform_free releases a buffer that conform_call stored in *resp.
 */
CONFORM_EXPORT void conform_free(uint8_t *resp);

#ifdef __cplusplus
}
#endif

#endif /* CONFORM_H */
