/* entry.c — the disk-cache entry format:
 * "PTXJITC\0", u32 format version, u32 field count, the 32-character key; then seven fields,
 * each a u64 length and its bytes: family, params, compile options, ptx, cubin, log, entries
 * (u32 count, then count NUL-terminated names); then the XXH3-128 of every byte before it
 * (low, high half).
 * Host byte order: a cache belongs to one machine (or to machines of one architecture). */
#include <stdlib.h>
#include <string.h>

#include "cache/entry.h"

#define MAGIC "PTXJITC" /* 8 bytes with its NUL */
#define HEADER_SIZE (8 + 4 + 4 + 32)
#define CHECKSUM_SIZE 16
#define HEX "0123456789abcdef"

enum {
    FIELD_FAMILY, FIELD_PARAMS, FIELD_OPTIONS, FIELD_PTX, FIELD_CUBIN, FIELD_LOG, FIELD_ENTRIES,
    FIELD_COUNT
};

const char pj_entry_older_format[] = "written by an older cache format";

typedef struct {
    const char *data;
    uint64_t size;
} span;

int pj_entry_key_valid(const char *key)
{
    return key && strlen(key) == 32 && strspn(key, HEX) == 32;
}

int pj_entry_storable(const pj_artifact *a)
{
    if (!a || a->entry_count < 1 || !a->entries || (a->cubin_size && !a->cubin))
        return 0;
    for (int i = 0; i < a->entry_count; i++)
        if (!a->entries[i] || !a->entries[i][0])
            return 0;
    return 1;
}

/* ---- encoding ---- */

static void put_field(pj_strbuf *sb, const void *data, uint64_t size)
{
    pj_sb_append_n(sb, (const char *)&size, sizeof size);
    if (size)
        pj_sb_append_n(sb, data, (size_t)size);
}

static void put_text(pj_strbuf *sb, const char *text)
{
    put_field(sb, text, text ? strlen(text) : 0);
}

char *pj_entry_encode(size_t *size, const char *key, const pj_artifact *a)
{
    pj_strbuf sb, names;
    pj_sb_init(&sb);
    pj_sb_init(&names);
    uint32_t version = PJ_ENTRY_FORMAT_VERSION, fields = FIELD_COUNT;
    uint32_t count = (uint32_t)a->entry_count;
    pj_sb_append_n(&sb, MAGIC, 8);
    pj_sb_append_n(&sb, (const char *)&version, 4);
    pj_sb_append_n(&sb, (const char *)&fields, 4);
    pj_sb_append_n(&sb, key, 32);
    put_text(&sb, a->family);
    put_text(&sb, a->params);
    put_text(&sb, a->options);
    put_text(&sb, a->ptx);
    put_field(&sb, a->cubin, a->cubin_size);
    put_text(&sb, a->log);
    pj_sb_append_n(&names, (const char *)&count, 4);
    for (int i = 0; i < a->entry_count; i++)
        pj_sb_append_n(&names, a->entries[i], strlen(a->entries[i]) + 1);
    put_field(&sb, names.data, names.length);
    sb.failed |= names.failed;
    pj_sb_free(&names);
    pj_hash128 sum = sb.failed ? (pj_hash128){0, 0} : pj_hash(sb.data, sb.length);
    pj_sb_append_n(&sb, (const char *)&sum.low, 8);
    pj_sb_append_n(&sb, (const char *)&sum.high, 8);
    *size = sb.length;
    return pj_sb_take(&sb);
}

/* ---- decoding: every check before any allocation ---- */

