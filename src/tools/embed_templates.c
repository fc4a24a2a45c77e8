/* embed_templates.c — build tool: writes a C file holding each template's text and its
 * schema, so that the library carries its built-in kernel families without reading or
 * parsing anything at run time. The text is stored as the registry keeps templates (no byte
 * order mark, LF line ends); the schema is what pj_schema_parse makes of that text (this tool
 * links the parser itself), written out as static C data: parameters, expression trees,
 * constraints, tune lines, entries and the text's hash, which the cache key holds. A template
 * that does not parse fails the build with the parser's message. The test suite checks that
 * each embedded schema equals a parse of its text at run time (test_templates.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/expr_node.h"
#include "params/schema.h"

/* The whole file, normalized as pj_template_normalize does; NULL on failure. */
static char *read_normalized(const char *path)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        perror(path);
        return NULL;
    }
    size_t capacity = 1 << 16, length = 0;
    char *text = malloc(capacity);
    int c, previous = EOF;
    while (text && (c = fgetc(in)) != EOF) {
        if (length + 2 >= capacity && !(text = realloc(text, capacity *= 2)))
            break;
        if (previous == '\r' && c == '\n')
            length--; /* CRLF -> LF */
        text[length++] = (char)c;
        previous = c;
    }
    fclose(in);
    if (!text) {
        fprintf(stderr, "%s: out of memory\n", path);
        return NULL;
    }
    text[length] = '\0';
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        memmove(text, text + 3, length - 2);
    return text;
}

/* ---- C literals ---- */

/* A C string literal of text (octal escapes for anything but plain printable ASCII), or
 * NULL. */
