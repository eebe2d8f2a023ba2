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
 *       problems), the columns in collector.decode.SPAN_SCHEMA's order, each as
 *       (validity bytes | None, offsets bytes | None, data bytes, null_count).
 *
 * The rows are the ones collector/decode.py's pure-Python path builds (the property test
 * tests/collector/test_fastdecode.py compares both): attribute maps as JSON text with the
 * typed-value rules of collector/values.py, the same promoted columns. Doubles are written
 * by the ``float_json`` callable (orjson.dumps) so the text is orjson's to the byte; the
 * rare cases that need Python semantics (str.lower of non-ASCII text, int() of a token
 * count given as a string, the JSON inside llm.invocation_parameters) call Python.
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

#define MAX_LEVEL 100 /* deepest message the protobuf parser accepts (the request is 0) */
#define MAX_EXPLAINED 10

/* ------------------------------------------------------------------ buffers */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (!data) { PyErr_NoMemory(); return -1; }
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
    PyMem_Free(b->data);
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

static int rd_varint(Rd *r, uint64_t *out) {
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

static int skip_group(Rd *r, uint32_t number, int level);

/* Read one field. 1: read, 0: end of message, -1: malformed (wire_error says why). */
static int rd_field(Rd *r, Field *f, int level) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (rd_varint(r, &key) < 0) return -1;
    if (key > 0xFFFFFFFFu) { wire_error = "a field key is out of range"; return -1; }
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    if (f->num == 0) { wire_error = "a field has number 0"; return -1; }
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

/* validate() of a whole request, without the GIL when it is large; 0 or -1 (wire_error). */
static int validate_request(const uint8_t *p, size_t n) {
    int rc;
    if (n < RELEASE_GIL_BYTES) return validate(p, n, T_REQ, 0);
    Py_BEGIN_ALLOW_THREADS
    rc = validate(p, n, T_REQ, 0);
    Py_END_ALLOW_THREADS
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
    if (s->items != s->inline_items) PyMem_Free(s->items);
    segs_init(s);
}

static int segs_add(Segs *s, const uint8_t *p, size_t n) {
    if (s->len == s->cap) {
        size_t cap = s->cap * 2;
        Seg *items = PyMem_Malloc(cap * sizeof(Seg));
        if (!items) { PyErr_NoMemory(); return -1; }
        memcpy(items, s->items, s->len * sizeof(Seg));
        if (s->items != s->inline_items) PyMem_Free(s->items);
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
    if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        PyErr_SetString(PyExc_ValueError, wire_error);
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
    if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
    PyMem_Free(e->items);
    PyMem_Free(e->slots);
    memset(e, 0, sizeof(*e));
}

static int entries_rehash(Entries *e) {
    size_t nslots = 64;
    while (nslots < e->len * 4) nslots *= 2;
    size_t *slots = PyMem_Malloc(nslots * sizeof(size_t));
    if (!slots) { PyErr_NoMemory(); return -1; }
    for (size_t i = 0; i < nslots; i++) slots[i] = SIZE_MAX;
    for (size_t i = 0; i < e->len; i++) {
        size_t at = (size_t)hash_key(&e->items[i].key) & (nslots - 1);
        while (slots[at] != SIZE_MAX) at = (at + 1) & (nslots - 1);
        slots[at] = i;
    }
    PyMem_Free(e->slots);
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
        Entry *items = PyMem_Realloc(e->items, cap * sizeof(Entry));
        if (!items) { PyErr_NoMemory(); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); goto done; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
    }
    return buf_byte(out, ']');
}

static double as_double(uint64_t v) {
    double x;
    memcpy(&x, &v, 8);
    return x;
}

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
    /* the current resource's and scope's columns */
    Buf r_attrs, s_attrs;
    uint64_t r_dropped, s_dropped;
    Seg r_schema, s_schema, s_name, s_version;
    int has_r_schema, has_s_schema, has_s_name, has_s_version;
    PyObject *service_name, *service_version; /* bytes or None */
    PyObject *r_conversation;                 /* bytes or None: resource's conversation text */
};

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
        PyObject *number = PyFloat_FromDouble(x);
        if (!number) return -1;
        PyObject *text = PyObject_CallOneArg(d->float_json, number);
        Py_DECREF(number);
        if (!text) return -1;
        if (!PyBytes_Check(text)) {
            Py_DECREF(text);
            PyErr_SetString(PyExc_TypeError, "float_json must return bytes");
            return -1;
        }
        int rc = buf_put(out, PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text));
        Py_DECREF(text);
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

