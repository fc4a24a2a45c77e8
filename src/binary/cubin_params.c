/* cubin_params.c — reads an entry's parameter records out of a cubin (an ELF of SASS). The
 * `.nv.info.NAME` section is a list of attributes, each a format byte, an attribute byte and
 * either a 2-byte value (formats 1 to 3) or a 2-byte length and that many bytes (format 4,
 * EIFMT_SVAL). EIATTR_KPARAM_INFO (0x17): u32 index, u16 ordinal, u16 offset, u32 whose bits
 * 18 to 31 are the size; EIATTR_PARAM_CBANK (0x0a): u32 symbol, u16 offset of the parameters
 * in their bank, u16 their size. cubin.c walks the section (every offset and length checked
 * before it is followed: the bytes come from the disk cache as well); this file reads the two
 * records. */
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "cubin_params.h"

enum { EIATTR_PARAM_CBANK = 0x0a, EIATTR_KPARAM_INFO = 0x17 };

static size_t le16(const unsigned char *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8;
}

static size_t le32(const unsigned char *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static ptxjit_status unreadable(pj_cubin_param_list *out, const char *name, const char *why)
{
    pj_cubin_param_list_free(out);
    return pj_error(PTXJIT_ERR_UNSUPPORTED, "the cubin's parameter records of entry %s: %s",
                    name, why);
}

/* Records parameter ordinal at offset with size. Unrecorded slots have size 0 (no parameter
 * is empty). */
static ptxjit_status record(pj_cubin_param_list *out, size_t ordinal, size_t offset, size_t size,
                            const char *name)
{
    if (ordinal >= (size_t)out->count) {
        pj_cubin_param *grown = realloc(out->params, (ordinal + 1) * sizeof *grown);
        if (!grown) {
            pj_cubin_param_list_free(out);
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        memset(grown + out->count, 0, (ordinal + 1 - (size_t)out->count) * sizeof *grown);
        out->params = grown;
        out->count = (int)ordinal + 1;
    }
    if (!size || out->params[ordinal].size)
        return unreadable(out, name, "a parameter record is empty or repeated");
    out->params[ordinal] = (pj_cubin_param){offset, size};
    return PTXJIT_OK;
}

typedef struct {
    pj_cubin_param_list *list;
    const char *name;
    ptxjit_status status;
} walk;

/* One record of the entry's section: a parameter's, or where the parameters start. */
static int take_record(void *user, const pj_nv_record *r)
{
    walk *w = user;
    if (r->format != PJ_EIFMT_SVAL)
        return 0;
    if (r->attribute == EIATTR_KPARAM_INFO) {
        size_t size = r->value >= 12 ? le32(r->payload + 8) >> 18 & 0x3fff : 0;
        w->status = r->value >= 8 ? record(w->list, le16(r->payload + 4), le16(r->payload + 6),
                                           size, w->name)
                                  : unreadable(w->list, w->name, "a parameter record is cut");
        return w->status != PTXJIT_OK;
    }
    if (r->attribute == EIATTR_PARAM_CBANK && r->value >= 8) {
        w->list->bank_offset = le16(r->payload + 4);
        w->list->has_bank = 1;
    }
    return 0;
}

ptxjit_status pj_cubin_entry_params(pj_cubin_param_list *out, const void *cubin, size_t size,
                                    const char *name)
{
    memset(out, 0, sizeof *out);
    walk w = {out, name, PTXJIT_OK};
    const char *wrong = pj_cubin_entry_records(cubin, size, name, take_record, &w);
    if (wrong)
        return unreadable(out, name, wrong);
    if (w.status != PTXJIT_OK)
        return w.status;
    for (int i = 0; i < out->count; i++)
        if (!out->params[i].size)
            return unreadable(out, name, "a parameter has no record");
    return PTXJIT_OK;
}

void pj_cubin_param_list_free(pj_cubin_param_list *entry)
{
    if (!entry)
        return;
    free(entry->params);
    entry->params = NULL;
    entry->count = 0;
}
