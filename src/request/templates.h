/* templates.h — the template registry of a context: the user's template directories, the
 * templates added from memory and the built-in ones, read into schemas; the problems of those
 * that could not be used; published as immutable snapshots that readers take under
 * context->lock while ptxjit_add_template and ptxjit_reload_templates make new ones. */
#ifndef PTXJIT_TEMPLATES_H
#define PTXJIT_TEMPLATES_H

#include <stdint.h>

#include "params/schema.h"

/* A family's template as the registry keeps it, from when it is read until ptxjit_close (a
 * kernel made from it points at its schema, whatever replaced it since). */
typedef struct pj_template {
    pj_schema *schema;        /* a user template's: parsed when read; a built-in's: made at
                                 build time (static data, never freed). Set before the
                                 template is published, never changed after */
    const char *family;       /* the family and origin, known without the schema */
    const char *origin;
    char *description;        /* ptxjit_family_describe's text; NULL until asked, then
                                 published once with a compare-and-swap */
    struct pj_template *next; /* every user template the registry made, for ptxjit_close */
} pj_template;

/* A built-in template as the build embeds it (src/tools/embed_templates.c): already
 * normalized (pj_template_normalize), its family, origin and schema made at build time by
 * pj_schema_parse, so that a request for it parses nothing. */
typedef struct {
    const char *path, *origin, *family, *text;
    pj_schema *schema;
} pj_embedded_template;
extern const pj_embedded_template pj_embedded_templates[]; /* ends with a NULL path */
/* The same templates as the registry keeps them, one table for the process (static data of
 * the build: a context's open makes nothing for them); only a description is ever written,
 * published once with a compare-and-swap. */
extern pj_template pj_builtin_templates[];
extern const int pj_builtin_template_count;

static inline pj_schema *pj_template_schema(pj_template *template)
{
    return template->schema;
}

/* Reads the directories of options.template_path and $PTXJIT_TEMPLATE_PATH into the
 * context's first snapshot, with the built-in templates, which are shared by every context
 * of the process and come with their schemas from the build. A user template that
 * cannot be used is a problem (logged as a warning), not a failure; only running out of
 * memory fails. */
ptxjit_status pj_templates_open(ptxjit_context *context, const ptxjit_options *options);
/* Frees every snapshot and template; kernels must be gone first. */
void pj_templates_close(ptxjit_context *context);

/* The template of family in the current snapshot, with its schema, and that snapshot's
 * generation (may be NULL). A family made unavailable by a problem: PTXJIT_ERR_TEMPLATE with the problem; a
 * family nobody declares: PTXJIT_ERR_UNKNOWN_FAMILY listing the known ones and the files that
 * could not be read. */
ptxjit_status pj_templates_find(pj_template **out, uint64_t *generation, ptxjit_context *context,
                                const char *family);
/* The generation of the current snapshot: it changes with each add or reload. Caller holds
 * context->lock. */
uint64_t pj_templates_generation(ptxjit_context *context);

/* The largest template or header file the context reads (options.template_max_bytes,
 * $PTXJIT_TEMPLATE_MAX_BYTES, else the default); fixed at open. */
size_t pj_templates_max_bytes(const ptxjit_context *context);

/* text as the registry keeps a template: without a leading UTF-8 byte order mark, CRLF line
 * ends and lone CRs turned into LF. NULL when out of memory. */
char *pj_template_normalize(const char *text);

#endif
