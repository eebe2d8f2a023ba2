/* The compiled OTLP trace decoder: ExportTraceServiceRequest bytes → Arrow column buffers.
 *
 * It walks the protobuf wire format directly (no parsed message objects), so memory grows
 * with the chunk of rows being built, never with the request. Two entry points:
 *
 *   check_traces(payload) -> (received, rejected, problems)
 *       validates the whole request as the protobuf parser would (wire types, lengths,
 *       UTF-8 of string fields, nesting depth) and checks every span's ids; raises
 *       ValueError naming the fault.
 *   TraceDecoder(payload, received_unix_nano, promoted, float_json, invocation_model)
 *       .next_chunk(max_rows, max_bytes) -> (done, rows, columns, received, rejected,
 *       problems, payload_bytes), the columns an "arrow_array" PyCapsule (Arrow C data
 *       interface) of a struct array whose children are collector.decode.SPAN_SCHEMA's
 *       columns in order: the C buffers themselves, handed over, not copied.
 *
 * The rows are the ones collector/decode.py's pure-Python path builds (the property test
 * tests/collector/test_fastdecode.py compares both): attribute maps as JSON text with the
 * typed-value rules of collector/values.py, the same promoted columns. The walk of a request
 * of DECODE_RELEASE_BYTES or more runs without the GIL (see "the interpreter lock" below):
 * promoted values are C structs, not Python objects, and doubles of up to 15 significant
 * digits are written in C exactly as orjson and repr write them. The rare cases that need
 * Python take the GIL back for a moment: a double of 16-17 digits (``float_json``, i.e.
 * orjson.dumps, or repr), str.lower of non-ASCII text, int() of a token count given as
 * other than plain ASCII digits, the JSON inside llm.invocation_parameters.
 *
 * Protobuf rules kept: the last value of a scalar field wins, a message field given twice
 * is merged (its occurrences read as one), a oneof member replaces another, a known field
 * with the wrong wire type is an unknown field, unknown fields (groups too) are skipped.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_LEVEL 100 /* deepest message the protobuf parser accepts (the request is 0) */
#define MAX_EXPLAINED 10

/* ------------------------------------------------------------------ the interpreter lock
 *
 * A request's spans are walked and their columns built without the GIL (gil_release()):
 * the walk reads only the payload (immutable bytes the decoder holds a reference to) and
 * C buffers allocated with the raw allocator. The few steps that need Python (raising an
 * error, a rare value that only Python formats byte-identically) take the lock back first
 * with gil_hold(); the caller takes it back for good before it builds the result. The
 * state is per thread: each thread runs its own call. */

static _Thread_local PyThreadState *released; /* non-NULL: this thread gave the GIL away */

#ifdef FASTDECODE_GIL_STATS
/* A measuring build (-DFASTDECODE_GIL_STATS) counts the thread CPU time spent without the
 * GIL, for bench scripts: _fastdecode.released_cpu_ns(). */
#include <time.h>
static _Thread_local uint64_t released_at, released_ns;
static uint64_t thread_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#define STATS_RELEASED() (released_at = thread_ns())
#define STATS_HELD() (released_ns += thread_ns() - released_at)
#else
#define STATS_RELEASED() ((void)0)
#define STATS_HELD() ((void)0)
#endif

static void gil_release(void) {
    if (!released) {
        released = PyEval_SaveThread();
        STATS_RELEASED();
    }
}

static void gil_hold(void) {
    if (released) {
        STATS_HELD();
        PyThreadState *state = released;
        released = NULL;
        PyEval_RestoreThread(state);
    }
}

static void raise_(PyObject *type, const char *message) {
    gil_hold();
    PyErr_SetString(type, message);
}

static void no_memory(void) {
    gil_hold();
    PyErr_NoMemory();
}

/* ------------------------------------------------------------------ buffers */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *data = PyMem_RawRealloc(b->data, cap);
    if (!data) { no_memory(); return -1; }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *p, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

#define PUTS(b, s) buf_put((b), (s), sizeof(s) - 1)

static int buf_byte(Buf *b, char c) {
    if (b->len == b->cap && buf_reserve(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

static void buf_free(Buf *b) {
    PyMem_RawFree(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int buf_u64(Buf *b, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    if (buf_reserve(b, (size_t)n) < 0) return -1;
    while (n) b->data[b->len++] = tmp[--n];
    return 0;
}

static int buf_i64(Buf *b, int64_t v) {
    if (v < 0) {
        if (buf_byte(b, '-') < 0) return -1;
        return buf_u64(b, (uint64_t)0 - (uint64_t)v);
    }
    return buf_u64(b, (uint64_t)v);
}

static const char HEX[] = "0123456789abcdef";

static int buf_hex(Buf *b, const uint8_t *p, size_t n) {
    if (buf_reserve(b, 2 * n) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        b->data[b->len++] = HEX[p[i] >> 4];
        b->data[b->len++] = HEX[p[i] & 15];
    }
    return 0;
}

/* A JSON string as orjson writes it: escape '"', '\\' and control characters only. */
static int buf_json_str(Buf *b, const uint8_t *p, size_t n) {
    if (buf_reserve(b, 6 * n + 2) < 0) return -1; /* the worst case: every byte \u00XX */
    char *o = b->data + b->len;
    *o++ = '"';
    size_t i = 0;
    while (i < n) {
#ifdef __SSE2__
        /* copy runs of plain bytes sixteen at a time, up to the first that needs escaping */
        while (i + 16 <= n) {
            __m128i w = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(w, _mm_set1_epi8('\\'))),
                /* bytes below 0x20: unsigned min(w, 0x1F) == w */
                _mm_cmpeq_epi8(_mm_min_epu8(w, _mm_set1_epi8(0x1F)), w));
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            _mm_storeu_si128((__m128i *)o, w);
            if (mask) {
                unsigned k = (unsigned)__builtin_ctz(mask);
                o += k;
                i += k;
                break;
            }
            o += 16;
            i += 16;
        }
#endif
        /* copy runs of plain bytes eight at a time */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            uint64_t ctrl = (w - 0x2020202020202020ULL) & ~w;
            uint64_t quote = w ^ 0x2222222222222222ULL;
            uint64_t slash = w ^ 0x5C5C5C5C5C5C5C5CULL;
            uint64_t hit = ctrl | ((quote - 0x0101010101010101ULL) & ~quote)
                         | ((slash - 0x0101010101010101ULL) & ~slash);
            if (hit & 0x8080808080808080ULL) break;
            memcpy(o, p + i, 8);
            o += 8;
            i += 8;
        }
        if (i >= n) break;
        uint8_t c = p[i++];
        if (c >= 0x20 && c != '"' && c != '\\') { *o++ = (char)c; continue; }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\n': *o++ = 'n'; break;
        case '\t': *o++ = 't'; break;
        case '\r': *o++ = 'r'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        default:
            *o++ = 'u'; *o++ = '0'; *o++ = '0';
            *o++ = HEX[c >> 4]; *o++ = HEX[c & 15];
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int buf_base64(Buf *b, const uint8_t *p, size_t n) {
    if (buf_reserve(b, 4 * ((n + 2) / 3)) < 0) return -1;
    char *o = b->data + b->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63];
        *o++ = B64[(v >> 6) & 63]; *o++ = B64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = '='; *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8);
        *o++ = B64[v >> 18]; *o++ = B64[(v >> 12) & 63]; *o++ = B64[(v >> 6) & 63]; *o++ = '=';
    }
    b->len = (size_t)(o - b->data);
    return 0;
}

/* ------------------------------------------------------------------ wire format */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

typedef struct {
    const uint8_t *p, *end;
} Rd;

typedef struct {
    uint32_t num;
    int wt;
    uint64_t v;        /* varint / fixed value */
    const uint8_t *s;  /* LEN: the value */
    size_t n;
} Field;

/* Why the last wire read failed. Per thread: validate() runs without the GIL. */
static _Thread_local const char *wire_error;

static int rd_varint_long(Rd *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) { wire_error = "a varint runs past the end of its message"; return -1; }
        uint8_t byte = *r->p++;
        if (shift < 64) v |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) { *out = v; return 0; }
    }
    wire_error = "a varint is longer than 10 bytes";
    return -1;
}

/* The two hottest functions (every field of every message is read several times): inlined
 * into their callers, the walk is ~12% faster. */
#define HOT static inline __attribute__((always_inline))

/* Most varints (keys, lengths under 128, small numbers) are one byte. */
HOT int rd_varint(Rd *r, uint64_t *out) {
    if (r->p < r->end && *r->p < 0x80) {
        *out = *r->p++;
        return 0;
    }
    return rd_varint_long(r, out);
}

static int skip_group(Rd *r, uint32_t number, int level);

/* Read one field. 1: read, 0: end of message, -1: malformed (wire_error says why). */
HOT int rd_field(Rd *r, Field *f, int level) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (rd_varint(r, &key) < 0) return -1;
    if (key > 0xFFFFFFFFu) { wire_error = "a field key is out of range"; return -1; }
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    if (f->num == 0) { wire_error = "a field has number 0"; return -1; }
    f->v = 0; /* every member set, whatever the wire type (callers read by field number) */
    f->s = NULL;
    f->n = 0;
    switch (f->wt) {
    case WT_VARINT:
        return rd_varint(r, &f->v) < 0 ? -1 : 1;
    case WT_I64:
        if (r->end - r->p < 8) { wire_error = "a fixed64 runs past the end of its message"; return -1; }
        memcpy(&f->v, r->p, 8);
        r->p += 8;
        return 1;
    case WT_I32: {
        if (r->end - r->p < 4) { wire_error = "a fixed32 runs past the end of its message"; return -1; }
        uint32_t v;
        memcpy(&v, r->p, 4);
        f->v = v;
        r->p += 4;
        return 1;
    }
    case WT_LEN: {
        uint64_t n;
        if (rd_varint(r, &n) < 0) return -1;
        if (n > (uint64_t)(r->end - r->p)) {
            wire_error = "a length-delimited field runs past the end of its message";
            return -1;
        }
        f->s = r->p;
        f->n = (size_t)n;
        r->p += n;
        return 1;
    }
    case WT_SGROUP:
        return skip_group(r, f->num, level + 1) < 0 ? -1 : 1;
    case WT_EGROUP:
        wire_error = "a group ends that was never started";
        return -1;
    default:
        wire_error = "a field has an invalid wire type";
        return -1;
    }
}