enum { SLOT_OPERATION = 0, SLOT_CONVERSATION = 1, SLOT_REQUEST_MODEL = 4,
       SLOT_INPUT_TOKENS = 9, SLOT_OUTPUT_TOKENS = 10, SLOT_ERROR_TYPE = 11, NSLOTS = 12 };

/* decode._text of a value: bytes, or None (dicts, lists and empty values have no text). */
static PyObject *value_text(AV *av) {
    switch (av->kind) {
    case V_STR: return PyBytes_FromStringAndSize((const char *)av->s, (Py_ssize_t)av->n);
    case V_BOOL: return av->v ? PyBytes_FromString("true") : PyBytes_FromString("false");
    case V_INT: {
        char text[24];
        int n = snprintf(text, sizeof(text), "%lld", (long long)(int64_t)av->v);
        return PyBytes_FromStringAndSize(text, n);
    }
    case V_DOUBLE: {
        double x = as_double(av->v);
        if (!isfinite(x)) Py_RETURN_NONE; /* a tagged dict */
        char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!text) return NULL;
        PyObject *result = PyBytes_FromString(text);
        PyMem_Free(text);
        return result;
    }
    default: Py_RETURN_NONE;
    }
}

/* decode._integer of a value: a Python int within int64, or None. */
static PyObject *value_integer(AV *av) {
    PyObject *number = NULL;
    switch (av->kind) {
    case V_INT: return PyLong_FromLongLong((long long)(int64_t)av->v);
    case V_DOUBLE: {
        double x = as_double(av->v);
        if (!isfinite(x) || floor(x) != x) Py_RETURN_NONE;
        if (x < -9223372036854775808.0 || x >= 9223372036854775808.0) Py_RETURN_NONE;
        return PyLong_FromLongLong((long long)x);
    }
    case V_STR: {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)av->s, (Py_ssize_t)av->n, "strict");
        if (!text) return NULL;
        number = PyLong_FromUnicodeObject(text, 10);
        Py_DECREF(text);
        if (!number) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        int overflow = 0;
        (void)PyLong_AsLongLongAndOverflow(number, &overflow);
        if (overflow) { Py_DECREF(number); Py_RETURN_NONE; }
        return number;
    }
    default: Py_RETURN_NONE;
    }
}

/* str.lower() of UTF-8 text given as bytes (ASCII in C, the rest through Python). */
static PyObject *lower_text(PyObject *text) {
    const char *s = PyBytes_AS_STRING(text);
    Py_ssize_t n = PyBytes_GET_SIZE(text);
    int ascii = 1, upper = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] >= 0x80) { ascii = 0; break; }
        if (s[i] >= 'A' && s[i] <= 'Z') upper = 1;
    }
    if (ascii) {
        if (!upper) { Py_INCREF(text); return text; }
        PyObject *out = PyBytes_FromStringAndSize(s, n);
        if (!out) return NULL;
        char *o = PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < n; i++)
            if (o[i] >= 'A' && o[i] <= 'Z') o[i] = (char)(o[i] + 32);
        return out;
    }
    PyObject *u = PyUnicode_DecodeUTF8(s, n, "strict");
    if (!u) return NULL;
    PyObject *low = PyObject_CallMethod(u, "lower", NULL);
    Py_DECREF(u);
    if (!low) return NULL;
    PyObject *out = PyUnicode_AsUTF8String(low);
    Py_DECREF(low);
    return out;
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

