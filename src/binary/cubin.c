/* cubin.c — a CUDA ELF read without a GPU: whether it holds SASS, and per entry what ptxas
 * recorded about it (.nv.info attributes and section sizes). Every offset and length in the
 * file is checked before it is followed, so a truncated or corrupt cubin is an error, never
 * a read outside the bytes given. */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "cubin.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif
/* st_other of a kernel entry's symbol (a __global__ function, not a device function). */
#define STO_CUDA_ENTRY 0x10

/* .nv.info records (cubin.h). The attribute numbers as ptxas, cuobjdump -elf and nvdisasm
 * name them, and as public cubin readers and writers agree (e.g. CuAssembler's table): */
enum { EIFMT_NVAL = PJ_EIFMT_NVAL, EIFMT_BVAL = PJ_EIFMT_BVAL, EIFMT_HVAL = PJ_EIFMT_HVAL,
       EIFMT_SVAL = PJ_EIFMT_SVAL };
enum {
    EIATTR_MAX_THREADS = 0x05,      /* .nv.info.ENTRY, SVAL: .maxntid x, y, z */
    EIATTR_REQNTID = 0x10,          /* .nv.info.ENTRY, SVAL: .reqntid x, y, z */
    EIATTR_FRAME_SIZE = 0x11,       /* .nv.info, SVAL: function symbol, bytes */
    EIATTR_MIN_STACK_SIZE = 0x12,   /* .nv.info, SVAL: function symbol, bytes */
    EIATTR_CBANK_PARAM_SIZE = 0x19, /* .nv.info.ENTRY, HVAL: parameter bytes */
    EIATTR_MAXREG_COUNT = 0x1b,     /* .nv.info.ENTRY, HVAL: the register cap */
    EIATTR_REGCOUNT = 0x2f          /* .nv.info, SVAL: function symbol, registers */
};

typedef struct {
    const unsigned char *base;
    size_t bytes;
    Elf64_Ehdr header;
} elf_file;

typedef pj_nv_record nv_record;

static uint32_t read_u32(const unsigned char *p)
{
    uint32_t value;
    memcpy(&value, p, sizeof value);
    return value;
}

/* The SM number in a CUDA ELF's e_flags: bits 8-15 from ELF ABI version 8 (CUDA 12.8+),
 * bits 0-7 before. */
static unsigned cuda_sm(const Elf64_Ehdr *header)
{
    unsigned flags = header->e_flags;
    return header->e_ident[EI_ABIVERSION] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

/* Section index's header; the table's place was checked by elf_open. */
static Elf64_Shdr section_at(const elf_file *elf, unsigned index)
{
    Elf64_Shdr section;
    memcpy(&section, elf->base + elf->header.e_shoff + (size_t)index * sizeof section,
           sizeof section);
    return section;
}

static int contents_fit(const Elf64_Shdr *section, size_t bytes)
{
    return section->sh_type == SHT_NOBITS ||
           (section->sh_offset <= bytes && section->sh_size <= bytes - section->sh_offset);
}

/* NULL when data is a CUDA ELF whose header, section table and every section's contents lie
 * inside bytes; else what is wrong with it. */
static const char *elf_open(elf_file *elf, const void *data, size_t bytes)
{
    elf->base = data;
    elf->bytes = bytes;
    if (!data || bytes < sizeof elf->header)
        return "too short for an ELF header";
    memcpy(&elf->header, data, sizeof elf->header);
    const Elf64_Ehdr *h = &elf->header;
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0)
        return "not an ELF file (PTX text?)";
    if (h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_ident[EI_DATA] != ELFDATA2LSB)
        return "not a 64-bit little-endian ELF";
    if (h->e_machine != EM_CUDA)
        return "an ELF for another machine than a CUDA GPU";
    if (h->e_shentsize != sizeof(Elf64_Shdr) || h->e_shnum == 0 || h->e_shstrndx >= h->e_shnum)
        return "its section table is malformed";
    if (h->e_shoff > bytes || (bytes - h->e_shoff) / sizeof(Elf64_Shdr) < h->e_shnum)
        return "truncated: its section table lies past the end";
    /* Not read here, but the driver loads through it: a cut one is a cut file. */
    if (h->e_phnum && (h->e_phentsize != sizeof(Elf64_Phdr) || h->e_phoff > bytes ||
                       (bytes - h->e_phoff) / sizeof(Elf64_Phdr) < h->e_phnum))
        return "truncated: its program header table lies past the end";
    for (unsigned i = 0; i < h->e_shnum; i++) {
        Elf64_Shdr section = section_at(elf, i);
        if (!contents_fit(&section, bytes))
            return "truncated: a section lies past the end";
    }
    return NULL;
}