static void emit_string(FILE *out, const char *text)
{
    if (!text) {
        fputs("NULL", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if (*s >= 0x20 && *s < 0x7f && *s != '?') /* '?': no trigraphs */
            fputc(*s, out);
        else
            fprintf(out, "\\%03o", *s);
    }
    fputc('"', out);
}

static void emit_int64(FILE *out, int64_t value)
{
    if (value == INT64_MIN)
        fputs("INT64_MIN", out);
    else
        fprintf(out, "INT64_C(%" PRId64 ")", value);
}

/* "static char *NAME[] = {...};" of count strings; nothing (and "NULL" as its name later)
 * when count is 0, as the parser leaves an empty list. */
static void emit_strings(FILE *out, const char *name, char *const *strings, int count)
{
    if (count == 0)
        return;
    fprintf(out, "static char *%s[] = {", name);
    for (int i = 0; i < count; i++) {
        fputs(i ? ", " : "", out);
        emit_string(out, strings[i]);
    }
    fputs("};\n", out);
}

static const char *or_null(const char *name, int count)
{
    return count ? name : "NULL";
}

/* ---- expressions: children before parents, each a static node ---- */

typedef struct {
    FILE *out;
    const char *prefix; /* "sN": the schema's */
    int nodes;
} emitter;

/* Writes e's tree and returns the number of its root node (-1 for NULL). */
static int emit_expr(emitter *em, const pj_expr *e)
{
    if (!e)
        return -1;
    int left = emit_expr(em, e->left), right = emit_expr(em, e->right);
    static const char *const kinds[] = {"PJ_EXPR_CONST", "PJ_EXPR_PARAM", "PJ_EXPR_BYTES",
                                        "PJ_EXPR_NOT",   "PJ_EXPR_NEG",   "PJ_EXPR_BINARY"};
    int number = em->nodes++;
    fprintf(em->out, "static pj_expr %s_e%d = {%s, ", em->prefix, number, kinds[e->kind]);
    emit_int64(em->out, e->value);
    fputs(", ", em->out);
    emit_string(em->out, e->op);
    if (left >= 0)
        fprintf(em->out, ", &%s_e%d", em->prefix, left);
    else
        fputs(", NULL", em->out);
    if (right >= 0)
        fprintf(em->out, ", &%s_e%d};\n", em->prefix, right);
    else
        fputs(", NULL};\n", em->out);
    return number;
}

/* "&sN_eK" or "NULL" for a root written by emit_expr. */
static void expr_ref(char *out, size_t size, const emitter *em, int root)
{
    if (root < 0)
        snprintf(out, size, "NULL");
    else
        snprintf(out, size, "&%s_e%d", em->prefix, root);
}

/* ---- a schema ---- */

/* The arrays of parameter i: values, dtypes, default_if cases and their trees. */
static void emit_param_arrays(emitter *em, const pj_param *p, int i, char when[64])
{
    FILE *out = em->out;
    char name[64];
    snprintf(name, sizeof name, "%s_p%d_values", em->prefix, i);
    emit_strings(out, name, p->values, p->value_count);
    if (p->dtypes) {
        fprintf(out, "static int %s_p%d_dtypes[] = {", em->prefix, i);
        for (int v = 0; v < p->value_count; v++)
            fprintf(out, "%s%d", v ? ", " : "", p->dtypes[v]);
        fputs("};\n", out);
    }
    snprintf(name, sizeof name, "%s_p%d_case_text", em->prefix, i);
    emit_strings(out, name, p->case_text, p->case_count);
    snprintf(name, sizeof name, "%s_p%d_case_value_text", em->prefix, i);
    emit_strings(out, name, p->case_value_text, p->case_count);
    int roots[64];
    if (p->case_count > (int)(sizeof roots / sizeof *roots)) {
        fprintf(stderr, "embed_templates: parameter %s has more than 64 default_if cases\n",
                p->name);
        exit(1);
    }
    for (int c = 0; c < p->case_count; c++)
        roots[c] = emit_expr(em, p->case_when[c]);
    /* One more slot than cases, NULL, as the parser allocates it. */
    fprintf(out, "static pj_expr *%s_p%d_case_when[] = {", em->prefix, i);
    for (int c = 0; c < p->case_count; c++) {
        char ref[64];
        expr_ref(ref, sizeof ref, em, roots[c]);
        fprintf(out, "%s, ", ref);
    }
    fputs("NULL};\n", out);
    if (p->case_count) {
        fprintf(out, "static int64_t %s_p%d_case_value[] = {", em->prefix, i);
        for (int c = 0; c < p->case_count; c++) {
            fputs(c ? ", " : "", out);
            emit_int64(out, p->case_value[c]);
        }
        fputs("};\n", out);
    }
    expr_ref(when, 64, em, emit_expr(em, p->when));
}

static void emit_param(emitter *em, const pj_param *p, int i, const char *when)
{
    FILE *out = em->out;
    static const char *const kinds[] = {"PJ_PARAM_INT", "PJ_PARAM_ENUM", "PJ_PARAM_DTYPE"};
    char values[64], dtypes[64], case_text[64], case_value[64], case_value_text[64];
    snprintf(values, sizeof values, "%s_p%d_values", em->prefix, i);
    snprintf(dtypes, sizeof dtypes, "%s_p%d_dtypes", em->prefix, i);
    snprintf(case_text, sizeof case_text, "%s_p%d_case_text", em->prefix, i);
    snprintf(case_value, sizeof case_value, "%s_p%d_case_value", em->prefix, i);
    snprintf(case_value_text, sizeof case_value_text, "%s_p%d_case_value_text", em->prefix, i);
    fputs("    {.name = ", out);
    emit_string(out, p->name);
    fprintf(out, ", .kind = %s, .min = ", kinds[p->kind]);
    emit_int64(out, p->min);
    fputs(", .max = ", out);
    emit_int64(out, p->max);
    fprintf(out, ", .pow2 = %d,\n     .values = %s, .dtypes = %s, .value_count = %d, "
                 ".default_value = ",
            p->pow2, or_null(values, p->value_count), p->dtypes ? dtypes : "NULL",
            p->value_count);
    emit_int64(out, p->default_value);
    fputs(", .default_text = ", out);
    emit_string(out, p->default_text);
    fprintf(out, ",\n     .case_count = %d, .case_text = %s, .case_when = %s_p%d_case_when, "
                 ".case_value = %s, .case_value_text = %s,\n     .doc = ",
            p->case_count, or_null(case_text, p->case_count), em->prefix, i,
            or_null(case_value, p->case_count), or_null(case_value_text, p->case_count));
    emit_string(out, p->doc);
    fputs(", .when_text = ", out);
    emit_string(out, p->when_text);
    fprintf(out, ", .when = %s},\n", when);
}

static void emit_params(emitter *em, const pj_schema *schema)
{
    if (schema->param_count == 0)
        return;
    char (*when)[64] = calloc((size_t)schema->param_count, sizeof *when);
    if (!when) {
        fputs("embed_templates: out of memory\n", stderr);
        exit(1);
    }
    for (int i = 0; i < schema->param_count; i++)
        emit_param_arrays(em, &schema->params[i], i, when[i]);
    fprintf(em->out, "static pj_param %s_params[] = {\n", em->prefix);
    for (int i = 0; i < schema->param_count; i++)
        emit_param(em, &schema->params[i], i, when[i]);
    fputs("};\n", em->out);
    free(when);
}

static void emit_constraints(emitter *em, const pj_schema *schema)
{
    if (schema->constraint_count == 0)
        return;
    int *roots = calloc((size_t)schema->constraint_count, sizeof *roots);
    if (!roots) {
        fputs("embed_templates: out of memory\n", stderr);
        exit(1);
    }
    for (int i = 0; i < schema->constraint_count; i++)
        roots[i] = emit_expr(em, schema->constraints[i].expr);
    fprintf(em->out, "static pj_constraint %s_constraints[] = {\n", em->prefix);
    for (int i = 0; i < schema->constraint_count; i++) {
        char ref[64];
        expr_ref(ref, sizeof ref, em, roots[i]);
        fputs("    {", em->out);
        emit_string(em->out, schema->constraints[i].text);
        fprintf(em->out, ", %s, ", ref);
        emit_string(em->out, schema->constraints[i].message);
        fprintf(em->out, ", %d},\n", schema->constraints[i].line);
    }
    fputs("};\n", em->out);
    free(roots);
}

static void emit_tunes(emitter *em, const pj_schema *schema)
{
    if (schema->tune_count == 0)
        return;
    fprintf(em->out, "static pj_tune_line %s_tunes[] = {\n", em->prefix);
    for (int i = 0; i < schema->tune_count; i++) {
        const pj_tune_line *t = &schema->tunes[i];
        fputs("    {", em->out);
        emit_string(em->out, t->param_name);
        fprintf(em->out, ", %d, ", t->param);
        emit_string(em->out, t->values);
        fprintf(em->out, ", %d},\n", t->line);
    }
    fputs("};\n", em->out);
}

/* The schema as static data named sN_schema; its source is the embedded text template_N. */
static void emit_schema(FILE *out, const pj_schema *schema, int index)
{
    char prefix[16], name[64];
    snprintf(prefix, sizeof prefix, "s%d", index);
    emitter em = {out, prefix, 0};
    emit_params(&em, schema);
    emit_constraints(&em, schema);
    emit_tunes(&em, schema);
    snprintf(name, sizeof name, "%s_entries", prefix);
    emit_strings(out, name, schema->entries, schema->entry_count);
    fprintf(out, "static pj_schema %s_schema = {\n    .family = ", prefix);
    emit_string(out, schema->family);
    fputs(",\n    .doc = ", out);
    emit_string(out, schema->doc);
    fputs(",\n    .origin = ", out);
    emit_string(out, schema->origin);
    fprintf(out, ",\n    .source = (char *)template_%d,\n", index);
    fprintf(out, "    .source_hash = {UINT64_C(0x%016" PRIx64 "), UINT64_C(0x%016" PRIx64 ")},\n",
            schema->source_hash.low, schema->source_hash.high);
    fprintf(out, "    .params = %s%s, .param_count = %d,\n", schema->param_count ? prefix : "NULL",
            schema->param_count ? "_params" : "", schema->param_count);
    fprintf(out, "    .constraints = %s%s, .constraint_count = %d,\n",
            schema->constraint_count ? prefix : "NULL",
            schema->constraint_count ? "_constraints" : "", schema->constraint_count);
    fprintf(out, "    .entries = %s%s, .entry_count = %d,\n", prefix, "_entries",
            schema->entry_count);
    fprintf(out, "    .tunes = %s%s, .tune_count = %d,\n", schema->tune_count ? prefix : "NULL",
            schema->tune_count ? "_tunes" : "", schema->tune_count);
    fprintf(out, "    .nvrtc_half_storage = %d, .nvrtc_minimal = %d, .nvrtc_fast_compile = %d};\n\n",
            schema->nvrtc_half_storage, schema->nvrtc_minimal, schema->nvrtc_fast_compile);
}

/* ---- a template ---- */

static void emit_text(FILE *out, const char *text, int index)
{
    fprintf(out, "static const char template_%d[] = {", index);
    int column = 0;
    for (const char *s = text; *s; s++)
        fprintf(out, "%s%d,", column++ % 20 ? "" : "\n", (unsigned char)*s);
    fprintf(out, "0};\n");
}

/* The family's name (from its schema) into family; 1 on failure, said on stderr. */
static int embed_one(FILE *out, const char *path, int index, char *family, size_t size)
{
    char *text = read_normalized(path);
    if (!text)
        return 1;
    const char *base = strrchr(path, '/');
    char origin[4200];
    snprintf(origin, sizeof origin, PJ_ORIGIN_BUILTIN "%s", base ? base + 1 : path);
    pj_schema *schema = NULL;
    if (pj_schema_parse(&schema, text, origin) != PTXJIT_OK) {
        fprintf(stderr, "%s: %s\n", path, ptxjit_last_error());
        free(text);
        return 1;
    }
    emit_text(out, text, index);
    emit_schema(out, schema, index);
    snprintf(family, size, "%s", schema->family);
    pj_schema_free(schema);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: embed_templates OUT.c TEMPLATE.cu...\n");
        return 2;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    char (*families)[64] = calloc((size_t)argc, sizeof *families);
    if (!families)
        return 1;
    fprintf(out, "/* generated by embed_templates: do not edit */\n#include <stddef.h>\n"
                 "#include <stdint.h>\n\n#include \"params/expr_node.h\"\n"
                 "#include \"request/templates.h\"\n\n");
    for (int i = 2; i < argc; i++)
        if (embed_one(out, argv[i], i - 2, families[i], sizeof families[i])) {
            fclose(out);
            remove(argv[1]); /* no half-written file for make to take as up to date */
            return 1;
        }
    fprintf(out, "const pj_embedded_template pj_embedded_templates[] = {\n");
    for (int i = 2; i < argc; i++) {
        const char *base = strrchr(argv[i], '/');
        base = base ? base + 1 : argv[i];
        fprintf(out, "    {\"%s\", \"" PJ_ORIGIN_BUILTIN "%s\", \"%s\", template_%d, &s%d_schema},\n", base,
                base, families[i], i - 2, i - 2);
    }
    fprintf(out, "    {NULL, NULL, NULL, NULL, NULL}};\n\npj_template pj_builtin_templates[] = {\n");
    for (int i = 2; i < argc; i++) {
        const char *base = strrchr(argv[i], '/');
        base = base ? base + 1 : argv[i];
        fprintf(out, "    {.schema = &s%d_schema, .family = \"%s\", .origin = \"" PJ_ORIGIN_BUILTIN "%s\"},\n",
                i - 2, families[i], base);
    }
    fprintf(out, "};\nconst int pj_builtin_template_count = %d;\n", argc - 2);
    free(families);
    return fclose(out) != 0;
}