/* The text (bytes or None) of the value of KeyValue ``kv``. */
static PyObject *kv_text(const Seg *kv) {
    AV av;
    if (av_of_kv(&av, kv->p, kv->n) < 0) return NULL;
    PyObject *text = value_text(&av);
    segs_free(&av.parts);
    return text;
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
        PyErr_SetString(PyExc_OverflowError, "a chunk's column exceeds 2 GiB");
        return -1;
    }
    int32_t end = (int32_t)c->data.len;
    return buf_put(&c->offsets, &end, 4);
}

static int col_str(Column *c, const void *p, size_t n) {
    if (buf_put(&c->data, p, n) < 0 || col_offset(c) < 0) return -1;
    return col_valid(c, 1);
}

static int col_str_or_null(Column *c, PyObject *bytes_or_none) {
    if (bytes_or_none == Py_None) {
        if (col_offset(c) < 0) return -1;
        return col_valid(c, 0);
    }
    return col_str(c, PyBytes_AS_STRING(bytes_or_none), (size_t)PyBytes_GET_SIZE(bytes_or_none));
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
        PyErr_Format(PyExc_OverflowError, "%s %lld does not fit the column (0-255)", what,
                     (long long)v);
        return -1;
    }
    uint8_t b = (uint8_t)v;
    if (buf_put(&c->data, &b, 1) < 0) return -1;
    return col_valid(c, 1);
}

