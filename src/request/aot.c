/* aot.c — ahead-of-time tables: registered once (checked field by field), kept in a list that
 * requests read without a lock, and searched by a parsed request for the entry of the context's
 * architecture. A hit borrows the table's bytes: nothing is read, compiled or copied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/aot.h"
#include "request/route.h"

/* One registered table; the list grows at its tail and is read with acquire loads. */
typedef struct pj_aot_node {
    const ptxjit_aot_table *table;
    struct pj_aot_node *next;
} pj_aot_node;

static const pj_aot_node *first_node(const ptxjit_context *context)
{
    return __atomic_load_n(&context->aot, __ATOMIC_ACQUIRE);
}

static const pj_aot_node *next_node(const pj_aot_node *node)
{
    return __atomic_load_n(&node->next, __ATOMIC_ACQUIRE);
}

/* ---- checking a table ---- */

static int is_hex32(const char *text)
{
    if (!text || strlen(text) != 32)
        return 0;
    for (int i = 0; i < 32; i++)
        if (!strchr("0123456789abcdef", text[i]))
            return 0;
    return 1;
}

static ptxjit_status bad_field(const ptxjit_aot_table *table, const char *what, int index,
                               const char *field)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "AOT table '%s': %s %d: %s is missing or malformed; regenerate the table "
                    "with the ptxjit aot of this library (format %d)",
                    table->name ? table->name : "?", what, index, field, PTXJIT_AOT_FORMAT);
}

static const char *kernel_flaw(const ptxjit_aot_kernel *k)
{
    if (!k->request || !k->family || !k->params || !k->compile_options || !k->compiler)
        return "a text field (request, family, params, compile_options, compiler)";
    if (!k->arch || strncmp(k->arch, "sm_", 3) != 0)
        return "arch";
    if (!k->backend || (strcmp(k->backend, "nvrtc") && strcmp(k->backend, "llvm")))
        return "backend";
    if (!is_hex32(k->key))
        return "key";
    if (!is_hex32(k->template_hash))
        return "template_hash";
    if (!k->cubin || !k->cubin_size)
        return "cubin";
    if (k->entry_count < 1 || !k->entries)
        return "entries";
    for (int e = 0; e < k->entry_count; e++)
        if (!k->entries[e])
            return "entries";
    return NULL;
}

static const char *record_flaw(const ptxjit_aot_record *r)
{
    if (!r->family || !r->backend || !r->arch || !r->problem || !r->fixed || !r->winner)
        return "a text field (family, backend, arch, problem, fixed, winner)";
    return is_hex32(r->template_hash) ? NULL : "template_hash";
}

static ptxjit_status check_table(const ptxjit_aot_table *table)
{
    if (!table)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_register_aot: table is NULL");
    if (table->format != PTXJIT_AOT_FORMAT)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "AOT table '%s' has format %d, this library reads format %d: "
                        "regenerate it with this library's ptxjit aot",
                        table->name ? table->name : "?", table->format, PTXJIT_AOT_FORMAT);
    if (!table->name || table->kernel_count < 0 || table->record_count < 0 ||
        (table->kernel_count && !table->kernels) || (table->record_count && !table->records))
        return bad_field(table, "table", 0, "name, counts or arrays");
    for (int i = 0; i < table->kernel_count; i++) {
        const char *flaw = kernel_flaw(&table->kernels[i]);
        if (flaw)
            return bad_field(table, "kernel", i, flaw);
    }
    for (int i = 0; i < table->record_count; i++) {
        const char *flaw = record_flaw(&table->records[i]);
        if (flaw)
            return bad_field(table, "record", i, flaw);
    }
    return PTXJIT_OK;
}

/* ---- templates ---- */

static int same_template(const char *hash_hex, const pj_schema *schema)
{
    char hex[33];
    pj_hash_hex(&schema->source_hash, hex);
    return strcmp(hex, hash_hex) == 0;
}

/* Warns once per family of the table whose entries the context cannot use: built from another
 * template text, or of a family the context does not have. */
static void warn_unusable(ptxjit_context *context, const ptxjit_aot_table *table)
{
    for (int i = 0; i < table->kernel_count; i++) {
        const ptxjit_aot_kernel *k = &table->kernels[i];
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(table->kernels[j].family, k->family) == 0;
        if (seen)
            continue;
        const pj_schema *schema = pj_context_find_schema(context, k->family);
        char now[33] = "";
        if (schema)
            pj_hash_hex(&schema->source_hash, now);
        if (!schema)
            pj_log(&context->logger, PTXJIT_LOG_WARNING,
                   "AOT table '%s': family %s is not in this context; its kernels are unused",
                   table->name, k->family);
        else if (strcmp(now, k->template_hash) != 0)
            pj_log(&context->logger, PTXJIT_LOG_WARNING,
                   "AOT table '%s': %s was built from another text of its template than %s "
                   "(template hash %s, now %s); its kernels are not served: regenerate the "
                   "table with ptxjit aot",
                   table->name, k->family, schema->origin, k->template_hash, now);
    }
}