/* The NUL-terminated string at offset in a string table, or NULL if it runs off the table. */
static const char *table_string(const elf_file *elf, const Elf64_Shdr *table, uint64_t offset)
{
    if (table->sh_type != SHT_STRTAB || offset >= table->sh_size)
        return NULL;
    const char *text = (const char *)elf->base + table->sh_offset + offset;
    return memchr(text, '\0', table->sh_size - offset) ? text : NULL;
}

static const char *section_name(const elf_file *elf, const Elf64_Shdr *section)
{
    Elf64_Shdr names = section_at(elf, elf->header.e_shstrndx);
    return table_string(elf, &names, section->sh_name);
}

/* The section named prefix followed by entry (".nv.info." "reduce_kernel"); 1 if found. */
static int find_section(Elf64_Shdr *out, const elf_file *elf, const char *prefix,
                        const char *entry)
{
    size_t length = strlen(prefix);
    for (unsigned i = 0; i < elf->header.e_shnum; i++) {
        Elf64_Shdr section = section_at(elf, i);
        const char *name = section_name(elf, &section);
        if (name && strncmp(name, prefix, length) == 0 && strcmp(name + length, entry) == 0) {
            *out = section;
            return 1;
        }
    }
    return 0;
}

/* The symbol table and its string table; NULL, or what is wrong. */
static const char *symbol_table(Elf64_Shdr *symbols, Elf64_Shdr *names, const elf_file *elf)
{
    for (unsigned i = 0; i < elf->header.e_shnum; i++) {
        *symbols = section_at(elf, i);
        if (symbols->sh_type != SHT_SYMTAB)
            continue;
        if (symbols->sh_entsize != sizeof(Elf64_Sym) || symbols->sh_link >= elf->header.e_shnum)
            return "its symbol table is malformed";
        *names = section_at(elf, symbols->sh_link);
        return NULL;
    }
    return "it has no symbol table";
}

static Elf64_Sym symbol_at(const elf_file *elf, const Elf64_Shdr *symbols, size_t index)
{
    Elf64_Sym symbol;
    memcpy(&symbol, elf->base + symbols->sh_offset + index * sizeof symbol, sizeof symbol);
    return symbol;
}

/* The index of function symbol name in the symbol table, or -1. */
static long function_symbol(const elf_file *elf, const Elf64_Shdr *symbols,
                            const Elf64_Shdr *names, const char *name)
{
    size_t count = symbols->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < count; i++) {
        Elf64_Sym symbol = symbol_at(elf, symbols, i);
        const char *text = table_string(elf, names, symbol.st_name);
        if (ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && text && strcmp(text, name) == 0)
            return (long)i;
    }
    return -1;
}

/* "reduce_kernel, other_kernel": the kernel entries the cubin holds. */
static void list_entries(pj_strbuf *sb, const elf_file *elf, const Elf64_Shdr *symbols,
                         const Elf64_Shdr *names)
{
    size_t count = symbols->sh_size / sizeof(Elf64_Sym), listed = 0;
    for (size_t i = 1; i < count; i++) {
        Elf64_Sym symbol = symbol_at(elf, symbols, i);
        const char *text = table_string(elf, names, symbol.st_name);
        if (ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && (symbol.st_other & STO_CUDA_ENTRY) &&
            text)
            pj_sb_appendf(sb, "%s%s", listed++ ? ", " : "", text);
    }
    if (!listed)
        pj_sb_append(sb, "none");
}

