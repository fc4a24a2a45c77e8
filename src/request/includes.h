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
    size_t max_bytes; /* the largest header read (the template cap) */
} pj_include_set;

/* The resolved directory of a file template (origin is its path); *out NULL for a template
 * that has no file (origin "built-in:NAME.cu" or "memory:NAME"). Caller frees. */
ptxjit_status pj_template_dir(char **out, const char *origin);

/* A confined scan (ptxjit_options.confine_includes): every include must stay under the scan's
 * directories or the toolkit's include directory, which NVRTC is given last. */
typedef struct {
    const char *toolkit_dir; /* as NVRTC gets it, existing or not; NULL: none */
} pj_include_confinement;

/* Every header that source (the template, origin in messages) can include, recursively:
 * `#include "x"` against the including file's directory (the template's: template_dir, NULL
 * for none), then dirs in order; `#include <x>` against dirs only. dirs is the include path
 * NVRTC is given without the toolkit's (whose headers the compiler version covers). A header
 * found nowhere is left to the compiler's error. Deeper than PJ_INCLUDE_MAX_DEPTH or more
 * than PJ_INCLUDE_MAX_FILES headers: PTXJIT_ERR_TEMPLATE. Directives are found as the
 * preprocessor reads them (directives.h), and so is every line that reads as an include in a
 * comment or a disabled #if block (a spare hash, never a missed one); one through a macro
 * (#include NAME) is not followed.
 * confine (NULL: not confined) makes every include prove that it stays under dirs, the
 * template's directory and confine->toolkit_dir: an absolute name, a ".." or a symbolic link
 * that leads out, a name through a macro, #include_next, #import, #embed, __has_embed and a
 * __has_include the scan cannot check, a NUL byte or a raw string across a backslash-newline
 * (which compilers read differently) are PTXJIT_ERR_TEMPLATE naming the file and line, what
 * it says, why and the fix; nothing outside is read or quoted. */
ptxjit_status pj_includes_scan(pj_include_set *out, const char *source, const char *origin,
                               const char *template_dir, const char *const *dirs,
                               int dir_count, const pj_include_confinement *confine,
                               size_t max_bytes);
/* Whether a header of set differs now from what was hashed, or cannot be read; *which (may
 * be NULL) then names it. */
int pj_includes_changed(const pj_include_set *set, const char **which);
void pj_includes_free(pj_include_set *set);

#endif
