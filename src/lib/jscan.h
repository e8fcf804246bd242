/* A small JSON scanner for the few fields a listing reads from each line of a transcript
 * head, without building a tree: one line is checked to be JSON that jansson would accept, and
 * the values of some keys of one object are told by where their text lies. Whatever it is not
 * sure jansson would read the same way (a number jansson may refuse, an escaped key, a lone
 * surrogate, \u0000, deep nesting, anything malformed) is AGC_JSCAN_ASK: the caller then parses
 * that line with jansson, so both ways always give the same answer. */
#ifndef AGC_JSCAN_H
#define AGC_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

enum {
	AGC_JSCAN_OK = 0,
	AGC_JSCAN_ASK = 1, /* not sure: ask jansson */
};

/* The text of one JSON value inside a checked line; p is NULL when the key is absent. */
typedef struct agc_jspan {
	const char *p;
	size_t n;
} agc_jspan;

/* Check that [p, p + n) is one JSON object or array (jansson's json_loadb with no flags:
 * whitespace around it, nothing else), and when it is an object, set out[i] to the value of
 * its member keys[i] (the last one when a key is repeated, as jansson keeps it), for nkeys keys
 * of at most 31 bytes. Returns AGC_JSCAN_OK or AGC_JSCAN_ASK. */
int agc_jscan_line(const char *p, size_t n, const char *const *keys, size_t nkeys, agc_jspan *out);

/* The same for a value of a checked line: when v is an object, out[i] is its member keys[i];
 * otherwise every out[i] is absent. Returns AGC_JSCAN_OK or AGC_JSCAN_ASK (an escaped key). */
int agc_jscan_members(agc_jspan v, const char *const *keys, size_t nkeys, agc_jspan *out);

/* The elements of an array value one at a time: *it starts at 0; returns true with *el set to
 * the next element, false at the end (or when v is no array). */
bool agc_jscan_next(agc_jspan v, size_t *it, agc_jspan *el);

bool agc_jscan_is_str(agc_jspan v);
bool agc_jscan_is_true(agc_jspan v);

/* The decoded value of a string span, malloc'd and NUL-terminated, or NULL (not a string, out
 * of memory). A checked line holds no \u0000, so the result has no NUL inside. */
char *agc_jscan_str(agc_jspan v);

/* Whether the string span v decodes to lit. */
bool agc_jscan_str_is(agc_jspan v, const char *lit);

#endif