/* Reads the record at *at (below end) and moves *at past it; NULL, or what is wrong. */
static const char *next_record(nv_record *out, const unsigned char **at,
                               const unsigned char *end)
{
    const unsigned char *p = *at;
    if (end - p < 4)
        return "an .nv.info record is cut short";
    out->format = p[0];
    out->attribute = p[1];
    out->value = (unsigned)p[2] | (unsigned)p[3] << 8;
    out->payload = NULL;
    if (out->format < EIFMT_NVAL || out->format > EIFMT_SVAL)
        return "an .nv.info record has an unknown format";
    p += 4;
    if (out->format == EIFMT_SVAL) {
        if ((size_t)(end - p) < out->value)
            return "an .nv.info record's payload runs past its section";
        out->payload = p;
        p += out->value;
    } else if (out->format == EIFMT_BVAL) {
        out->value &= 0xff;
    }
    *at = p;
    return NULL;
}

/* A record of the file-wide .nv.info about one function: (symbol, value) pairs. */
static void take_function_record(pj_cubin_entry *out, const nv_record *r, uint32_t symbol,
                                 int *have_registers)
{
    if (r->format != EIFMT_SVAL || r->value < 8 || read_u32(r->payload) != symbol)
        return;
    int value = (int)(read_u32(r->payload + 4) & 0x7fffffff);
    if (r->attribute == EIATTR_REGCOUNT) {
        out->registers = value;
        *have_registers = 1;
    } else if (r->attribute == EIATTR_FRAME_SIZE) {
        out->frame_bytes = value;
    } else if (r->attribute == EIATTR_MIN_STACK_SIZE) {
        out->min_stack_bytes = value;
    }
}

/* A record of .nv.info.ENTRY, the entry's own. */
static void take_entry_record(pj_cubin_entry *out, const nv_record *r)
{
    if ((r->attribute == EIATTR_MAX_THREADS || r->attribute == EIATTR_REQNTID) &&
        r->format == EIFMT_SVAL && r->value >= 12) {
        uint64_t threads = (uint64_t)read_u32(r->payload) * read_u32(r->payload + 4) *
                           read_u32(r->payload + 8);
        /* .reqntid is exact, so it wins over .maxntid when both are there. */
        if (threads > 0 && threads <= 1u << 30 &&
            (r->attribute == EIATTR_REQNTID || !out->bound_threads))
            out->bound_threads = (int)threads;
    } else if (r->attribute == EIATTR_CBANK_PARAM_SIZE && r->format == EIFMT_HVAL) {
        out->param_bytes = (int)r->value;
    } else if (r->attribute == EIATTR_MAXREG_COUNT && r->format == EIFMT_HVAL) {
        out->max_registers = (int)r->value;
    }
}

/* The bytes of a section of records. A SHT_NOBITS section has none in the file: elf_open
 * checked its offset and size against nothing. */
static const char *records_of(const unsigned char **at, const unsigned char **end,
                              const elf_file *elf, const Elf64_Shdr *section)
{
    if (section->sh_type == SHT_NOBITS)
        return "its .nv.info section has no contents in the file";
    *at = elf->base + section->sh_offset;
    *end = *at + section->sh_size;
    return NULL;
}

/* Walks every record of section; function records (file-wide .nv.info) need the symbol. */
static const char *walk_records(pj_cubin_entry *out, const elf_file *elf,
                                const Elf64_Shdr *section, long symbol, int *have_registers)
{
    const unsigned char *at, *end;
    const char *bytes_wrong = records_of(&at, &end, elf, section);
    if (bytes_wrong)
        return bytes_wrong;
    while (at < end) {
        nv_record record;
        const char *wrong = next_record(&record, &at, end);
        if (wrong)
            return wrong;
        if (symbol >= 0)
            take_function_record(out, &record, (uint32_t)symbol, have_registers);
        else
            take_entry_record(out, &record);
    }
    return NULL;
}