static int skip_group(Rd *r, uint32_t number, int level) {
    if (level > MAX_LEVEL) { wire_error = "the message is nested too deeply"; return -1; }
    for (;;) {
        if (r->p >= r->end) { wire_error = "a group is not ended"; return -1; }
        const uint8_t *at = r->p;
        uint64_t key;
        if (rd_varint(r, &key) < 0) return -1;
        if ((key & 7) == WT_EGROUP) {
            if ((key >> 3) != number) { wire_error = "a group ends with another group's number"; return -1; }
            return 0;
        }
        r->p = at;
        Field f;
        int got = rd_field(r, &f, level);
        if (got < 0) return -1;
    }
}

/* ------------------------------------------------------------------ validation */

enum { K_NONE = 0, K_STR, K_BYTES, K_VARINT, K_I64, K_I32, K_MSG };
enum { T_REQ, T_RS, T_RES, T_KV, T_AV, T_ARR, T_KVL, T_ENT, T_SS, T_SCOPE, T_SPAN, T_EVENT,
       T_LINK, T_STATUS, T_COUNT };

typedef struct { uint8_t kind, type; } FieldSpec;
#define MAX_FIELD 17
static FieldSpec SPEC[T_COUNT][MAX_FIELD];

static void spec(int type, int num, int kind, int sub) {
    SPEC[type][num].kind = (uint8_t)kind;
    SPEC[type][num].type = (uint8_t)sub;
}

static void init_specs(void) {
    spec(T_REQ, 1, K_MSG, T_RS);
    spec(T_RS, 1, K_MSG, T_RES); spec(T_RS, 2, K_MSG, T_SS); spec(T_RS, 3, K_STR, 0);
    spec(T_RES, 1, K_MSG, T_KV); spec(T_RES, 2, K_VARINT, 0); spec(T_RES, 3, K_MSG, T_ENT);
    spec(T_KV, 1, K_STR, 0); spec(T_KV, 2, K_MSG, T_AV); spec(T_KV, 3, K_VARINT, 0);
    spec(T_AV, 1, K_STR, 0); spec(T_AV, 2, K_VARINT, 0); spec(T_AV, 3, K_VARINT, 0);
    spec(T_AV, 4, K_I64, 0); spec(T_AV, 5, K_MSG, T_ARR); spec(T_AV, 6, K_MSG, T_KVL);
    spec(T_AV, 7, K_BYTES, 0); spec(T_AV, 8, K_VARINT, 0);
    spec(T_ARR, 1, K_MSG, T_AV);
    spec(T_KVL, 1, K_MSG, T_KV);
    spec(T_ENT, 1, K_STR, 0); spec(T_ENT, 2, K_STR, 0); spec(T_ENT, 3, K_STR, 0);
    spec(T_ENT, 4, K_STR, 0);
    spec(T_SS, 1, K_MSG, T_SCOPE); spec(T_SS, 2, K_MSG, T_SPAN); spec(T_SS, 3, K_STR, 0);
    spec(T_SCOPE, 1, K_STR, 0); spec(T_SCOPE, 2, K_STR, 0); spec(T_SCOPE, 3, K_MSG, T_KV);
    spec(T_SCOPE, 4, K_VARINT, 0);
    spec(T_SPAN, 1, K_BYTES, 0); spec(T_SPAN, 2, K_BYTES, 0); spec(T_SPAN, 3, K_STR, 0);
    spec(T_SPAN, 4, K_BYTES, 0); spec(T_SPAN, 5, K_STR, 0); spec(T_SPAN, 6, K_VARINT, 0);
    spec(T_SPAN, 7, K_I64, 0); spec(T_SPAN, 8, K_I64, 0); spec(T_SPAN, 9, K_MSG, T_KV);
    spec(T_SPAN, 10, K_VARINT, 0); spec(T_SPAN, 11, K_MSG, T_EVENT);
    spec(T_SPAN, 12, K_VARINT, 0); spec(T_SPAN, 13, K_MSG, T_LINK);
    spec(T_SPAN, 14, K_VARINT, 0); spec(T_SPAN, 15, K_MSG, T_STATUS); spec(T_SPAN, 16, K_I32, 0);
    spec(T_EVENT, 1, K_I64, 0); spec(T_EVENT, 2, K_STR, 0); spec(T_EVENT, 3, K_MSG, T_KV);
    spec(T_EVENT, 4, K_VARINT, 0);
    spec(T_LINK, 1, K_BYTES, 0); spec(T_LINK, 2, K_BYTES, 0); spec(T_LINK, 3, K_STR, 0);
    spec(T_LINK, 4, K_MSG, T_KV); spec(T_LINK, 5, K_VARINT, 0); spec(T_LINK, 6, K_I32, 0);
    spec(T_STATUS, 2, K_STR, 0); spec(T_STATUS, 3, K_VARINT, 0);
}

static int wire_type_of(int kind) {
    switch (kind) {
    case K_VARINT: return WT_VARINT;
    case K_I64: return WT_I64;
    case K_I32: return WT_I32;
    default: return WT_LEN;
    }
}

/* The kind of field ``f`` is in a message of ``type`` (K_NONE: unknown, skipped). */
static int kind_of(int type, const Field *f) {
    if (f->num >= MAX_FIELD) return K_NONE;
    int kind = SPEC[type][f->num].kind;
    if (kind == K_NONE || wire_type_of(kind) != f->wt) return K_NONE;
    return kind;
}

static int utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i + 8 <= n) { /* ASCII eight bytes at a time */
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; }
        else return 0;
        if (n - i <= need) return 0;
        for (size_t k = 1; k <= need; k++) {
            uint8_t d = s[i + k];
            if ((d & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (d & 0x3F);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
            || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += need + 1;
    }
    return 1;
}

static int validate(const uint8_t *p, size_t n, int type, int level);

/* A payload at least this large is validated without the GIL: the walk touches no Python
 * object (the bytes are immutable and referenced by the caller), so the receivers, the
 * materializer's glue and DuckDB's callers run meanwhile. Smaller ones are not worth
 * giving the lock away for (taking it back can wait out another thread's switch interval). */
#define RELEASE_GIL_BYTES (64 * 1024)
/* Decoding costs ~20 times more per byte than validating: a request of a few fat spans is
 * worth decoding without the GIL. */
#define DECODE_RELEASE_BYTES (16 * 1024)
#define HOLD_SPANS 16

/* validate() of a whole request, without the GIL when it is large; 0 or -1 (wire_error). */
static int validate_request(const uint8_t *p, size_t n) {
    if (n < RELEASE_GIL_BYTES) return validate(p, n, T_REQ, 0);
    gil_release();
    int rc = validate(p, n, T_REQ, 0);
    gil_hold();
    return rc;
}

static int validate(const uint8_t *p, size_t n, int type, int level) {
    if (level > MAX_LEVEL) { wire_error = "the message is nested too deeply"; return -1; }
    Rd r = {p, p + n};
    Field f;
    int got;
    while ((got = rd_field(&r, &f, level)) > 0) {
        int kind = kind_of(type, &f);
        if (kind == K_STR && !utf8_valid(f.s, f.n)) {
            wire_error = "a string field holds invalid UTF-8";
            return -1;
        }
        if (kind == K_MSG && validate(f.s, f.n, SPEC[type][f.num].type, level + 1) < 0) return -1;
    }
    return got;
}

/* ------------------------------------------------------------------ span ids */

static const char *check_span_ids(const uint8_t *tid, size_t ntid, const uint8_t *sid,
                                  size_t nsid, size_t nparent, char *scratch, size_t size) {
    static const uint8_t zeros[16];
    if (!ntid) return "trace_id is missing (or, in OTLP/JSON, not a hex string)";
    if (ntid != 16) {
        snprintf(scratch, size, "trace_id has %zu bytes, expected 16", ntid);
        return scratch;
    }
    if (!memcmp(tid, zeros, 16)) return "trace_id is all zeros";
    if (!nsid) return "span_id is missing (or, in OTLP/JSON, not a hex string)";
    if (nsid != 8) {
        snprintf(scratch, size, "span_id has %zu bytes, expected 8", nsid);
        return scratch;
    }
    if (!memcmp(sid, zeros, 8)) return "span_id is all zeros";
    if (nparent && nparent != 8) {
        snprintf(scratch, size, "parent_span_id has %zu bytes, expected 8 or none", nparent);
        return scratch;
    }
    return NULL;
}

static int add_problem(PyObject *problems, const uint8_t *name, size_t nname, Py_ssize_t r,
                       Py_ssize_t s, Py_ssize_t i, const char *problem) {
    gil_hold(); /* rare: the first few refused spans of a chunk */
    PyObject *text = PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)nname, "strict");
    if (!text) return -1;
    PyObject *line = PyUnicode_FromFormat("span %R (resource %zd, scope %zd, span %zd): %s",
                                          text, r, s, i, problem);
    Py_DECREF(text);
    if (!line) return -1;
    int rc = PyList_Append(problems, line);
    Py_DECREF(line);
    return rc;
}

/* ------------------------------------------------------------------ values */

enum { V_NONE = 0, V_STR, V_BOOL, V_INT, V_DOUBLE, V_ARRAY, V_KVLIST, V_BYTES, V_STRINDEX };

typedef struct { const uint8_t *p; size_t n; } Seg;

typedef struct {
    Seg *items;
    size_t len, cap;
    Seg inline_items[2];
} Segs;

static void segs_init(Segs *s) { s->items = s->inline_items; s->len = 0; s->cap = 2; }

static void segs_free(Segs *s) {
    if (s->items != s->inline_items) PyMem_RawFree(s->items);
    segs_init(s);
}

static int segs_add(Segs *s, const uint8_t *p, size_t n) {
    if (s->len == s->cap) {
        size_t cap = s->cap * 2;
        Seg *items = PyMem_RawMalloc(cap * sizeof(Seg));
        if (!items) { no_memory(); return -1; }
        memcpy(items, s->items, s->len * sizeof(Seg));
        if (s->items != s->inline_items) PyMem_RawFree(s->items);
        s->items = items;
        s->cap = cap;
    }
    s->items[s->len].p = p;
    s->items[s->len].n = n;
    s->len++;
    return 0;
}

/* One AnyValue as the protobuf parser leaves it after reading all its occurrences. */
typedef struct {
    int kind;
    const uint8_t *s;
    size_t n;
    uint64_t v;
    Segs parts; /* V_ARRAY / V_KVLIST: the occurrences of the member, merged */
} AV;

static int av_feed(AV *av, const uint8_t *p, size_t n) {
    Rd r = {p, p + n};
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        int kind = kind_of(T_AV, &f);
        if (kind == K_NONE) continue;
        int member = (int)f.num; /* V_* equal the field numbers */
        if (member == V_ARRAY || member == V_KVLIST) {
            if (av->kind != member) av->parts.len = 0;
            if (segs_add(&av->parts, f.s, f.n) < 0) return -1;
        } else {
            av->s = f.s;
            av->n = f.n;
            av->v = f.v;
        }
        av->kind = member;
    }
    if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    return 0;
}

