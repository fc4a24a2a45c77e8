/* cubin_params.c — reads an entry's parameter records out of a cubin (an ELF of SASS). The
 * `.nv.info.NAME` section is a list of attributes, each a format byte, an attribute byte and
 * either a 2-byte value (formats 1 to 3) or a 2-byte length and that many bytes (format 4,
 * EIFMT_SVAL). EIATTR_KPARAM_INFO (0x17): u32 index, u16 ordinal, u16 offset, u32 whose bits
 * 18 to 31 are the size; EIATTR_PARAM_CBANK (0x0a): u32 symbol, u16 offset of the parameters
 * in their bank, u16 their size. Every length is checked before it is trusted: the bytes come
 * from the disk cache as well. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cubin_params.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

enum { EIFMT_SVAL = 4, EIATTR_PARAM_CBANK = 0x0a, EIATTR_KPARAM_INFO = 0x17 };

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

/* The bytes of the section called section, or NULL when the cubin has none (or is no CUDA
 * ELF, or the section lies outside it). */
static const unsigned char *find_section(size_t *length, const unsigned char *base,
                                         size_t bytes, const char *section)
{
    Elf64_Ehdr header;
    if (bytes < sizeof header)
        return NULL;
    memcpy(&header, base, sizeof header);
    if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_machine != EM_CUDA ||
        header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum ||
        header.e_shoff > bytes || (bytes - header.e_shoff) / sizeof(Elf64_Shdr) < header.e_shnum)
        return NULL;
    Elf64_Shdr names;
    memcpy(&names, base + header.e_shoff + header.e_shstrndx * sizeof names, sizeof names);
    if (names.sh_offset > bytes || names.sh_size > bytes - names.sh_offset)
        return NULL;
    const size_t want = strlen(section) + 1; /* with its NUL */
    for (size_t i = 0; i < header.e_shnum; i++) {
        Elf64_Shdr s;
        memcpy(&s, base + header.e_shoff + i * sizeof s, sizeof s);
        if (s.sh_name >= names.sh_size || names.sh_size - s.sh_name < want ||
            memcmp(base + names.sh_offset + s.sh_name, section, want) != 0)
            continue;
        if (s.sh_type == SHT_NOBITS || s.sh_offset > bytes || s.sh_size > bytes - s.sh_offset)
            return NULL;
        *length = s.sh_size;
        return base + s.sh_offset;
    }
    return NULL;
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

/* The attributes of one .nv.info.NAME section. */
static ptxjit_status read_attributes(pj_cubin_param_list *out, const unsigned char *data,
                                     size_t length, const char *name)
{
    for (size_t at = 0; at + 4 <= length;) {
        const unsigned format = data[at], attribute = data[at + 1];
        if (format == 0)
            break; /* padding at the end */
        if (format != EIFMT_SVAL) {
            at += 4;
            continue;
        }
        const size_t size = le16(data + at + 2);
        const unsigned char *value = data + at + 4;
        if (size > length - at - 4)
            return unreadable(out, name, "an attribute runs past its section");
        if (attribute == EIATTR_KPARAM_INFO) {
            size_t param_size = size >= 12 ? le32(value + 8) >> 18 & 0x3fff : 0;
            ptxjit_status status =
                record(out, le16(value + 4), le16(value + 6), param_size, name);
            if (status != PTXJIT_OK)
                return status;
        } else if (attribute == EIATTR_PARAM_CBANK && size >= 8) {
            out->bank_offset = le16(value + 4);
            out->has_bank = 1;
        }
        at += 4 + size;
    }
    for (int i = 0; i < out->count; i++)
        if (!out->params[i].size)
            return unreadable(out, name, "a parameter has no record");
    return PTXJIT_OK;
}

ptxjit_status pj_cubin_entry_params(pj_cubin_param_list *out, const void *cubin, size_t size,
                                    const char *name)
{
    memset(out, 0, sizeof *out);
    pj_strbuf section;
    pj_sb_init(&section);
    pj_sb_appendf(&section, ".nv.info.%s", name);
    if (!section.data)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    size_t length = 0;
    const unsigned char *data = cubin ? find_section(&length, cubin, size, section.data) : NULL;
    pj_sb_free(&section);
    if (!data)
        return unreadable(out, name, "the cubin is no CUDA ELF or has no .nv.info section for it");
    return read_attributes(out, data, length, name);
}

void pj_cubin_param_list_free(pj_cubin_param_list *entry)
{
    if (!entry)
        return;
    free(entry->params);
    entry->params = NULL;
    entry->count = 0;
}