const char *pj_cubin_entry_records(const void *cubin, size_t bytes, const char *entry,
                                   pj_nv_visitor *visit, void *user)
{
    elf_file elf;
    Elf64_Shdr section;
    const char *wrong = elf_open(&elf, cubin, bytes);
    if (wrong)
        return wrong;
    if (!find_section(&section, &elf, ".nv.info.", entry))
        return "it has no .nv.info section for the entry";
    const unsigned char *at, *end;
    if ((wrong = records_of(&at, &end, &elf, &section)))
        return wrong;
    while (at < end) {
        nv_record record;
        if ((wrong = next_record(&record, &at, end)))
            return wrong;
        if (visit(user, &record))
            break;
    }
    return NULL;
}

/* The records about entry (function symbol index symbol). NULL, or what is wrong. */
static const char *read_records(pj_cubin_entry *out, const elf_file *elf, long symbol,
                                const char *entry)
{
    Elf64_Shdr section;
    int have_registers = 0;
    const char *wrong = NULL;
    if (find_section(&section, elf, ".nv.info", ""))
        wrong = walk_records(out, elf, &section, symbol, &have_registers);
    if (!wrong && find_section(&section, elf, ".nv.info.", entry))
        wrong = walk_records(out, elf, &section, -1, NULL);
    if (!wrong && !have_registers)
        wrong = "it records no register count for the entry (no EIATTR_REGCOUNT)";
    return wrong;
}

/* Static shared memory, from the size of .nv.shared.ENTRY (NOBITS: only its size says
 * anything). From sm_90 on, ptxas lays out the 1 KiB that the system reserves in every
 * block's shared memory (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK) at the start
 * of that section, the kernel's variables after it (from offset 0x400): ptxas -v counts 64
 * bytes of a section of 1088. The driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES is the
 * kernel's own part. Before sm_90 the section holds only the kernel's variables (ptxas 13.0:
 * sm_75 to sm_89 against sm_90, sm_100 and sm_120; the driver compared on an H100). */
static void read_sizes(pj_cubin_entry *out, const elf_file *elf, const char *entry)
{
    enum { RESERVED_FROM_SM = 90, RESERVED_BYTES = 1024 };
    Elf64_Shdr section;
    if (!find_section(&section, elf, ".nv.shared.", entry) || section.sh_size > 1u << 30)
        return;
    out->shared_bytes = (int)section.sh_size;
    if (out->sm >= RESERVED_FROM_SM && out->shared_bytes >= RESERVED_BYTES)
        out->shared_bytes -= RESERVED_BYTES;
}

static ptxjit_status malformed(size_t bytes, const char *why)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "the cubin (%zu bytes) cannot be read: %s; a cubin is what ptxas or "
                    "nvJitLink writes for one GPU (ptxjit_kernel_cubin)",
                    bytes, why);
}

ptxjit_status pj_cubin_entry_read(pj_cubin_entry *out, const void *cubin, size_t bytes,
                                  const char *entry)
{
    if (!out || !entry)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "cubin entry: out or entry is NULL");
    memset(out, 0, sizeof *out);
    elf_file elf;
    Elf64_Shdr symbols, names;
    const char *wrong = elf_open(&elf, cubin, bytes);
    if (!wrong)
        wrong = symbol_table(&symbols, &names, &elf);
    if (wrong)
        return malformed(bytes, wrong);
    long symbol = function_symbol(&elf, &symbols, &names, entry);
    if (symbol < 0) {
        pj_strbuf sb;
        pj_sb_init(&sb);
        list_entries(&sb, &elf, &symbols, &names);
        ptxjit_status status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                                        "the cubin has no entry '%s'; its entries: %s", entry,
                                        sb.data ? sb.data : "?");
        pj_sb_free(&sb);
        return status;
    }
    out->sm = cuda_sm(&elf.header);
    wrong = read_records(out, &elf, symbol, entry);
    if (wrong)
        return malformed(bytes, wrong);
    read_sizes(out, &elf, entry);
    return PTXJIT_OK;
}

/* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK is the least of three limits:
 *  - 1024 threads, the most a block may have (compute capability 7.0 and later: every target
 *    of CUDA 13, and of ptxjit's templates);
 *  - the launch bound (.maxntid or .reqntid), where the kernel declares one;
 *  - what the register file grants one block: registers go to warps in units of 256 (a
 *    warp's regs·32 rounded up), and the hardware's check assumes that a block's warps are
 *    spread over all 4 sub-partitions of the SM, so it rounds the warp count up to a multiple
 *    of 4 before comparing warps × registers with the 64 K registers a block may use. The
 *    largest block that passes has 4·⌊65536 / (4·per_warp)⌋ warps.
 * Source: the CUDA toolkit's include/cuda_occupancy.h (cudaOccMaxBlocksPerSMRegsLimit's
 * "Hardware check", cudaOccRegAllocationGranularity: 256, cudaOccSubPartitionsPerMultiprocessor:
 * 4 for compute capability 7.0 and later) and the CUDA C++ Programming Guide's table of
 * per-block limits (64 K registers, 1024 threads). E.g. 255 registers: 8192 per warp, 8 warps,
 * 256 threads; 168 (matmul wgmma): 5376, 12 warps, 384; 80: 2560, 24 warps (not 25), 768. */
int pj_cubin_max_threads_for(const pj_cubin_entry *entry, int block_registers)
{
    enum { BLOCK_THREADS = 1024, UNIT = 256, SUB_PARTITIONS = 4 };
    int threads = BLOCK_THREADS;
    if (entry->bound_threads > 0 && entry->bound_threads < threads)
        threads = entry->bound_threads;
    if (entry->registers > 0) {
        int per_warp = (entry->registers * 32 + UNIT - 1) / UNIT * UNIT;
        int warps = block_registers / (SUB_PARTITIONS * per_warp) * SUB_PARTITIONS;
        if (warps * 32 < threads)
            threads = warps * 32;
    }
    return threads;
}

int pj_cubin_max_threads(const pj_cubin_entry *entry)
{
    return pj_cubin_max_threads_for(entry, PJ_CUBIN_BLOCK_REGISTERS);
}

int pj_cubin_describe(char *out, size_t size, const void *data, size_t bytes)
{
    const unsigned char *base = data;
    elf_file elf;
    const char *wrong = elf_open(&elf, data, bytes);
    if (wrong && (bytes < SELFMAG || memcmp(base, ELFMAG, SELFMAG) != 0)) {
        int text = data && bytes > 0 && (base[0] == '/' || base[0] == '.');
        snprintf(out, size, "%zu bytes, not an ELF%s: the driver would compile it at load",
                 bytes, text ? " but text (PTX?)" : "");
        return 0;
    }
    if (wrong) {
        snprintf(out, size, "%zu bytes, an ELF but not a whole CUDA one (%s)", bytes, wrong);
        return 0;
    }
    size_t sass = 0;
    int texts = 0, ptx = 0;
    for (unsigned i = 0; i < elf.header.e_shnum; i++) {
        Elf64_Shdr section = section_at(&elf, i);
        const char *name = section_name(&elf, &section);
        if (!name)
            continue;
        if (strncmp(name, ".text.", 6) == 0) {
            sass += section.sh_size;
            texts++;
        }
        if (strstr(name, "ptx"))
            ptx++;
    }
    snprintf(out, size,
             "%zu bytes, CUDA ELF for sm_%u: SASS %zu bytes (%zu instructions) in %d .text "
             "section%s, %s",
             bytes, cuda_sm(&elf.header), sass, sass / 16, texts, texts == 1 ? "" : "s",
             ptx ? "and a PTX section" : "no PTX inside");
    return sass > 0;
}