static int col_i64_or_null(Column *c, PyObject *int_or_none) {
    int64_t v = 0;
    if (int_or_none != Py_None) {
        v = PyLong_AsLongLong(int_or_none);
        if (v == -1 && PyErr_Occurred()) return -1;
    }
    if (buf_put(&c->data, &v, 8) < 0) return -1;
    return col_valid(c, int_or_none != Py_None);
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

static PyObject *bytes_of(Buf *b) {
    return PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
}

static PyObject *chunk_columns(Chunk *ch) {
    PyObject *list = PyList_New(NCOLS);
    if (!list) return NULL;
    for (int i = 0; i < NCOLS; i++) {
        Column *c = &ch->cols[i];
        PyObject *validity = c->nulls ? bytes_of(&c->validity) : (Py_INCREF(Py_None), Py_None);
        PyObject *offsets = COLUMN_TYPES[i] == C_STR ? bytes_of(&c->offsets)
                                                      : (Py_INCREF(Py_None), Py_None);
        PyObject *data = bytes_of(&c->data);
        /* the buffers are copied out: free them now, so peak memory is one copy more
           than one column, not one chunk more */
        buf_free(&c->data);
        buf_free(&c->offsets);
        buf_free(&c->validity);
        PyObject *item = (validity && offsets && data)
            ? Py_BuildValue("(NNNn)", validity, offsets, data, c->nulls) : NULL;
        if (!item) {
            Py_XDECREF(validity); Py_XDECREF(offsets); Py_XDECREF(data);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

/* ------------------------------------------------------------------ the decoder */

static PyTypeObject DecoderType;

static void decoder_dealloc(Decoder *d) {
    Py_XDECREF(d->payload);
    Py_XDECREF(d->float_json);
    Py_XDECREF(d->invocation_model);
    Py_XDECREF(d->promoted);
    Py_XDECREF(d->service_name);
    Py_XDECREF(d->service_version);
    Py_XDECREF(d->r_conversation);
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
    if (!PyTuple_Check(promoted) || PyTuple_GET_SIZE(promoted) != NSLOTS) {
        PyErr_SetString(PyExc_ValueError, "promoted must be a tuple of 12 tuples of keys");
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
            PyErr_SetString(PyExc_ValueError, "promoted must be a tuple of tuples");
            return -1;
        }
        for (Py_ssize_t rank = 0; rank < PyTuple_GET_SIZE(keys); rank++) {
            Py_ssize_t n;
            const char *key = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(keys, rank), &n);
            if (!key) return -1;
            if (d->npromoted == 64) {
                PyErr_SetString(PyExc_ValueError, "too many promoted keys");
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
        PyErr_SetString(PyExc_ValueError, wire_error);
        return -1;
    }
    d->received_unix_nano = received;
    d->req.p = d->base;
    d->req.end = d->base + d->size;
    d->in_resource = d->in_scope = 0;
    d->r_index = d->s_index = d->i_index = -1;
    d->done = 0;
    d->first_chunk = 1;
    Py_INCREF(Py_None); Py_XSETREF(d->service_name, Py_None);
    Py_INCREF(Py_None); Py_XSETREF(d->service_version, Py_None);
    Py_INCREF(Py_None); Py_XSETREF(d->r_conversation, Py_None);
    return 0;
}

#define WIRE_FAIL() do { PyErr_SetString(PyExc_ValueError, wire_error); goto fail; } while (0)

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
    PyObject *text;
    text = (e = find_entry(&attrs, "service.name")) ? kv_text(&e->kv) : (Py_INCREF(Py_None), Py_None);
    if (!text) goto fail;
    Py_XSETREF(d->service_name, text);
    text = (e = find_entry(&attrs, "service.version")) ? kv_text(&e->kv) : (Py_INCREF(Py_None), Py_None);
    if (!text) goto fail;
    Py_XSETREF(d->service_version, text);
    Seg best[NSLOTS];
    int found[NSLOTS];
    if (promote(d, &attrs, best, found) < 0) goto fail;
    text = found[SLOT_CONVERSATION] ? kv_text(&best[SLOT_CONVERSATION]) : (Py_INCREF(Py_None), Py_None);
    if (!text) goto fail;
    Py_XSETREF(d->r_conversation, text);
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
    if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
    PyObject *values[NSLOTS] = {NULL};
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
        || col_str_or_null(&c[28], d->service_name) < 0
        || col_str_or_null(&c[29], d->service_version) < 0)
        goto done;
    /* promoted columns (decode._promoted_row) */
    Seg best[NSLOTS];
    int found[NSLOTS];
    if (promote(d, &attrs, best, found) < 0) goto done;
    for (int slot = 0; slot < NSLOTS; slot++) {
        if (found[slot]) {
            AV av;
            if (av_of_kv(&av, best[slot].p, best[slot].n) < 0) goto done;
            int tokens = slot == SLOT_INPUT_TOKENS || slot == SLOT_OUTPUT_TOKENS;
            values[slot] = tokens ? value_integer(&av) : value_text(&av);
            segs_free(&av.parts);
        } else if (slot == SLOT_CONVERSATION) {
            values[slot] = d->r_conversation;
            Py_INCREF(values[slot]);
        } else if (slot == SLOT_ERROR_TYPE && has_exception) {
            values[slot] = kv_text(&exception_kv);
        } else if (slot == SLOT_REQUEST_MODEL && find_entry(&attrs, "llm.invocation_parameters")) {
            Entry *e = find_entry(&attrs, "llm.invocation_parameters");
            AV av;
            if (av_of_kv(&av, e->kv.p, e->kv.n) < 0) goto done;
            if (av.kind == V_STR) {
                PyObject *text = PyUnicode_DecodeUTF8((const char *)av.s, (Py_ssize_t)av.n, "strict");
                PyObject *model = text ? PyObject_CallOneArg(d->invocation_model, text) : NULL;
                Py_XDECREF(text);
                if (model && model != Py_None) {
                    values[slot] = PyUnicode_AsUTF8String(model);
                    Py_DECREF(model);
                } else {
                    values[slot] = model;
                }
            } else {
                values[slot] = Py_None;
                Py_INCREF(Py_None);
            }
            segs_free(&av.parts);
        } else {
            values[slot] = Py_None;
            Py_INCREF(Py_None);
        }
        if (!values[slot]) goto done;
    }
    if (values[SLOT_OPERATION] != Py_None) {
        PyObject *low = lower_text(values[SLOT_OPERATION]);
        if (!low) goto done;
        Py_SETREF(values[SLOT_OPERATION], low);
    }
    for (int slot = 0; slot < NSLOTS; slot++) {
        Column *col = &c[COL_PROMOTED + slot];
        int tokens = slot == SLOT_INPUT_TOKENS || slot == SLOT_OUTPUT_TOKENS;
        if ((tokens ? col_i64_or_null(col, values[slot]) : col_str_or_null(col, values[slot])) < 0)
            goto done;
    }
    if (col_u64(&c[42], d->received_unix_nano) < 0) goto done;
    size_t after = 0;
    for (int i = 0; i < NCOLS; i++) after += c[i].data.len;
    ch->bytes += after - before;
    ch->rows++;
    rc = 0;
done:
    for (int slot = 0; slot < NSLOTS; slot++) Py_XDECREF(values[slot]);
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
            if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
            d->in_scope = 0;
        }
        if (d->in_resource) {
            while ((got = rd_field(&d->rs, &f, 0)) > 0) {
                if (f.num == 2 && f.wt == WT_LEN) break;
            }
            if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        if (got < 0) { PyErr_SetString(PyExc_ValueError, wire_error); return -1; }
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
        PyErr_SetString(PyExc_RuntimeError, "the decoder was not initialised");
        return NULL;
    }
    Chunk ch;
    Buf tmp = {0};
    PyObject *problems = PyList_New(0);
    PyObject *result = NULL;
    if (!problems) return NULL;
    if (chunk_init(&ch) < 0) goto done;
    Py_ssize_t received = 0, rejected = 0;
    char scratch[96];
    while (!d->done && ch.rows < max_rows && (Py_ssize_t)ch.bytes < max_bytes) {
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
            if (PyList_GET_SIZE(problems) < MAX_EXPLAINED)
                rc = add_problem(problems, sp.name.p, sp.name.n, d->r_index, d->s_index,
                                 d->i_index, problem);
        } else {
            rc = emit_span(d, &ch, &sp, &tmp);
        }
        span_free(&sp);
        if (rc < 0) goto done;
    }
    {
        PyObject *columns = chunk_columns(&ch);
        if (!columns) goto done;
        Py_ssize_t payload_bytes = d->first_chunk ? (Py_ssize_t)d->size : 0;
        d->first_chunk = 0;
        result = Py_BuildValue("(OnNnnNn)", d->done ? Py_True : Py_False, ch.rows, columns,
                               received, rejected, problems, payload_bytes);
        problems = NULL;
    }
done:
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
    PyObject *problems = NULL;
    if (validate_request(base, size) < 0) {
        PyErr_SetString(PyExc_ValueError, wire_error);
        goto fail;
    }
    problems = PyList_New(0);
    if (!problems) goto fail;
    Py_ssize_t received = 0, rejected = 0, r_index = -1;
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
                SpanParts sp;
                if (read_span(&sp, h.s, h.n) < 0) { span_free(&sp); goto fail; }
                const char *problem = check_span(&sp, scratch, sizeof(scratch));
                int rc = 0;
                if (problem) {
                    rejected++;
                    if (PyList_GET_SIZE(problems) < MAX_EXPLAINED)
                        rc = add_problem(problems, sp.name.p, sp.name.n, r_index, s_index,
                                         i_index, problem);
                }
                span_free(&sp);
                if (rc < 0) goto fail;
            }
        }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnN)", received, rejected, problems);
fail:
    Py_XDECREF(problems);
    PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"check_traces", check_traces, METH_O,
     "check_traces(payload) -> (received, rejected, problems); ValueError when malformed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastdecode",
    "Compiled OTLP trace decoder (see collector/native.py).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

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
    return m;
}