/* The value of one KeyValue (every occurrence of its ``value`` field, merged). */
static int av_of_kv(AV *av, const uint8_t *kv, size_t n) {
    av->kind = V_NONE;
    segs_init(&av->parts);
    Rd r = {kv, kv + n};
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        if (f.num == 2 && f.wt == WT_LEN && av_feed(av, f.s, f.n) < 0) {
            segs_free(&av->parts);
            return -1;
        }
    }
    if (got < 0) {
        segs_free(&av->parts);
        raise_(PyExc_ValueError, wire_error);
        return -1;
    }
    return 0;
}

/* The key of one KeyValue (its last ``key`` field; "" when none). */
static int kv_key(const uint8_t *kv, size_t n, Seg *key) {
    key->p = (const uint8_t *)"";
    key->n = 0;
    Rd r = {kv, kv + n};
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        if (f.num == 1 && f.wt == WT_LEN) { key->p = f.s; key->n = f.n; }
    }
    if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    return 0;
}

typedef struct Decoder Decoder;
static int emit_value(Decoder *d, Buf *out, AV *av);

/* A list of KeyValues: keys in first-seen order, each with its last value. */
typedef struct {
    Seg key;
    Seg kv;       /* the KeyValue whose value counts (the last with this key) */
    size_t count; /* how many KeyValues had this key */
} Entry;

typedef struct {
    Entry *items;
    size_t len, cap, total;
    size_t *slots; /* open-addressing index of items by key (when large) */
    size_t nslots;
} Entries;

static uint64_t hash_key(const Seg *key) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < key->n; i++) h = (h ^ key->p[i]) * 1099511628211ULL;
    return h;
}

static void entries_free(Entries *e) {
    PyMem_RawFree(e->items);
    PyMem_RawFree(e->slots);
    memset(e, 0, sizeof(*e));
}

static int entries_rehash(Entries *e) {
    size_t nslots = 64;
    while (nslots < e->len * 4) nslots *= 2;
    size_t *slots = PyMem_RawMalloc(nslots * sizeof(size_t));
    if (!slots) { no_memory(); return -1; }
    for (size_t i = 0; i < nslots; i++) slots[i] = SIZE_MAX;
    for (size_t i = 0; i < e->len; i++) {
        size_t at = (size_t)hash_key(&e->items[i].key) & (nslots - 1);
        while (slots[at] != SIZE_MAX) at = (at + 1) & (nslots - 1);
        slots[at] = i;
    }
    PyMem_RawFree(e->slots);
    e->slots = slots;
    e->nslots = nslots;
    return 0;
}

static int entries_add(Entries *e, const uint8_t *kv, size_t n) {
    Seg key;
    if (kv_key(kv, n, &key) < 0) return -1;
    e->total++;
    size_t found = SIZE_MAX, at = 0;
    if (e->slots) {
        at = (size_t)hash_key(&key) & (e->nslots - 1);
        while (e->slots[at] != SIZE_MAX) {
            Entry *it = &e->items[e->slots[at]];
            if (it->key.n == key.n && !memcmp(it->key.p, key.p, key.n)) { found = e->slots[at]; break; }
            at = (at + 1) & (e->nslots - 1);
        }
    } else {
        for (size_t i = 0; i < e->len; i++) {
            Entry *it = &e->items[i];
            if (it->key.n == key.n && !memcmp(it->key.p, key.p, key.n)) { found = i; break; }
        }
    }
    if (found != SIZE_MAX) {
        e->items[found].kv.p = kv;
        e->items[found].kv.n = n;
        e->items[found].count++;
        return 0;
    }
    if (e->len == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        Entry *items = PyMem_RawRealloc(e->items, cap * sizeof(Entry));
        if (!items) { no_memory(); return -1; }
        e->items = items;
        e->cap = cap;
    }
    Entry *it = &e->items[e->len];
    it->key = key;
    it->kv.p = kv;
    it->kv.n = n;
    it->count = 1;
    e->len++;
    if (e->slots && e->len * 2 <= e->nslots) {
        e->slots[at] = e->len - 1;
    } else if (e->len > 16 && entries_rehash(e) < 0) {
        return -1;
    }
    return 0;
}

/* Every KeyValue in field ``num`` of the messages ``segs``. */
static int entries_collect(Entries *e, const Seg *segs, size_t nsegs, uint32_t num) {
    for (size_t k = 0; k < nsegs; k++) {
        Rd r = {segs[k].p, segs[k].p + segs[k].n};
        Field f;
        int got;
        while ((got = rd_field(&r, &f, 0)) > 0) {
            if (f.num == num && f.wt == WT_LEN && entries_add(e, f.s, f.n) < 0) return -1;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    }
    return 0;
}

static int emit_kv_value(Decoder *d, Buf *out, const Seg *kv) {
    AV av;
    if (av_of_kv(&av, kv->p, kv->n) < 0) return -1;
    int rc = emit_value(d, out, &av);
    segs_free(&av.parts);
    return rc;
}

/* The JSON object of an attribute list (attributes_to_json: a repeated key keeps its
 * place and takes its last value). */
static int emit_attributes(Decoder *d, Buf *out, const Seg *segs, size_t nsegs, uint32_t num,
                           Entries *keep) {
    Entries e;
    memset(&e, 0, sizeof(e));
    int rc = -1;
    if (entries_collect(&e, segs, nsegs, num) < 0) goto done;
    if (buf_byte(out, '{') < 0) goto done;
    for (size_t i = 0; i < e.len; i++) {
        if (i && buf_byte(out, ',') < 0) goto done;
        if (buf_json_str(out, e.items[i].key.p, e.items[i].key.n) < 0) goto done;
        if (buf_byte(out, ':') < 0) goto done;
        if (emit_kv_value(d, out, &e.items[i].kv) < 0) goto done;
    }
    if (buf_byte(out, '}') < 0) goto done;
    rc = 0;
done:
    if (keep && rc == 0) {
        *keep = e;
    } else {
        entries_free(&e);
    }
    return rc;
}

static const char *const TAGS[] = {"bytesValue", "doubleValue", "kvlistValue"};

static int is_tag(const Seg *key) {
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(TAGS[i]);
        if (key->n == n && !memcmp(key->p, TAGS[i], n)) return 1;
    }
    return 0;
}

static int emit_kvlist(Decoder *d, Buf *out, const Segs *parts) {
    Entries e;
    memset(&e, 0, sizeof(e));
    int rc = -1;
    if (entries_collect(&e, parts->items, parts->len, 1) < 0) goto done;
    int tagged = e.total != e.len || (e.len == 1 && is_tag(&e.items[0].key));
    if (!tagged) {
        if (buf_byte(out, '{') < 0) goto done;
        for (size_t i = 0; i < e.len; i++) {
            if (i && buf_byte(out, ',') < 0) goto done;
            if (buf_json_str(out, e.items[i].key.p, e.items[i].key.n) < 0) goto done;
            if (buf_byte(out, ':') < 0) goto done;
            if (emit_kv_value(d, out, &e.items[i].kv) < 0) goto done;
        }
        if (buf_byte(out, '}') < 0) goto done;
        rc = 0;
        goto done;
    }
    /* every pair in order, repeated keys included */
    if (PUTS(out, "{\"kvlistValue\":[") < 0) goto done;
    int first = 1;
    for (size_t k = 0; k < parts->len; k++) {
        Rd r = {parts->items[k].p, parts->items[k].p + parts->items[k].n};
        Field f;
        int got;
        while ((got = rd_field(&r, &f, 0)) > 0) {
            if (f.num != 1 || f.wt != WT_LEN) continue;
            Seg key, kv = {f.s, f.n};
            if (kv_key(f.s, f.n, &key) < 0) goto done;
            if (!first && buf_byte(out, ',') < 0) goto done;
            first = 0;
            if (buf_byte(out, '[') < 0 || buf_json_str(out, key.p, key.n) < 0
                || buf_byte(out, ',') < 0 || emit_kv_value(d, out, &kv) < 0
                || buf_byte(out, ']') < 0)
                goto done;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); goto done; }
    }
    if (PUTS(out, "]}") < 0) goto done;
    rc = 0;
done:
    entries_free(&e);
    return rc;
}