/* ---- registering ---- */

ptxjit_status ptxjit_register_aot(ptxjit_context *context, const ptxjit_aot_table *table)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_register_aot: context is NULL");
    ptxjit_status status = check_table(table);
    if (status != PTXJIT_OK)
        return status;
    pj_aot_node *node = calloc(1, sizeof *node);
    if (!node)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    node->table = table;
    pthread_mutex_lock(&context->lock);
    pj_aot_node **tail = &context->aot;
    while (*tail)
        tail = &(*tail)->next;
    __atomic_store_n(tail, node, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&context->lock);
    warn_unusable(context, table);
    return PTXJIT_OK;
}

ptxjit_status pj_aot_register_all(ptxjit_context *context,
                                  const struct ptxjit_aot_table *const *tables)
{
    for (int i = 0; tables && tables[i]; i++) {
        ptxjit_status status = ptxjit_register_aot(context, tables[i]);
        if (status != PTXJIT_OK)
            return status;
    }
    return PTXJIT_OK;
}

void pj_aot_free(ptxjit_context *context)
{
    for (pj_aot_node *node = context->aot, *next; node; node = next) {
        next = node->next;
        free(node);
    }
    context->aot = NULL;
}

/* ---- architectures ---- */

/* "sm_86" → 86, *specific 0; "sm_90a" → 90, 1; 0 for what is not an arch. */
static int arch_number(const char *arch, int *specific)
{
    char *end;
    long number = strncmp(arch, "sm_", 3) == 0 ? strtol(arch + 3, &end, 10) : 0;
    if (number <= 0 || number > 10000)
        return 0;
    *specific = *end != '\0';
    return (int)number;
}

/* How well an entry for entry_arch serves a context of arch: 3 the same arch; else a plain
 * entry of the same major version and not a newer minor, whose SASS that GPU runs: 2 + its
 * number over 10000, so that the newest wins; 0 none. */
static double arch_rank(const char *entry_arch, const char *arch)
{
    if (strcmp(entry_arch, arch) == 0)
        return 3;
    int entry_specific, specific;
    int entry_sm = arch_number(entry_arch, &entry_specific), sm = arch_number(arch, &specific);
    if (!entry_sm || !sm || entry_specific || entry_sm / 10 != sm / 10 || entry_sm > sm)
        return 0;
    return 2 + entry_sm / 10000.0;
}

/* ---- requests ---- */

static int same_request(const ptxjit_aot_kernel *k, const ptxjit_kernel *kernel)
{
    const char *options = kernel->compile_options.canonical ? kernel->compile_options.canonical
                                                            : "";
    return strcmp(k->family, kernel->schema->family) == 0 &&
           strcmp(k->backend, kernel->route->name) == 0 &&
           strcmp(k->params, kernel->canonical) == 0 && strcmp(k->compile_options, options) == 0;
}

static int same_entries(const ptxjit_aot_kernel *k, const pj_schema *schema)
{
    if (k->entry_count != schema->entry_count)
        return 0;
    for (int i = 0; i < k->entry_count; i++)
        if (strcmp(k->entries[i], schema->entries[i]) != 0)
            return 0;
    return 1;
}

/* The best entry of kernel's request for the arch; *stale: one of the request built from
 * another template (NULL: none). */
static const ptxjit_aot_kernel *search(const ptxjit_kernel *kernel,
                                       const ptxjit_aot_kernel **stale,
                                       const ptxjit_aot_table **stale_table)
{
    const ptxjit_aot_kernel *best = NULL;
    double best_rank = 0;
    *stale = NULL;
    for (const pj_aot_node *node = first_node(kernel->context); node; node = next_node(node)) {
        const ptxjit_aot_table *table = node->table;
        for (int i = 0; i < table->kernel_count; i++) {
            const ptxjit_aot_kernel *k = &table->kernels[i];
            double rank = arch_rank(k->arch, kernel->context->arch);
            if (rank <= best_rank || !same_request(k, kernel))
                continue;
            if (!same_template(k->template_hash, kernel->schema) ||
                !same_entries(k, kernel->schema)) {
                if (!*stale) {
                    *stale = k;
                    *stale_table = table;
                }
                continue;
            }
            best = k;
            best_rank = rank;
        }
    }
    return best;
}

const ptxjit_aot_kernel *pj_aot_find(const ptxjit_kernel *kernel)
{
    const ptxjit_aot_kernel *stale;
    const ptxjit_aot_table *table = NULL;
    const ptxjit_aot_kernel *found = search(kernel, &stale, &table);
    if (!found && stale)
        pj_log(&kernel->context->logger, PTXJIT_LOG_WARNING,
               "AOT table '%s' holds %s (%s) for %s built from another text of the template "
               "than %s (template hash %s): not served; regenerate the table with ptxjit aot",
               table->name, stale->family, stale->params, stale->arch,
               kernel->schema->origin, stale->template_hash);
    return found;
}

