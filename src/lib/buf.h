/* Bounded growable byte buffers and arrays. Every buffer has a cap; growth past it fails
 * with an error instead of eating memory (R8). */
#ifndef AGC_BUF_H
#define AGC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct agc_buf {
	char *ptr;   /* NUL-terminated when non-NULL */
	size_t len;  /* bytes used, not counting the NUL */
	size_t cap;  /* bytes allocated */
	size_t max;  /* cap on len; 0 means AGC_BUF_DEFAULT_MAX */
} agc_buf;

#define AGC_BUF_DEFAULT_MAX ((size_t)256 << 20)
#define AGC_BUF_INIT {NULL, 0, 0, 0}
#define AGC_BUF_INIT_MAX(m) {NULL, 0, 0, (m)}

/* Append bytes; 0 on success, -1 (error set) when over the cap or out of memory. */
int agc_buf_add(agc_buf *b, const void *data, size_t len);
int agc_buf_adds(agc_buf *b, const char *s);
int agc_buf_addc(agc_buf *b, char c);
int agc_buf_printf(agc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int agc_buf_vprintf(agc_buf *b, const char *fmt, va_list ap);
/* Make room for at least len more bytes. */
int agc_buf_grow(agc_buf *b, size_t len);
/* Empty the buffer, keep its storage. */
void agc_buf_clear(agc_buf *b);
/* Free the storage. */
void agc_buf_release(agc_buf *b);
/* Hand the storage over to the caller (never NULL on success: an empty string); the buffer is reset. */
char *agc_buf_detach(agc_buf *b, size_t *len);
/* The contents as a string ("" when empty). */
const char *agc_buf_cstr(const agc_buf *b);

/* Grow an array *ptr of *cap elements of size elsize to hold need elements, at most max.
 * Returns 0 or -1 (error set). */
int agc_array_grow(void **ptr, size_t *cap, size_t need, size_t elsize, size_t max);

/* Append one element to a typed array { T *v; size_t n, cap; }: AGC_ARRAY_PUSH(&arr, max) returns a
 * pointer to the new zeroed slot or NULL (error set). */
#define AGC_ARRAY_PUSH(a, max)                                                                    \
	(agc_array_grow((void **)&(a)->v, &(a)->cap, (a)->n + 1, sizeof(*(a)->v), (max)) < 0        \
		 ? NULL                                                                             \
		 : (memset(&(a)->v[(a)->n], 0, sizeof(*(a)->v)), &(a)->v[(a)->n++]))

/* strdup that records out-of-memory. */
/* A set of strings each kept once (a listing's project paths: many sessions share one). */
typedef struct agc_strpool {
	char **slots; /* open addressing, NULL = empty */
	size_t n, nslots;
} agc_strpool;

/* The pool's copy of s (made on first use), or NULL out of memory; valid until the pool is
 * released. NULL for s NULL. */
const char *agc_strpool_add(agc_strpool *p, const char *s);
void agc_strpool_release(agc_strpool *p);

char *agc_strdup(const char *s);
char *agc_strndup(const char *s, size_t n);
/* printf into a new string. */
char *agc_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether needle (nl bytes) occurs in hay (len bytes), ASCII letters in any case. */
bool agc_mem_icase(const char *hay, size_t len, const char *needle, size_t nl);

#endif