static int emit_array(Decoder *d, Buf *out, const Segs *parts) {
    if (buf_byte(out, '[') < 0) return -1;
    int first = 1;
    for (size_t k = 0; k < parts->len; k++) {
        Rd r = {parts->items[k].p, parts->items[k].p + parts->items[k].n};
        Field f;
        int got;
        while ((got = rd_field(&r, &f, 0)) > 0) {
            if (f.num != 1 || f.wt != WT_LEN) continue;
            if (!first && buf_byte(out, ',') < 0) return -1;
            first = 0;
            AV av;
            av.kind = V_NONE;
            segs_init(&av.parts);
            int rc = av_feed(&av, f.s, f.n);
            if (rc == 0) rc = emit_value(d, out, &av);
            segs_free(&av.parts);
            if (rc < 0) return -1;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    }
    return buf_byte(out, ']');
}

static double as_double(uint64_t v) {
    double x;
    memcpy(&x, &v, 8);
    return x;
}

enum { SLOT_OPERATION = 0, SLOT_CONVERSATION = 1, SLOT_REQUEST_MODEL = 4,
       SLOT_INPUT_TOKENS = 9, SLOT_OUTPUT_TOKENS = 10, SLOT_ERROR_TYPE = 11, NSLOTS = 12 };

enum { P_NULL = 0, P_TEXT, P_INT };

/* A promoted column's value for one row, built without Python objects. */
typedef struct {
    int state;          /* P_NULL, P_TEXT or P_INT */
    const char *p;      /* P_TEXT: the text (in the payload, ``num`` or ``own``) */
    size_t n;
    int64_t v;          /* P_INT */
    char num[48];       /* a number's text */
    Buf own;            /* text made for this value (lower case, Python's) */
} Promoted;

struct Decoder {
    PyObject_HEAD
    PyObject *payload;
    const uint8_t *base;
    size_t size;
    uint64_t received_unix_nano;
    PyObject *float_json;       /* float -> bytes (orjson.dumps) */
    PyObject *invocation_model; /* str -> str | None */
    PyObject *promoted;         /* the promoted keys (promoted_keys point into them) */
    Seg promoted_keys[64];
    uint8_t promoted_slot[64], promoted_rank[64];
    int npromoted;
    /* where the walk stands */
    Rd req;                 /* the request's remaining fields */
    int in_resource, in_scope;
    Rd rs, ss;              /* the current ResourceSpans / ScopeSpans' remaining fields */
    Py_ssize_t r_index, s_index, i_index;
    int done, first_chunk;
    int busy;               /* next_chunk runs (maybe without the GIL): no second call */
    /* the current resource's and scope's columns */
    Buf r_attrs, s_attrs;
    uint64_t r_dropped, s_dropped;
    Seg r_schema, s_schema, s_name, s_version;
    int has_r_schema, has_s_schema, has_s_name, has_s_version;
    Promoted service_name, service_version; /* the resource's service.name / .version */
    Promoted r_conversation;                /* the resource's conversation text */
    Promoted values[NSLOTS];                /* the current span's promoted columns */
};

/* ------------------------------------------------------------------ doubles
 *
 * A double's shortest round-trip digits, as Python's repr and orjson both choose them, found
 * with exact double arithmetic for the common case of at most 15 significant digits between
 * 1e-22 and 1e37 (a GenAI temperature, top_p or score): m and 10^|s| are exact doubles, so
 * one division or multiplication rounds m·10^-s correctly, as reading the text back does.
 * With at most 15 digits, two candidates of one length are further apart than the double's
 * rounding interval is wide, so the first length that reads back has exactly one candidate:
 * the one both shortest-digit algorithms print. Other doubles are formatted by Python. */

static const double POW10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

typedef struct {
    char digits[20];
    int n;    /* how many digits */
    int exp;  /* the value is d.ddd × 10^exp */
} Digits;

/* 1: ``x`` (> 0, finite) has at most 15 digits and ``out`` holds them; 0: Python must format it. */
static int short_digits(double x, Digits *out) {
    if (!(x >= 1e-22 && x < 1e37)) return 0;
    int e = (int)floor(log10(x));
    for (int s = -e - 1; s <= 15 - e; s++) {
        if (s < -22) continue;
        if (s > 22) return 0;
        double y = s >= 0 ? x * POW10[s] : x / POW10[-s];
        if (!(y < 1e15)) return 0;
        double m = floor(y + 0.5);
        if (m < 1) continue;
        double back = s >= 0 ? m / POW10[s] : m * POW10[-s];
        if (back != x) continue;
        uint64_t v = (uint64_t)m;
        while (v % 10 == 0) { v /= 10; s--; }
        char tmp[20];
        int n = 0;
        while (v) { tmp[n++] = (char)('0' + v % 10); v /= 10; }
        for (int i = 0; i < n; i++) out->digits[i] = tmp[n - 1 - i];
        out->n = n;
        out->exp = n - 1 - s;
        return 1;
    }
    return 0;
}

/* Digits laid out as orjson (sci_below, sci_exp_width 1) or Python's repr (-4, 2) does:
 * positional for sci_below <= exp < 16 (".0" after an integer), else d.ddde±X. */
static int format_digits(char *o, int negative, const Digits *g, int sci_below, int exp_width) {
    char *start = o;
    if (negative) *o++ = '-';
    int n = g->n, e = g->exp;
    if (e >= sci_below && e < 16) {
        if (e < 0) {
            *o++ = '0'; *o++ = '.';
            for (int i = 0; i < -e - 1; i++) *o++ = '0';
            memcpy(o, g->digits, (size_t)n); o += n;
        } else if (e >= n - 1) {
            memcpy(o, g->digits, (size_t)n); o += n;
            for (int i = 0; i < e - (n - 1); i++) *o++ = '0';
            *o++ = '.'; *o++ = '0';
        } else {
            memcpy(o, g->digits, (size_t)e + 1); o += e + 1;
            *o++ = '.';
            memcpy(o, g->digits + e + 1, (size_t)(n - e - 1)); o += n - e - 1;
        }
    } else {
        *o++ = g->digits[0];
        if (n > 1) { *o++ = '.'; memcpy(o, g->digits + 1, (size_t)n - 1); o += n - 1; }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        char tmp[8];
        int k = 0;
        do { tmp[k++] = (char)('0' + a % 10); a /= 10; } while (a);
        while (k < exp_width) tmp[k++] = '0';
        while (k) *o++ = tmp[--k];
    }
    return (int)(o - start);
}

/* A finite double as text in C (1, ``len`` set; at most 40 bytes), or 0 when it needs Python.
 * ``python_repr``: str(float)'s layout, else orjson.dumps'. */
static int double_text(double x, int python_repr, char *out, size_t *len) {
    int negative = signbit(x) != 0;
    double a = negative ? -x : x;
    if (a == 0) {
        *len = negative ? 4 : 3;
        memcpy(out, negative ? "-0.0" : "0.0", *len);
        return 1;
    }
    Digits g;
    if (!short_digits(a, &g)) return 0;
    *len = (size_t)format_digits(out, negative, &g, python_repr ? -4 : -5, python_repr ? 2 : 1);
    return 1;
}

/* The test hook: (orjson-style, repr-style) text of a double, None where Python formats it. */
static PyObject *format_double(PyObject *self, PyObject *arg) {
    (void)self;
    double x = PyFloat_AsDouble(arg);
    if (x == -1.0 && PyErr_Occurred()) return NULL;
    char a[48], b[48];
    size_t na, nb;
    if (!isfinite(x) || !double_text(x, 0, a, &na) || !double_text(x, 1, b, &nb))
        Py_RETURN_NONE;
    return Py_BuildValue("(s#s#)", a, (Py_ssize_t)na, b, (Py_ssize_t)nb);
}

static int emit_value(Decoder *d, Buf *out, AV *av) {
    switch (av->kind) {
    case V_STR: return buf_json_str(out, av->s, av->n);
    case V_BOOL: return av->v ? PUTS(out, "true") : PUTS(out, "false");
    case V_INT: return buf_i64(out, (int64_t)av->v);
    case V_DOUBLE: {
        double x = as_double(av->v);
        if (isnan(x)) return PUTS(out, "{\"doubleValue\":\"NaN\"}");
        if (isinf(x)) return x > 0 ? PUTS(out, "{\"doubleValue\":\"Infinity\"}")
                                   : PUTS(out, "{\"doubleValue\":\"-Infinity\"}");
        char text[48];
        size_t n;
        if (double_text(x, 0, text, &n)) return buf_put(out, text, n);
        gil_hold(); /* 16-17 digits or an extreme exponent: orjson's text, to the byte */
        PyObject *number = PyFloat_FromDouble(x);
        if (!number) return -1;
        PyObject *json = PyObject_CallOneArg(d->float_json, number);
        Py_DECREF(number);
        if (!json) return -1;
        if (!PyBytes_Check(json)) {
            Py_DECREF(json);
            raise_(PyExc_TypeError, "float_json must return bytes");
            return -1;
        }
        int rc = buf_put(out, PyBytes_AS_STRING(json), (size_t)PyBytes_GET_SIZE(json));
        Py_DECREF(json);
        return rc;
    }
    case V_ARRAY: return emit_array(d, out, &av->parts);
    case V_KVLIST: return emit_kvlist(d, out, &av->parts);
    case V_BYTES:
        if (PUTS(out, "{\"bytesValue\":\"") < 0 || buf_base64(out, av->s, av->n) < 0) return -1;
        return PUTS(out, "\"}");
    default: return PUTS(out, "null");
    }
}

/* ------------------------------------------------------------------ promoted columns */

/* Copy ``n`` bytes of Python-owned text into ``pv->own`` and point the value at it. */
static int promoted_own(Promoted *pv, const char *p, size_t n) {
    pv->own.len = 0;
    if (buf_put(&pv->own, p, n) < 0) return -1;
    pv->state = P_TEXT;
    pv->p = pv->own.data ? pv->own.data : "";
    pv->n = n;
    return 0;
}

/* promote.text of a value (NULL for maps, arrays, non-finite doubles and absent values). */
static int value_text(Promoted *pv, const AV *av) {
    pv->state = P_NULL;
    switch (av->kind) {
    case V_STR:
        pv->state = P_TEXT; pv->p = (const char *)av->s; pv->n = av->n;
        return 0;
    case V_BOOL:
        pv->state = P_TEXT; pv->p = av->v ? "true" : "false"; pv->n = av->v ? 4 : 5;
        return 0;
    case V_INT: {
        int n = snprintf(pv->num, sizeof(pv->num), "%lld", (long long)(int64_t)av->v);
        pv->state = P_TEXT; pv->p = pv->num; pv->n = (size_t)n;
        return 0;
    }
    case V_DOUBLE: {
        double x = as_double(av->v);
        if (!isfinite(x)) return 0; /* a tagged dict */
        if (double_text(x, 1, pv->num, &pv->n)) {
            pv->state = P_TEXT; pv->p = pv->num;
            return 0;
        }
        gil_hold();
        char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!text) return -1;
        int rc = promoted_own(pv, text, strlen(text));
        PyMem_Free(text);
        return rc;
    }
    default: return 0;
    }
}

/* int() of plain ASCII decimal digits with an optional sign, in C (1: done, ``*v`` set;
 * 0: out of int64 range; -1: anything else, which Python must read). */
static int ascii_integer(const uint8_t *s, size_t n, int64_t *v) {
    size_t i = 0;
    int negative = 0;
    if (n && (s[0] == '+' || s[0] == '-')) { negative = s[0] == '-'; i = 1; }
    if (i == n || n - i > 18) return -1; /* empty, or long enough to need care: Python */
    uint64_t acc = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        acc = acc * 10 + (uint64_t)(s[i] - '0');
    }
    *v = negative ? -(int64_t)acc : (int64_t)acc;
    return 1;
}

/* promote.integer of a value: an int64, or NULL. */
static int value_integer(Promoted *pv, const AV *av) {
    pv->state = P_NULL;
    switch (av->kind) {
    case V_INT:
        pv->state = P_INT; pv->v = (int64_t)av->v;
        return 0;
    case V_DOUBLE: {
        double x = as_double(av->v);
        if (!isfinite(x) || floor(x) != x) return 0;
        if (x < -9223372036854775808.0 || x >= 9223372036854775808.0) return 0;
        pv->state = P_INT; pv->v = (int64_t)x;
        return 0;
    }
    case V_STR: {
        int64_t v;
        if (ascii_integer(av->s, av->n, &v) == 1) { pv->state = P_INT; pv->v = v; return 0; }
        gil_hold(); /* int() also reads spaces, underscores and other scripts' digits */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)av->s, (Py_ssize_t)av->n, "strict");
        if (!text) return -1;
        PyObject *number = PyLong_FromUnicodeObject(text, 10);
        Py_DECREF(text);
        if (!number) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
            PyErr_Clear();
            return 0;
        }
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(number, &overflow);
        Py_DECREF(number);
        if (value == -1 && PyErr_Occurred()) return -1;
        if (!overflow) { pv->state = P_INT; pv->v = value; }
        return 0;
    }
    default: return 0;
    }
}