/* Header and checksum; NULL or why the bytes are not this key's entry. */
static const char *check_frame(const char *data, size_t size, const char *key)
{
    if (size < HEADER_SIZE + CHECKSUM_SIZE)
        return "truncated";
    if (size > PJ_ENTRY_MAX_BYTES)
        return "impossibly large";
    if (memcmp(data, MAGIC, 8) != 0)
        return "not a ptxjit cache entry";
    uint32_t version, fields;
    memcpy(&version, data + 8, 4);
    memcpy(&fields, data + 12, 4);
    if (version < PJ_ENTRY_FORMAT_VERSION)
        return pj_entry_older_format;
    if (version != PJ_ENTRY_FORMAT_VERSION || fields != FIELD_COUNT)
        return "written by another cache format version";
    pj_hash128 want = pj_hash(data, size - CHECKSUM_SIZE), got;
    memcpy(&got.low, data + size - CHECKSUM_SIZE, 8);
    memcpy(&got.high, data + size - 8, 8);
    if (want.low != got.low || want.high != got.high)
        return "checksum mismatch";
    if (memcmp(data + 16, key, 32) != 0)
        return "holds another key";
    return NULL;
}

/* Splits [at, end) into the length-prefixed fields, which must fill it exactly. */
static const char *split_fields(span fields[FIELD_COUNT], const char *at, const char *end)
{
    for (int i = 0; i < FIELD_COUNT; i++) {
        uint64_t length;
        if ((size_t)(end - at) < sizeof length)
            return "truncated field";
        memcpy(&length, at, sizeof length);
        at += sizeof length;
        if (length > (uint64_t)(end - at))
            return "a field runs past the end";
        fields[i] = (span){at, length};
        at += length;
    }
    return at == end ? NULL : "trailing bytes";
}

/* The entries field: u32 count > 0, then exactly count non-empty NUL-terminated names. */
static const char *check_entries(span names, uint32_t *count)
{
    if (names.size < 4)
        return "no entry list";
    memcpy(count, names.data, 4);
    const char *at = names.data + 4, *end = names.data + names.size;
    uint32_t seen = 0;
    for (; at < end; seen++) {
        const char *nul = memchr(at, '\0', (size_t)(end - at));
        if (!nul)
            return "an unterminated entry name";
        if (nul == at)
            return "an empty entry name";
        at = nul + 1;
    }
    return *count == 0 || seen != *count ? "a wrong entry count" : NULL;
}

/* NULL if data is a whole, intact entry for key; fields and count then describe it. */
static const char *verify(span fields[FIELD_COUNT], uint32_t *count, const char *data,
                          size_t size, const char *key)
{
    const char *why = check_frame(data, size, key);
    if (!why)
        why = split_fields(fields, data + HEADER_SIZE, data + size - CHECKSUM_SIZE);
    if (why)
        return why;
    static const int texts[] = {FIELD_FAMILY, FIELD_PARAMS, FIELD_OPTIONS, FIELD_PTX, FIELD_LOG};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(texts); i++)
        if (memchr(fields[texts[i]].data, '\0', (size_t)fields[texts[i]].size))
            return "a NUL inside a text field";
    return check_entries(fields[FIELD_ENTRIES], count);
}

/* Copies verified fields into a; on failure a is left empty. */
static ptxjit_status copy_out(pj_artifact *a, const span f[FIELD_COUNT], uint32_t count)
{
    a->family = pj_strndup(f[FIELD_FAMILY].data, (size_t)f[FIELD_FAMILY].size);
    a->params = pj_strndup(f[FIELD_PARAMS].data, (size_t)f[FIELD_PARAMS].size);
    a->options = pj_strndup(f[FIELD_OPTIONS].data, (size_t)f[FIELD_OPTIONS].size);
    a->ptx = pj_strndup(f[FIELD_PTX].data, (size_t)f[FIELD_PTX].size);
    a->log = pj_strndup(f[FIELD_LOG].data, (size_t)f[FIELD_LOG].size);
    a->cubin_size = (size_t)f[FIELD_CUBIN].size;
    a->cubin = malloc(a->cubin_size ? a->cubin_size : 1);
    if (a->cubin && a->cubin_size)
        memcpy(a->cubin, f[FIELD_CUBIN].data, a->cubin_size);
    a->entries = calloc(count, sizeof *a->entries);
    int ok = a->family && a->params && a->options && a->ptx && a->log && a->cubin && a->entries;
    if (a->entries)
        a->entry_count = (int)count;
    const char *name = f[FIELD_ENTRIES].data + 4;
    for (uint32_t i = 0; ok && i < count; i++, name += strlen(name) + 1)
        ok = (a->entries[i] = pj_strdup(name)) != NULL;
    if (ok)
        return PTXJIT_OK;
    pj_artifact_free(a);
    return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading a cache entry");
}

