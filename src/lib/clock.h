/* One monotonic clock and the wall clock, with a test override (curl TIME-KEEPING, git test_tick). */
#ifndef AGC_CLOCK_H
#define AGC_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in microseconds. */
int64_t agc_clock_mono_us(void);

/* Wall time in ms since the epoch; $AGENTGC_NOW (epoch seconds) overrides it, for tests. */
int64_t agc_clock_now_ms(void);

/* Wall time in ms, never overridden: for comparing with real file times (locks). */
int64_t agc_clock_real_ms(void);

/* Parse "2026-11-29T20:35:55.988Z" (UTC, fraction optional, 'Z' or +00:00) into epoch ms.
 * Returns 0 or -1. */
int agc_time_parse_iso(const char *s, int64_t *ms);

/* Format epoch ms as "2026-11-29T20:35:55Z" into out (at least 32 bytes). */
void agc_time_format_iso(int64_t ms, char *out, size_t n);

/* Parse a duration "90s", "15m", "24h", "30d" (also "ms", "w") into ms. Returns 0 or -1. */
int agc_duration_parse(const char *s, int64_t *ms);

#endif