/* str.lower() of a promoted text (ASCII in C, the rest through Python). */
static int promoted_lower(Promoted *pv) {
    if (pv->state != P_TEXT) return 0;
    int ascii = 1, upper = 0;
    for (size_t i = 0; i < pv->n; i++) {
        unsigned char c = (unsigned char)pv->p[i];
        if (c >= 0x80) { ascii = 0; break; }
        if (c >= 'A' && c <= 'Z') upper = 1;
    }
    if (ascii) {
        if (!upper) return 0;
        if (pv->p != pv->own.data) {
            pv->own.len = 0;
            if (buf_put(&pv->own, pv->p, pv->n) < 0) return -1;
            pv->p = pv->own.data;
        }
        for (size_t i = 0; i < pv->n; i++)
            if (pv->own.data[i] >= 'A' && pv->own.data[i] <= 'Z') pv->own.data[i] += 32;
        return 0;
    }
    gil_hold();
    PyObject *u = PyUnicode_DecodeUTF8(pv->p, (Py_ssize_t)pv->n, "strict");
    if (!u) return -1;
    PyObject *low = PyObject_CallMethod(u, "lower", NULL);
    Py_DECREF(u);
    if (!low) return -1;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(low, &n);
    int rc = s ? promoted_own(pv, s, (size_t)n) : -1;
    Py_DECREF(low);
    return rc;
}

static int key_is(const Seg *key, const char *name) {
    size_t n = strlen(name);
    return key->n == n && !memcmp(key->p, name, n);
}

/* The entry with ``name`` among deduplicated attributes (NULL when absent). */
static Entry *find_entry(Entries *e, const char *name) {
    for (size_t i = 0; i < e->len; i++)
        if (key_is(&e->items[i].key, name)) return &e->items[i];
    return NULL;
}

/* Per slot, the best-ranked entry with a value that is not None (decode._promote). */
static int promote(Decoder *d, Entries *e, Seg *best_kv, int *found) {
    int rank[NSLOTS];
    for (int s = 0; s < NSLOTS; s++) { rank[s] = 1 << 20; found[s] = 0; }
    for (size_t i = 0; i < e->len; i++) {
        const Seg *key = &e->items[i].key;
        for (int k = 0; k < d->npromoted; k++) {
            if (key->n != d->promoted_keys[k].n || memcmp(key->p, d->promoted_keys[k].p, key->n))
                continue;
            int slot = d->promoted_slot[k];
            if (d->promoted_rank[k] >= rank[slot]) break;
            AV av;
            if (av_of_kv(&av, e->items[i].kv.p, e->items[i].kv.n) < 0) return -1;
            int kind = av.kind;
            segs_free(&av.parts);
            if (kind == V_NONE) break;
            rank[slot] = d->promoted_rank[k];
            best_kv[slot] = e->items[i].kv;
            found[slot] = 1;
            break;
        }
    }
    return 0;
}

/* promote.text of the value of KeyValue ``kv``. */
static int kv_text(Promoted *pv, const Seg *kv) {
    AV av;
    if (av_of_kv(&av, kv->p, kv->n) < 0) return -1;
    int rc = value_text(pv, &av);
    segs_free(&av.parts);
    return rc;
}

/* ------------------------------------------------------------------ columns */

enum { C_U64, C_U32, C_U8, C_I64, C_STR };
#define NCOLS 43
static const uint8_t COLUMN_TYPES[NCOLS] = {
    C_U64, C_U64, C_U64, C_STR, C_STR, C_STR, C_STR, C_U32, C_STR, C_U8,  /* 0-9 */
    C_U64, C_U64, C_U8, C_STR, C_STR, C_U32, C_STR, C_U32, C_STR, C_U32,  /* 10-19 */
    C_STR, C_U32, C_STR, C_STR, C_STR, C_STR, C_U32, C_STR, C_STR, C_STR, /* 20-29 */
    C_STR, C_STR, C_STR, C_STR, C_STR, C_STR, C_STR, C_STR, C_STR, C_I64, /* 30-39 */
    C_I64, C_STR, C_U64,                                                  /* 40-42 */
};
enum { COL_ATTRIBUTES = 14, COL_EVENTS = 16, COL_LINKS = 18, COL_PROMOTED = 30 };

typedef struct {
    Buf data, offsets, validity;
    Py_ssize_t rows, nulls;
} Column;

typedef struct {
    Column cols[NCOLS];
    Py_ssize_t rows;
    size_t bytes;
} Chunk;

static int col_valid(Column *c, int valid) {
    if ((c->rows & 7) == 0 && buf_byte(&c->validity, 0) < 0) return -1;
    if (valid) c->validity.data[c->rows >> 3] |= (char)(1 << (c->rows & 7));
    else c->nulls++;
    c->rows++;
    return 0;
}

static int col_offset(Column *c) {
    if (c->data.len > INT32_MAX) {
        raise_(PyExc_OverflowError, "a chunk's column exceeds 2 GiB");
        return -1;
    }
    int32_t end = (int32_t)c->data.len;
    return buf_put(&c->offsets, &end, 4);
}

static int col_str(Column *c, const void *p, size_t n) {
    if (buf_put(&c->data, p, n) < 0 || col_offset(c) < 0) return -1;
    return col_valid(c, 1);
}

static int col_null(Column *c, size_t width) {
    if (width) {
        static const char zeros[8];
        if (buf_put(&c->data, zeros, width) < 0) return -1;
    } else if (col_offset(c) < 0) {
        return -1;
    }
    return col_valid(c, 0);
}

static int col_seg_or_null(Column *c, const Seg *s, int present) {
    if (!present || !s->n) {
        if (col_offset(c) < 0) return -1;
        return col_valid(c, 0);
    }
    return col_str(c, s->p, s->n);
}

static int col_u64(Column *c, uint64_t v) {
    if (buf_put(&c->data, &v, 8) < 0) return -1;
    return col_valid(c, 1);
}

static int col_u32(Column *c, uint32_t v) {
    if (buf_put(&c->data, &v, 4) < 0) return -1;
    return col_valid(c, 1);
}

static int col_u8(Column *c, int64_t v, const char *what) {
    if (v < 0 || v > 255) {
        gil_hold();
        PyErr_Format(PyExc_OverflowError, "%s %lld does not fit the column (0-255)", what,
                     (long long)v);
        return -1;
    }
    uint8_t b = (uint8_t)v;
    if (buf_put(&c->data, &b, 1) < 0) return -1;
    return col_valid(c, 1);
}

/* A promoted value into its column: text into a string column, int64 into a BIGINT one. */
static int col_promoted(Column *c, const Promoted *pv, int integer) {
    if (integer) {
        if (pv->state != P_INT) return col_null(c, 8);
        if (buf_put(&c->data, &pv->v, 8) < 0) return -1;
        return col_valid(c, 1);
    }
    if (pv->state != P_TEXT) return col_null(c, 0);
    return col_str(c, pv->p, pv->n);
}

static void chunk_free(Chunk *ch) {
    for (int i = 0; i < NCOLS; i++) {
        buf_free(&ch->cols[i].data);
        buf_free(&ch->cols[i].offsets);
        buf_free(&ch->cols[i].validity);
    }
}