/* *why for a failed verification: the error to return. */
static ptxjit_status refused(const char *why, const char *key)
{
    if (why == pj_entry_older_format)
        return pj_error(PTXJIT_ERR_CACHE, "cache entry %.32s was %s: a miss", key, why);
    return pj_error(PTXJIT_ERR_CACHE, "cache entry %.32s is corrupt: %s", key ? key : "", why);
}

ptxjit_status pj_entry_decode(pj_artifact *out, const char **why, const char *data, size_t size,
                           const char *key)
{
    memset(out, 0, sizeof *out);
    span fields[FIELD_COUNT];
    uint32_t count = 0;
    *why = pj_entry_key_valid(key) ? verify(fields, &count, data, size, key) : "an invalid key";
    if (*why)
        return refused(*why, key);
    return copy_out(out, fields, count);
}

/* Moves the fields from the cubin on (cubin, log, entries; the checksum, already checked,
 * goes along) up to the next 16-byte boundary, which the caller's slack leaves room for. */
static void align_cubin(span f[FIELD_COUNT], char *data, size_t size)
{
    char *cubin = (char *)f[FIELD_CUBIN].data;
    size_t pad = (16 - (uintptr_t)cubin % 16) % 16;
    if (!pad)
        return;
    memmove(cubin + pad, cubin, (size_t)(data + size - cubin));
    for (int i = FIELD_CUBIN; i < FIELD_COUNT; i++)
        f[i].data += pad;
}

/* Points a at the verified fields of data (which it takes). Each text field is followed by
 * the next field's length, already read, so its first byte can become the text's NUL. */
static ptxjit_status point_into(pj_artifact *a, span f[FIELD_COUNT], uint32_t count, char *data,
                                size_t size)
{
    if (!(a->entries = calloc(count, sizeof *a->entries)))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading a cache entry");
    align_cubin(f, data, size);
    static const int texts[] = {FIELD_FAMILY, FIELD_PARAMS, FIELD_OPTIONS, FIELD_PTX, FIELD_LOG};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(texts); i++)
        ((char *)f[texts[i]].data)[f[texts[i]].size] = '\0';
    a->storage = data;
    a->family = (char *)f[FIELD_FAMILY].data;
    a->params = (char *)f[FIELD_PARAMS].data;
    a->options = (char *)f[FIELD_OPTIONS].data;
    a->ptx = (char *)f[FIELD_PTX].data;
    a->log = (char *)f[FIELD_LOG].data;
    a->cubin = (uint8_t *)f[FIELD_CUBIN].data;
    a->cubin_size = (size_t)f[FIELD_CUBIN].size;
    a->entry_count = (int)count;
    char *name = (char *)f[FIELD_ENTRIES].data + 4;
    for (uint32_t i = 0; i < count; i++, name += strlen(name) + 1)
        a->entries[i] = name;
    return PTXJIT_OK;
}

ptxjit_status pj_entry_decode_in_place(pj_artifact *out, const char **why, char *data,
                                       size_t size, const char *key)
{
    memset(out, 0, sizeof *out);
    span fields[FIELD_COUNT];
    uint32_t count = 0;
    *why = pj_entry_key_valid(key) ? verify(fields, &count, data, size, key) : "an invalid key";
    if (*why)
        return refused(*why, key);
    return point_into(out, fields, count, data, size);
}