static int hex_digit(char c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* The key's 32 hex digits as pj_hash_hex writes them (low word first). */
static void key_from_hex(pj_hash128 *out, const char *hex)
{
    uint64_t words[2] = {0, 0};
    for (int i = 0; i < 32; i++)
        words[i / 16] = words[i / 16] << 4 | (uint64_t)hex_digit(hex[i]);
    out->high = words[0];
    out->low = words[1];
}

ptxjit_status pj_aot_take(ptxjit_kernel *kernel, const ptxjit_aot_kernel *entry)
{
    pj_artifact *a = &kernel->artifact;
    a->entries = calloc((size_t)entry->entry_count, sizeof *a->entries);
    if (!a->entries)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    a->borrowed = 1;
    for (int i = 0; i < entry->entry_count; i++)
        a->entries[i] = (char *)entry->entries[i];
    a->entry_count = entry->entry_count;
    a->family = (char *)entry->family;
    a->params = (char *)entry->params;
    a->options = (char *)entry->compile_options;
    a->ptx = (char *)(entry->ptx ? entry->ptx : "");
    a->cubin = (uint8_t *)entry->cubin;
    a->cubin_size = entry->cubin_size;
    a->log = (char *)"";
    key_from_hex(&kernel->key, entry->key);
    pj_hash_hex(&kernel->key, kernel->key_hex);
    pj_copy_string(kernel->compiler_version, sizeof kernel->compiler_version, entry->compiler);
    kernel->aot = entry;
    return PTXJIT_OK;
}

/* The registered tables' names and the archs they hold kernels for. */
static void describe_tables(pj_strbuf *sb, const ptxjit_context *context)
{
    int tables = 0;
    for (const pj_aot_node *node = first_node(context); node; node = next_node(node), tables++) {
        const ptxjit_aot_table *table = node->table;
        pj_sb_appendf(sb, "%s'%s' (%d kernels:", tables ? ", " : "", table->name,
                      table->kernel_count);
        for (int i = 0, archs = 0; i < table->kernel_count; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = strcmp(table->kernels[j].arch, table->kernels[i].arch) == 0;
            if (!seen)
                pj_sb_appendf(sb, "%s%s", archs++ ? ", " : " ", table->kernels[i].arch);
        }
        pj_sb_append(sb, ")");
    }
}

ptxjit_status pj_aot_refuse(const ptxjit_kernel *kernel, ptxjit_status status)
{
    if (status != PTXJIT_ERR_NO_COMPILER || !first_node(kernel->context) || !kernel->canonical)
        return status;
    const ptxjit_aot_kernel *stale;
    const ptxjit_aot_table *stale_table = NULL;
    (void)search(kernel, &stale, &stale_table);
    pj_strbuf sb;
    pj_sb_init(&sb);
    const char *options = kernel->compile_options.canonical;
    pj_sb_appendf(&sb, "%s %s%s%s for %s is not in the registered AOT tables ",
                  kernel->schema->family, kernel->canonical, options && *options ? " " : "",
                  options ? options : "", kernel->context->arch);
    describe_tables(&sb, kernel->context);
    if (stale)
        pj_sb_appendf(&sb, "; table '%s' holds it built from another text of the template "
                           "than %s (template hash %s)",
                      stale_table->name, kernel->schema->origin, stale->template_hash);
    pj_sb_appendf(&sb, ", and no compiler can build it: %s\nfix: add '%s %s' to the request "
                       "list and regenerate the table (ptxjit aot LIST -o FILE.c --arch %s,...)",
                  ptxjit_last_error(), kernel->schema->family, kernel->canonical,
                  kernel->context->arch);
    status = pj_error(status, "%s", sb.data ? sb.data : "out of memory");
    pj_sb_free(&sb);
    return status;
}

/* ---- records ---- */

const char *pj_aot_winner(ptxjit_context *context, const pj_schema *schema, const char *backend,
                          const char *fixed, const char *problem)
{
    const char *winner = NULL;
    double best_rank = 0;
    for (const pj_aot_node *node = first_node(context); node; node = next_node(node)) {
        const ptxjit_aot_table *table = node->table;
        for (int i = 0; i < table->record_count; i++) {
            const ptxjit_aot_record *r = &table->records[i];
            double rank = arch_rank(r->arch, context->arch);
            if (rank > best_rank && strcmp(r->family, schema->family) == 0 &&
                strcmp(r->backend, backend) == 0 && strcmp(r->fixed, fixed) == 0 &&
                strcmp(r->problem, problem) == 0 && same_template(r->template_hash, schema)) {
                winner = r->winner;
                best_rank = rank;
            }
        }
    }
    return winner;
}

ptxjit_status pj_aot_kernel_identity(char template_hash[33], char compiler[64],
                                     const char **backend, const ptxjit_kernel *kernel)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "kernel is NULL");
    pj_hash_hex(&kernel->schema->source_hash, template_hash);
    pj_copy_string(compiler, 64, kernel->compiler_version);
    *backend = kernel->route->name;
    return PTXJIT_OK;
}