static int chunk_init(Chunk *ch) {
    memset(ch, 0, sizeof(*ch));
    for (int i = 0; i < NCOLS; i++) {
        if (COLUMN_TYPES[i] == C_STR) {
            int32_t zero = 0;
            if (buf_put(&ch->cols[i].offsets, &zero, 4) < 0) return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ Arrow C data interface
 *
 * A chunk leaves as one struct array in the Arrow C data interface (the ABI every Arrow
 * library reads), wrapped in an "arrow_array" PyCapsule: pyarrow imports the column buffers
 * as they are, without a copy and with one call for all columns, and frees them through
 * export_release (from any thread; the raw allocator needs no GIL). */

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

typedef struct {
    char *owned[NCOLS][3];         /* the buffers (validity, offsets, data), freed on release */
    const void *buffers[NCOLS][3]; /* what each child array points at */
    struct ArrowArray children[NCOLS];
    struct ArrowArray *child_list[NCOLS];
    const void *struct_buffers[1]; /* the struct array's validity: none */
} Exported;

/* The children belong to the struct array: releasing one alone only marks it released. */
static void child_release(struct ArrowArray *array) {
    array->release = NULL;
}

static void export_release(struct ArrowArray *array) {
    Exported *e = array->private_data;
    for (int i = 0; i < NCOLS; i++) {
        if (e->children[i].release) e->children[i].release(&e->children[i]);
        for (int k = 0; k < 3; k++) PyMem_RawFree(e->owned[i][k]);
    }
    PyMem_RawFree(e);
    array->release = NULL;
}

static void capsule_release(PyObject *capsule) {
    struct ArrowArray *array = PyCapsule_GetPointer(capsule, "arrow_array");
    if (!array) { PyErr_Clear(); return; }
    if (array->release) array->release(array); /* never imported */
    PyMem_RawFree(array);
}

/* The address of the ArrowArray in a capsule of next_chunk, for pyarrow's
 * RecordBatch._import_from_c(address, schema): given the schema object, pyarrow skips
 * importing a C schema (~250 µs a chunk for the 43 columns). The import moves the array out;
 * the capsule still owns (and frees) the emptied struct. */
static PyObject *array_address(PyObject *self, PyObject *capsule) {
    (void)self;
    void *array = PyCapsule_GetPointer(capsule, "arrow_array");
    if (!array) return NULL;
    return PyLong_FromVoidPtr(array);
}

/* Take ``b``'s memory for an exported buffer (``b`` is left empty); NULL: out of memory. */
static char *take(Buf *b) {
    char *data = b->data;
    size_t len = b->len;
    if (!data || b->cap > len + len / 8 + 64) {
        /* give back the doubling's slack (in place for large blocks), or make the one
           byte an empty buffer still points at */
        char *shrunk = PyMem_RawRealloc(data, len ? len : 1);
        if (!shrunk) return NULL;
        data = shrunk;
    }
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

/* The chunk's columns as an "arrow_array" capsule of a struct array (the chunk is emptied). */
static PyObject *chunk_export(Chunk *ch) {
    Exported *e = PyMem_RawCalloc(1, sizeof(Exported));
    struct ArrowArray *array = PyMem_RawCalloc(1, sizeof(struct ArrowArray));
    if (!e || !array) {
        PyMem_RawFree(e);
        PyMem_RawFree(array);
        return PyErr_NoMemory();
    }
    array->length = ch->rows;
    array->n_buffers = 1;
    array->buffers = e->struct_buffers;
    array->n_children = NCOLS;
    array->children = e->child_list;
    array->release = export_release;
    array->private_data = e;
    int failed = 0;
    for (int i = 0; i < NCOLS; i++) {
        Column *c = &ch->cols[i];
        struct ArrowArray *child = &e->children[i];
        int text = COLUMN_TYPES[i] == C_STR;
        if (c->nulls) failed |= !(e->owned[i][0] = take(&c->validity));
        if (text) failed |= !(e->owned[i][1] = take(&c->offsets));
        failed |= !(e->owned[i][2] = take(&c->data));
        e->buffers[i][0] = e->owned[i][0];
        if (text) {
            e->buffers[i][1] = e->owned[i][1];
            e->buffers[i][2] = e->owned[i][2];
        } else {
            e->buffers[i][1] = e->owned[i][2];
        }
        child->length = ch->rows;
        child->null_count = c->nulls;
        child->n_buffers = text ? 3 : 2;
        child->buffers = e->buffers[i];
        child->release = child_release;
        e->child_list[i] = child;
    }
    PyObject *capsule = failed ? NULL : PyCapsule_New(array, "arrow_array", capsule_release);
    if (!capsule) {
        export_release(array);
        PyMem_RawFree(array);
        return failed ? PyErr_NoMemory() : NULL;
    }
    return capsule;
}

/* ------------------------------------------------------------------ the decoder */

static PyTypeObject DecoderType;

static void decoder_dealloc(Decoder *d) {
    Py_XDECREF(d->payload);
    Py_XDECREF(d->float_json);
    Py_XDECREF(d->invocation_model);
    Py_XDECREF(d->promoted);
    buf_free(&d->service_name.own);
    buf_free(&d->service_version.own);
    buf_free(&d->r_conversation.own);
    for (int slot = 0; slot < NSLOTS; slot++) buf_free(&d->values[slot].own);
    buf_free(&d->r_attrs);
    buf_free(&d->s_attrs);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static int decoder_init(Decoder *d, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"payload", "received_unix_nano", "promoted", "float_json",
                             "invocation_model", NULL};
    PyObject *payload, *promoted, *float_json, *invocation_model;
    unsigned long long received;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "SKOOO", kwlist, &payload, &received,
                                     &promoted, &float_json, &invocation_model))
        return -1;
    if (d->busy) {
        raise_(PyExc_RuntimeError, "the decoder is in use by another thread");
        return -1;
    }
    if (d->payload) {
        /* its read positions and promoted keys point into what it was given: a decoder
           decodes one request (a failed second __init__ would leave them dangling) */
        raise_(PyExc_RuntimeError, "a TraceDecoder decodes one request: make a new one");
        return -1;
    }
    if (!PyTuple_Check(promoted) || PyTuple_GET_SIZE(promoted) != NSLOTS) {
        raise_(PyExc_ValueError, "promoted must be a tuple of 12 tuples of keys");
        return -1;
    }
    Py_INCREF(payload);
    Py_XSETREF(d->payload, payload);
    Py_INCREF(float_json);
    Py_XSETREF(d->float_json, float_json);
    Py_INCREF(invocation_model);
    Py_XSETREF(d->invocation_model, invocation_model);
    d->npromoted = 0;
    for (int slot = 0; slot < NSLOTS; slot++) {
        PyObject *keys = PyTuple_GET_ITEM(promoted, slot);
        if (!PyTuple_Check(keys)) {
            raise_(PyExc_ValueError, "promoted must be a tuple of tuples");
            return -1;
        }
        for (Py_ssize_t rank = 0; rank < PyTuple_GET_SIZE(keys); rank++) {
            Py_ssize_t n;
            const char *key = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(keys, rank), &n);
            if (!key) return -1;
            if (d->npromoted == 64) {
                raise_(PyExc_ValueError, "too many promoted keys");
                return -1;
            }
            /* the str object owns the UTF-8 and lives as long as the tuple: keep both */
            d->promoted_keys[d->npromoted].p = (const uint8_t *)key;
            d->promoted_keys[d->npromoted].n = (size_t)n;
            d->promoted_slot[d->npromoted] = (uint8_t)slot;
            d->promoted_rank[d->npromoted] = (uint8_t)rank;
            d->npromoted++;
        }
    }
    /* the keys point into the strs of ``promoted``: hold it */
    Py_INCREF(promoted);
    Py_XSETREF(d->promoted, promoted);
    d->base = (const uint8_t *)PyBytes_AS_STRING(payload);
    d->size = (size_t)PyBytes_GET_SIZE(payload);
    if (validate_request(d->base, d->size) < 0) {
        raise_(PyExc_ValueError, wire_error);
        return -1;
    }
    d->received_unix_nano = received;
    d->req.p = d->base;
    d->req.end = d->base + d->size;
    d->in_resource = d->in_scope = 0;
    d->r_index = d->s_index = d->i_index = -1;
    d->done = 0;
    d->first_chunk = 1;
    d->service_name.state = d->service_version.state = d->r_conversation.state = P_NULL;
    return 0;
}

#define WIRE_FAIL() do { raise_(PyExc_ValueError, wire_error); goto fail; } while (0)

/* Read the resource-level columns of the ResourceSpans ``d->rs`` (all its fields but the
 * scopes, which are walked afterwards). */
static int start_resource(Decoder *d) {
    Segs res;
    segs_init(&res);
    Entries attrs;
    memset(&attrs, 0, sizeof(attrs));
    d->has_r_schema = 0;
    Rd r = d->rs;
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        if (f.num == 1 && f.wt == WT_LEN && segs_add(&res, f.s, f.n) < 0) goto fail;
        if (f.num == 3 && f.wt == WT_LEN) { d->r_schema.p = f.s; d->r_schema.n = f.n; d->has_r_schema = 1; }
    }
    if (got < 0) WIRE_FAIL();
    d->r_dropped = 0;
    for (size_t k = 0; k < res.len; k++) {
        Rd rr = {res.items[k].p, res.items[k].p + res.items[k].n};
        while ((got = rd_field(&rr, &f, 0)) > 0)
            if (f.num == 2 && f.wt == WT_VARINT) d->r_dropped = (uint32_t)f.v;
        if (got < 0) WIRE_FAIL();
    }
    d->r_attrs.len = 0;
    if (emit_attributes(d, &d->r_attrs, res.items, res.len, 1, &attrs) < 0) goto fail;
    Entry *e;
    d->service_name.state = d->service_version.state = d->r_conversation.state = P_NULL;
    if ((e = find_entry(&attrs, "service.name")) && kv_text(&d->service_name, &e->kv) < 0)
        goto fail;
    if ((e = find_entry(&attrs, "service.version")) && kv_text(&d->service_version, &e->kv) < 0)
        goto fail;
    Seg best[NSLOTS];
    int found[NSLOTS];
    if (promote(d, &attrs, best, found) < 0) goto fail;
    if (found[SLOT_CONVERSATION] && kv_text(&d->r_conversation, &best[SLOT_CONVERSATION]) < 0)
        goto fail;
    entries_free(&attrs);
    segs_free(&res);
    return 0;
fail:
    entries_free(&attrs);
    segs_free(&res);
    return -1;
}

static int start_scope(Decoder *d) {
    Segs scope;
    segs_init(&scope);
    d->has_s_schema = d->has_s_name = d->has_s_version = 0;
    Rd r = d->ss;
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        if (f.num == 1 && f.wt == WT_LEN && segs_add(&scope, f.s, f.n) < 0) goto fail;
        if (f.num == 3 && f.wt == WT_LEN) { d->s_schema.p = f.s; d->s_schema.n = f.n; d->has_s_schema = 1; }
    }
    if (got < 0) WIRE_FAIL();
    d->s_dropped = 0;
    for (size_t k = 0; k < scope.len; k++) {
        Rd rr = {scope.items[k].p, scope.items[k].p + scope.items[k].n};
        while ((got = rd_field(&rr, &f, 0)) > 0) {
            if (f.num == 1 && f.wt == WT_LEN) { d->s_name.p = f.s; d->s_name.n = f.n; d->has_s_name = 1; }
            if (f.num == 2 && f.wt == WT_LEN) { d->s_version.p = f.s; d->s_version.n = f.n; d->has_s_version = 1; }
            if (f.num == 4 && f.wt == WT_VARINT) d->s_dropped = (uint32_t)f.v;
        }
        if (got < 0) WIRE_FAIL();
    }
    d->s_attrs.len = 0;
    if (emit_attributes(d, &d->s_attrs, scope.items, scope.len, 3, NULL) < 0) goto fail;
    segs_free(&scope);
    return 0;
fail:
    segs_free(&scope);
    return -1;
}

typedef struct {
    Seg self, tid, sid, parent, state, name;
    uint64_t flags, kind, start, end, dropped_attrs, dropped_events, dropped_links;
    Segs events, links, status;
} SpanParts;

static int read_span(SpanParts *sp, const uint8_t *p, size_t n) {
    memset(sp, 0, sizeof(*sp));
    segs_init(&sp->events); segs_init(&sp->links); segs_init(&sp->status);
    static const uint8_t empty[1] = {0};
    sp->tid.p = sp->sid.p = sp->parent.p = sp->state.p = sp->name.p = empty;
    sp->self.p = p;
    sp->self.n = n;
    Rd r = {p, p + n};
    Field f;
    int got;
    while ((got = rd_field(&r, &f, 0)) > 0) {
        int kind = kind_of(T_SPAN, &f);
        if (kind == K_NONE) continue;
        Seg s = {f.s, f.n};
        switch (f.num) {
        case 1: sp->tid = s; break;
        case 2: sp->sid = s; break;
        case 3: sp->state = s; break;
        case 4: sp->parent = s; break;
        case 5: sp->name = s; break;
        case 6: sp->kind = f.v; break;
        case 7: sp->start = f.v; break;
        case 8: sp->end = f.v; break;
        case 10: sp->dropped_attrs = f.v; break;
        case 11: if (segs_add(&sp->events, f.s, f.n) < 0) return -1; break;
        case 12: sp->dropped_events = f.v; break;
        case 13: if (segs_add(&sp->links, f.s, f.n) < 0) return -1; break;
        case 14: sp->dropped_links = f.v; break;
        case 15: if (segs_add(&sp->status, f.s, f.n) < 0) return -1; break;
        case 16: sp->flags = f.v; break;
        }
    }
    if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    return 0;
}

static void span_free(SpanParts *sp) {
    segs_free(&sp->events); segs_free(&sp->links); segs_free(&sp->status);
}

