/* Id grammars of the agents (SPEC R1). An id that does not match yields no path at all. */
#ifndef AGC_IDS_H
#define AGC_IDS_H

#include <stdbool.h>
#include <stddef.h>

#define AGC_UUID_LEN 36
#define AGC_ID_MAX 80   /* longest canonical id of any agent, plus room */

/* The value of one hex digit in either case, or -1 when c is none (every parser of hex
 * here: UUIDs, JSON \u escapes, the device fields of /proc/PID/maps). */
static inline int agc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Canonicalise a UUID (8-4-4-4-12 hex, any letter case) to lower case in out (AGC_ID_MAX bytes).
 * Returns 0, or AGC_EUNSAFE when in is not a UUID. */
int agc_id_uuid(const char *in, char *out);

/* True when s[0..len) is a lower-case canonical UUID (for names read from disk). */
bool agc_id_is_uuid(const char *s, size_t len);

/* OpenCode: "ses_" followed by 1..64 of [A-Za-z0-9_], case-sensitive, copied as given.
 * Returns 0 or AGC_EUNSAFE. */
int agc_id_opencode(const char *in, char *out);

/* True when s is an id as OpenCode generates it: "ses_", 12 lower-case hex, 14 of
 * [0-9A-Za-z] (formats/opencode.md): no other generated id starts with it. */
bool agc_id_opencode_generated(const char *s);

/* True when s has no byte that could change a path: '/', NUL before len, control bytes, and
 * is not "." or "..". Every id joined into a path passes this as a second line of defence. */
bool agc_id_path_safe(const char *s);

#endif
