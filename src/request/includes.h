/* includes.h — the user headers a template can include, found the way NVRTC finds them, so
 * that their content is part of the cache key (an edited header is a new kernel, never the
 * old one from the disk cache), and checked again after the compile. */
#ifndef PTXJIT_INCLUDES_H
#define PTXJIT_INCLUDES_H

#include "internal.h"

/* How deep headers may nest and how many distinct ones a template may reach. */
#define PJ_INCLUDE_MAX_DEPTH 32
#define PJ_INCLUDE_MAX_FILES 256

typedef struct {
    char *path;         /* resolved (realpath) */
    pj_hash128 content; /* of the bytes read */
} pj_include_file;

typedef struct {
    pj_include_file *files; /* in the order first reached */
    int count, capacity;
} pj_include_set;

/* The resolved directory of a file template (origin is its path); *out NULL for a template
 * that has no file (origin "built-in:NAME.cu" or "memory:NAME"). Caller frees. */
ptxjit_status pj_template_dir(char **out, const char *origin);

/* Every header that source (the template, origin in messages) can include, recursively:
 * `#include "x"` against the including file's directory (the template's: template_dir, NULL
 * for none), then dirs in order; `#include <x>` against dirs only. dirs is the include path
 * NVRTC is given without the toolkit's (whose headers the compiler version covers). A header
 * found nowhere is left to the compiler's error. Deeper than PJ_INCLUDE_MAX_DEPTH or more
 * than PJ_INCLUDE_MAX_FILES headers: PTXJIT_ERR_TEMPLATE. Lines are read as text: an include
 * in a comment or a disabled #if block is hashed too (harmless), one through a macro
 * (#include NAME) is not followed. */
ptxjit_status pj_includes_scan(pj_include_set *out, const char *source, const char *origin,
                               const char *template_dir, const char *const *dirs,
                               int dir_count);
/* Whether a header of set differs now from what was hashed, or cannot be read; *which (may
 * be NULL) then names it. */
int pj_includes_changed(const pj_include_set *set, const char **which);
void pj_includes_free(pj_include_set *set);

#endif