/* The status code of a span: its status occurrences merged (the last code wins). */
static int status_parts(const SpanParts *sp, uint64_t *code, Seg *message) {
    *code = 0;
    message->p = (const uint8_t *)"";
    message->n = 0;
    for (size_t k = 0; k < sp->status.len; k++) {
        Rd r = {sp->status.items[k].p, sp->status.items[k].p + sp->status.items[k].n};
        Field f;
        int got;
        while ((got = rd_field(&r, &f, 0)) > 0) {
            int kind = kind_of(T_STATUS, &f);
            if (kind == K_NONE) continue;
            if (f.num == 2) { message->p = f.s; message->n = f.n; }
            else *code = f.v;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
    }
    return 0;
}

/* Why a span cannot be stored (NULL: it can): its ids, or a kind or status code the
 * UTINYINT columns cannot hold (collector/checks.py check_span's rule, word for word). */
static const char *check_span(const SpanParts *sp, char *scratch, size_t size) {
    const char *problem = check_span_ids(sp->tid.p, sp->tid.n, sp->sid.p, sp->sid.n,
                                         sp->parent.n, scratch, size);
    if (problem) return problem;
    int64_t kind = (int64_t)(int32_t)sp->kind;
    if (kind < 0 || kind > 255) {
        snprintf(scratch, size, "kind %lld is outside 0-255 (OTLP SpanKind is 0-5)",
                 (long long)kind);
        return scratch;
    }
    uint64_t code = 0;
    Seg message;
    if (status_parts(sp, &code, &message) < 0) {
        PyErr_Clear();  /* a malformed status: validate() or emit_span reports it */
        return NULL;
    }
    int64_t status = (int64_t)(int32_t)code;
    if (status < 0 || status > 255) {
        snprintf(scratch, size,
                 "status.code %lld is outside 0-255 (OTLP StatusCode is 0-2)", (long long)status);
        return scratch;
    }
    return NULL;
}

static uint64_t be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

/* The events column; *exception_kv is set to the exception.type of the first "exception"
 * event that has one (decode._trace_chunks' rule). */
static int emit_events(Decoder *d, Buf *out, SpanParts *sp, Seg *exception_kv, int *has_exception) {
    if (buf_byte(out, '[') < 0) return -1;
    for (size_t k = 0; k < sp->events.len; k++) {
        Rd r = {sp->events.items[k].p, sp->events.items[k].p + sp->events.items[k].n};
        Field f;
        int got;
        uint64_t time = 0, dropped = 0;
        Seg name = {(const uint8_t *)"", 0}, self = sp->events.items[k];
        while ((got = rd_field(&r, &f, 0)) > 0) {
            int kind = kind_of(T_EVENT, &f);
            if (kind == K_NONE) continue;
            if (f.num == 1) time = f.v;
            else if (f.num == 2) { name.p = f.s; name.n = f.n; }
            else if (f.num == 4) dropped = (uint32_t)f.v;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
        if (k && buf_byte(out, ',') < 0) return -1;
        if (PUTS(out, "{\"time_unix_nano\":") < 0 || buf_u64(out, time) < 0
            || PUTS(out, ",\"name\":") < 0 || buf_json_str(out, name.p, name.n) < 0
            || PUTS(out, ",\"attributes\":") < 0)
            return -1;
        Entries attrs;
        memset(&attrs, 0, sizeof(attrs));
        int want = !*has_exception && key_is(&name, "exception");
        if (emit_attributes(d, out, &self, 1, 3, want ? &attrs : NULL) < 0) return -1;
        if (want) {
            Entry *e = find_entry(&attrs, "exception.type");
            if (e) {
                AV av;
                if (av_of_kv(&av, e->kv.p, e->kv.n) < 0) { entries_free(&attrs); return -1; }
                if (av.kind != V_NONE) { *exception_kv = e->kv; *has_exception = 1; }
                segs_free(&av.parts);
            }
            entries_free(&attrs);
        }
        if (PUTS(out, ",\"dropped_attributes_count\":") < 0 || buf_u64(out, dropped) < 0
            || buf_byte(out, '}') < 0)
            return -1;
    }
    return buf_byte(out, ']');
}

static int emit_links(Decoder *d, Buf *out, SpanParts *sp) {
    if (buf_byte(out, '[') < 0) return -1;
    for (size_t k = 0; k < sp->links.len; k++) {
        Rd r = {sp->links.items[k].p, sp->links.items[k].p + sp->links.items[k].n};
        Field f;
        int got;
        uint64_t flags = 0, dropped = 0;
        Seg tid = {(const uint8_t *)"", 0}, sid = tid, state = tid, self = sp->links.items[k];
        while ((got = rd_field(&r, &f, 0)) > 0) {
            int kind = kind_of(T_LINK, &f);
            if (kind == K_NONE) continue;
            if (f.num == 1) { tid.p = f.s; tid.n = f.n; }
            else if (f.num == 2) { sid.p = f.s; sid.n = f.n; }
            else if (f.num == 3) { state.p = f.s; state.n = f.n; }
            else if (f.num == 5) dropped = (uint32_t)f.v;
            else if (f.num == 6) flags = (uint32_t)f.v;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
        if (k && buf_byte(out, ',') < 0) return -1;
        if (PUTS(out, "{\"trace_id\":\"") < 0 || buf_hex(out, tid.p, tid.n) < 0
            || PUTS(out, "\",\"span_id\":\"") < 0 || buf_hex(out, sid.p, sid.n) < 0
            || PUTS(out, "\",\"trace_state\":") < 0 || buf_json_str(out, state.p, state.n) < 0
            || PUTS(out, ",\"attributes\":") < 0
            || emit_attributes(d, out, &self, 1, 4, NULL) < 0
            || PUTS(out, ",\"dropped_attributes_count\":") < 0 || buf_u64(out, dropped) < 0
            || PUTS(out, ",\"flags\":") < 0 || buf_u64(out, flags) < 0
            || buf_byte(out, '}') < 0)
            return -1;
    }
    return buf_byte(out, ']');
}

static int append_json_col(Column *c, Buf *tmp) {
    return col_str(c, tmp->data ? tmp->data : "", tmp->len);
}

/* One valid span → one row of every column. */
static int emit_span(Decoder *d, Chunk *ch, SpanParts *sp, Buf *tmp) {
    Column *c = ch->cols;
    size_t before = 0;
    for (int i = 0; i < NCOLS; i++) before += c[i].data.len;
    if (col_u64(&c[0], be64(sp->tid.p)) < 0 || col_u64(&c[1], be64(sp->tid.p + 8)) < 0
        || col_u64(&c[2], be64(sp->sid.p)) < 0)
        return -1;
    tmp->len = 0;
    if (buf_hex(tmp, sp->tid.p, 16) < 0 || col_str(&c[3], tmp->data, tmp->len) < 0) return -1;
    tmp->len = 0;
    if (buf_hex(tmp, sp->sid.p, 8) < 0 || col_str(&c[4], tmp->data, tmp->len) < 0) return -1;
    static const uint8_t zero8[8];
    if (sp->parent.n && memcmp(sp->parent.p, zero8, 8)) {
        tmp->len = 0;
        if (buf_hex(tmp, sp->parent.p, 8) < 0 || col_str(&c[5], tmp->data, tmp->len) < 0) return -1;
    } else if (col_seg_or_null(&c[5], &sp->parent, 0) < 0) {
        return -1;
    }
    if (col_seg_or_null(&c[6], &sp->state, 1) < 0) return -1;
    if (col_u32(&c[7], (uint32_t)sp->flags) < 0) return -1;
    if (col_str(&c[8], sp->name.p, sp->name.n) < 0) return -1;
    if (col_u8(&c[9], (int64_t)(int32_t)sp->kind, "span kind") < 0) return -1;
    if (col_u64(&c[10], sp->start) < 0 || col_u64(&c[11], sp->end) < 0) return -1;
    /* status: its occurrences merged */
    uint64_t code = 0;
    Seg message;
    if (status_parts(sp, &code, &message) < 0) return -1;
    if (col_u8(&c[12], (int64_t)(int32_t)code, "status code") < 0) return -1;
    if (col_seg_or_null(&c[13], &message, 1) < 0) return -1;
    /* attributes, keeping the deduplicated entries for the promoted columns */
    Entries attrs;
    memset(&attrs, 0, sizeof(attrs));
    tmp->len = 0;
    if (emit_attributes(d, tmp, &sp->self, 1, 9, &attrs) < 0) return -1;
    int rc = -1;
    if (append_json_col(&c[COL_ATTRIBUTES], tmp) < 0) goto done;
    if (col_u32(&c[15], (uint32_t)sp->dropped_attrs) < 0) goto done;
    Seg exception_kv = {NULL, 0};
    int has_exception = 0;
    tmp->len = 0;
    if (emit_events(d, tmp, sp, &exception_kv, &has_exception) < 0
        || append_json_col(&c[COL_EVENTS], tmp) < 0)
        goto done;
    if (col_u32(&c[17], (uint32_t)sp->dropped_events) < 0) goto done;
    tmp->len = 0;
    if (emit_links(d, tmp, sp) < 0 || append_json_col(&c[COL_LINKS], tmp) < 0) goto done;
    if (col_u32(&c[19], (uint32_t)sp->dropped_links) < 0) goto done;
    if (append_json_col(&c[20], &d->r_attrs) < 0 || col_u32(&c[21], (uint32_t)d->r_dropped) < 0
        || col_seg_or_null(&c[22], &d->r_schema, d->has_r_schema) < 0
        || col_seg_or_null(&c[23], &d->s_name, d->has_s_name) < 0
        || col_seg_or_null(&c[24], &d->s_version, d->has_s_version) < 0
        || append_json_col(&c[25], &d->s_attrs) < 0 || col_u32(&c[26], (uint32_t)d->s_dropped) < 0
        || col_seg_or_null(&c[27], &d->s_schema, d->has_s_schema) < 0
        || col_promoted(&c[28], &d->service_name, 0) < 0
        || col_promoted(&c[29], &d->service_version, 0) < 0)
        goto done;
    /* promoted columns (promote.promoted_row) */
    Seg best[NSLOTS];
    int found[NSLOTS];
    if (promote(d, &attrs, best, found) < 0) goto done;
    const Promoted *use[NSLOTS];
    for (int slot = 0; slot < NSLOTS; slot++) {
        Promoted *pv = &d->values[slot];
        pv->state = P_NULL;
        use[slot] = pv;
        if (found[slot]) {
            AV av;
            if (av_of_kv(&av, best[slot].p, best[slot].n) < 0) goto done;
            int tokens = slot == SLOT_INPUT_TOKENS || slot == SLOT_OUTPUT_TOKENS;
            int got = tokens ? value_integer(pv, &av) : value_text(pv, &av);
            segs_free(&av.parts);
            if (got < 0) goto done;
        } else if (slot == SLOT_CONVERSATION) {
            use[slot] = &d->r_conversation;
        } else if (slot == SLOT_ERROR_TYPE && has_exception) {
            if (kv_text(pv, &exception_kv) < 0) goto done;
        } else if (slot == SLOT_REQUEST_MODEL && find_entry(&attrs, "llm.invocation_parameters")) {
            Entry *e = find_entry(&attrs, "llm.invocation_parameters");
            AV av;
            if (av_of_kv(&av, e->kv.p, e->kv.n) < 0) goto done;
            int got = 0;
            if (av.kind == V_STR) {
                gil_hold(); /* the model inside OpenInference's JSON: orjson reads it */
                PyObject *text = PyUnicode_DecodeUTF8((const char *)av.s, (Py_ssize_t)av.n, "strict");
                PyObject *model = text ? PyObject_CallOneArg(d->invocation_model, text) : NULL;
                Py_XDECREF(text);
                if (!model) {
                    got = -1;
                } else if (model != Py_None) {
                    Py_ssize_t n;
                    const char *utf8 = PyUnicode_AsUTF8AndSize(model, &n);
                    got = utf8 ? promoted_own(pv, utf8, (size_t)n) : -1;
                }
                Py_XDECREF(model);
            }
            segs_free(&av.parts);
            if (got < 0) goto done;
        }
    }
    if (promoted_lower(&d->values[SLOT_OPERATION]) < 0) goto done;
    for (int slot = 0; slot < NSLOTS; slot++) {
        int tokens = slot == SLOT_INPUT_TOKENS || slot == SLOT_OUTPUT_TOKENS;
        if (col_promoted(&c[COL_PROMOTED + slot], use[slot], tokens) < 0) goto done;
    }
    if (col_u64(&c[42], d->received_unix_nano) < 0) goto done;
    size_t after = 0;
    for (int i = 0; i < NCOLS; i++) after += c[i].data.len;
    ch->bytes += after - before;
    ch->rows++;
    rc = 0;
done:
    entries_free(&attrs);
    return rc;
}

/* Advance to the next span; 1: ``span`` holds it, 0: the request is done, -1: error. */
static int next_span(Decoder *d, Seg *span) {
    Field f;
    int got;
    for (;;) {
        if (d->in_scope) {
            while ((got = rd_field(&d->ss, &f, 0)) > 0) {
                if (f.num == 2 && f.wt == WT_LEN) {
                    d->i_index++;
                    span->p = f.s;
                    span->n = f.n;
                    return 1;
                }
            }
            if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
            d->in_scope = 0;
        }
        if (d->in_resource) {
            while ((got = rd_field(&d->rs, &f, 0)) > 0) {
                if (f.num == 2 && f.wt == WT_LEN) break;
            }
            if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
            if (got > 0) {
                d->s_index++;
                d->i_index = -1;
                d->ss.p = f.s;
                d->ss.end = f.s + f.n;
                if (start_scope(d) < 0) return -1;
                d->in_scope = 1;
                continue;
            }
            d->in_resource = 0;
        }
        while ((got = rd_field(&d->req, &f, 0)) > 0) {
            if (f.num == 1 && f.wt == WT_LEN) break;
        }
        if (got < 0) { raise_(PyExc_ValueError, wire_error); return -1; }
        if (got == 0) return 0;
        d->r_index++;
        d->s_index = -1;
        d->rs.p = f.s;
        d->rs.end = f.s + f.n;
        if (start_resource(d) < 0) return -1;
        d->in_resource = 1;
    }
}

static PyObject *decoder_next_chunk(Decoder *d, PyObject *args) {
    Py_ssize_t max_rows, max_bytes;
    if (!PyArg_ParseTuple(args, "nn", &max_rows, &max_bytes)) return NULL;
    if (d->payload == NULL) {
        raise_(PyExc_RuntimeError, "the decoder was not initialised");
        return NULL;
    }
    if (d->busy) {
        raise_(PyExc_RuntimeError, "the decoder is in use by another thread");
        return NULL;
    }
    Chunk ch;
    Buf tmp = {0};
    PyObject *problems = PyList_New(0);
    PyObject *result = NULL;
    if (!problems) return NULL;
    d->busy = 1;
    int release = d->size >= DECODE_RELEASE_BYTES;
    Py_ssize_t received = 0, rejected = 0, explained = 0;
    char scratch[96];
    if (release) gil_release();
    if (chunk_init(&ch) < 0) goto done;
    int holding = 0; /* spans left to run with the GIL taken back */
    while (!d->done && ch.rows < max_rows && (Py_ssize_t)ch.bytes < max_bytes) {
        if (release && !released) {
            /* the last span needed Python: keep the GIL for the next HOLD_SPANS spans, so
               a request full of rare values takes it back once per HOLD_SPANS spans, not
               once per span (each time may wait for another thread's switch interval) */
            if (holding == 0) holding = HOLD_SPANS;
            else if (--holding == 0) gil_release();
        }
        Seg span;
        int got = next_span(d, &span);
        if (got < 0) goto done;
        if (got == 0) { d->done = 1; break; }
        SpanParts sp;
        if (read_span(&sp, span.p, span.n) < 0) { span_free(&sp); goto done; }
        received++;
        const char *problem = check_span(&sp, scratch, sizeof(scratch));
        int rc = 0;
        if (problem) {
            rejected++;
            if (explained++ < MAX_EXPLAINED)
                rc = add_problem(problems, sp.name.p, sp.name.n, d->r_index, d->s_index,
                                 d->i_index, problem);
        } else {
            rc = emit_span(d, &ch, &sp, &tmp);
        }
        span_free(&sp);
        if (rc < 0) goto done;
    }
    gil_hold();
    {
        PyObject *columns = chunk_export(&ch);
        if (!columns) goto done;
        Py_ssize_t payload_bytes = d->first_chunk ? (Py_ssize_t)d->size : 0;
        d->first_chunk = 0;
        result = Py_BuildValue("(OnNnnNn)", d->done ? Py_True : Py_False, ch.rows, columns,
                               received, rejected, problems, payload_bytes);
        problems = NULL;
    }
done:
    gil_hold();
    d->busy = 0;
    Py_XDECREF(problems);
    chunk_free(&ch);
    buf_free(&tmp);
    return result;
}

static PyMethodDef decoder_methods[] = {
    {"next_chunk", (PyCFunction)decoder_next_chunk, METH_VARARGS,
     "next_chunk(max_rows, max_bytes) -> (done, rows, columns, received, rejected, problems, "
     "payload_bytes)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "collector._fastdecode.TraceDecoder",
    .tp_basicsize = sizeof(Decoder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Decodes one ExportTraceServiceRequest chunk by chunk.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)decoder_init,
    .tp_dealloc = (destructor)decoder_dealloc,
    .tp_methods = decoder_methods,
};

/* ------------------------------------------------------------------ check */

static PyObject *check_traces(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *base = view.buf;
    size_t size = (size_t)view.len;
    PyObject *problems = PyList_New(0);
    if (!problems) goto fail;
    /* the bytes cannot move while the view is held; the walk needs no Python */
    int release = size >= RELEASE_GIL_BYTES;
    if (release) gil_release();
    if (validate(base, size, T_REQ, 0) < 0) {
        raise_(PyExc_ValueError, wire_error);
        goto fail;
    }
    Py_ssize_t received = 0, rejected = 0, r_index = -1, explained = 0;
    char scratch[96];
    Rd req = {base, base + size};
    Field f, g, h;
    while (rd_field(&req, &f, 0) > 0) {
        if (f.num != 1 || f.wt != WT_LEN) continue;
        r_index++;
        Py_ssize_t s_index = -1;
        Rd rs = {f.s, f.s + f.n};
        while (rd_field(&rs, &g, 0) > 0) {
            if (g.num != 2 || g.wt != WT_LEN) continue;
            s_index++;
            Py_ssize_t i_index = -1;
            Rd ss = {g.s, g.s + g.n};
            while (rd_field(&ss, &h, 0) > 0) {
                if (h.num != 2 || h.wt != WT_LEN) continue;
                i_index++;
                received++;
                if (release) gil_release(); /* again, after explaining a refused span */
                SpanParts sp;
                if (read_span(&sp, h.s, h.n) < 0) { span_free(&sp); goto fail; }
                const char *problem = check_span(&sp, scratch, sizeof(scratch));
                int rc = 0;
                if (problem) {
                    rejected++;
                    if (explained++ < MAX_EXPLAINED)
                        rc = add_problem(problems, sp.name.p, sp.name.n, r_index, s_index,
                                         i_index, problem);
                }
                span_free(&sp);
                if (rc < 0) goto fail;
            }
        }
    }
    gil_hold();
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnN)", received, rejected, problems);
fail:
    gil_hold();
    Py_XDECREF(problems);
    PyBuffer_Release(&view);
    return NULL;
}

#ifdef FASTDECODE_GIL_STATS
static PyObject *released_cpu_ns(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    return PyLong_FromUnsignedLongLong(released_ns);
}
#endif

static PyMethodDef module_methods[] = {
    {"check_traces", check_traces, METH_O,
     "check_traces(payload) -> (received, rejected, problems); ValueError when malformed"},
#ifdef FASTDECODE_GIL_STATS
    {"released_cpu_ns", released_cpu_ns, METH_NOARGS,
     "released_cpu_ns() -> this thread's CPU ns spent without the GIL (measuring build)"},
#endif
    {"array_address", array_address, METH_O,
     "array_address(columns) -> the address of the ArrowArray in a next_chunk capsule"},
    {"format_double", format_double, METH_O,
     "format_double(x) -> (orjson text, repr text) made in C, or None where Python makes it "
     "(for the tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastdecode",
    "Compiled OTLP trace decoder (see collector/native.py).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

#define FASTDECODE_INTERFACE 2

PyMODINIT_FUNC PyInit__fastdecode(void) {
    init_specs();
    if (PyType_Ready(&DecoderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&DecoderType);
    if (PyModule_AddObject(m, "TraceDecoder", (PyObject *)&DecoderType) < 0) {
        Py_DECREF(&DecoderType);
        Py_DECREF(m);
        return NULL;
    }
    /* what collector/native.py expects (INTERFACE there): a build of an older source is
       not used (a stale .so after an update without `pip install -e .`) */
    if (PyModule_AddIntConstant(m, "INTERFACE", FASTDECODE_INTERFACE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
