/* cubin_info.c — what a compiled kernel's bytes hold: an ELF with SASS for one GPU, which the
 * driver loads as it is, or text (PTX) that the driver would still compile while loading. */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

/* The SM number in a CUDA ELF's e_flags: bits 8-15 from ELF ABI version 8 (CUDA 12.8+),
 * bits 0-7 before. */
static unsigned cuda_sm(const Elf64_Ehdr *header)
{
    unsigned flags = header->e_flags;
    return header->e_ident[EI_ABIVERSION] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

static int sections_fit(const Elf64_Ehdr *header, size_t bytes)
{
    if (header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shstrndx >= header->e_shnum)
        return 0;
    return header->e_shoff <= bytes &&
           (bytes - header->e_shoff) / sizeof(Elf64_Shdr) >= header->e_shnum;
}

int cubin_describe(char *out, size_t size, const void *data, size_t bytes)
{
    const unsigned char *base = data;
    const Elf64_Ehdr *header = data;
    if (!data || bytes < sizeof *header || memcmp(base, ELFMAG, SELFMAG) != 0 ||
        header->e_ident[EI_CLASS] != ELFCLASS64) {
        int text = data && bytes > 0 && (base[0] == '/' || base[0] == '.');
        snprintf(out, size, "%zu bytes, not an ELF%s: the driver would compile it at load",
                 bytes, text ? " but text (PTX?)" : "");
        return 0;
    }
    if (header->e_machine != EM_CUDA || !sections_fit(header, bytes)) {
        snprintf(out, size, "%zu bytes, an ELF but not a CUDA one (machine %u)", bytes,
                 header->e_machine);
        return 0;
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(base + header->e_shoff);
    const Elf64_Shdr *names = &sections[header->e_shstrndx];
    size_t sass = 0;
    int texts = 0, ptx = 0;
    for (int i = 0; i < header->e_shnum; i++) {
        if (names->sh_offset > bytes || sections[i].sh_name >= bytes - names->sh_offset)
            continue;
        const char *name = (const char *)base + names->sh_offset + sections[i].sh_name;
        size_t room = bytes - names->sh_offset - sections[i].sh_name;
        if (!memchr(name, '\0', room))
            continue;
        if (strncmp(name, ".text.", 6) == 0) {
            sass += sections[i].sh_size;
            texts++;
        }
        if (strstr(name, "ptx"))
            ptx++;
    }
    snprintf(out, size,
             "%zu bytes, CUDA ELF for sm_%u: SASS %zu bytes (%zu instructions) in %d .text "
             "section%s, %s",
             bytes, cuda_sm(header), sass, sass / 16, texts, texts == 1 ? "" : "s",
             ptx ? "and a PTX section" : "no PTX inside");
    return sass > 0;
}
