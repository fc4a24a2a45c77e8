/* schema.c — reads a template's "//@ptxjit" directives into its family schema:
 *   //@ptxjit family NAME            //@ptxjit doc TEXT           //@ptxjit entry NAME
 *   //@ptxjit param NAME int(MIN..MAX)|enum(a,b)|dtype(i32,f32) [pow2] [default=V]
 *                       [when="EXPR"] [doc="TEXT"]
 *   //@ptxjit constraint "EXPR" "MESSAGE"
 *   //@ptxjit tune NAME VALUES       (the values a tuning tries: tune/space.h) */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/schema.h"
#include "params/values.h"

#define MAX_WORDS 16

typedef struct {
    const char *origin;
    int line;
} where;

static ptxjit_status bad(const where *at, const char *format, const char *detail)
{
    char what[512];
    snprintf(what, sizeof what, format, detail);
    return pj_error(PTXJIT_ERR_TEMPLATE, "%s:%d: %s", at->origin, at->line, what);
}

/* Splits a directive line into words; "quoted strings" keep spaces, \" and \\ escape. The
 * words are written into buf (same size as line). Returns the count, or -1 on a bad quote. */
static int split_words(const char *line, char *buf, char **words)
{
    int count = 0;
    const char *s = line;
    char *o = buf;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (count == MAX_WORDS)
            return -1;
        words[count++] = o;
        int quoted = 0;
        while (*s && (quoted || (*s != ' ' && *s != '\t'))) {
            if (*s == '"') {
                quoted = !quoted;
                s++;
            } else if (quoted && *s == '\\' && s[1]) {
                *o++ = s[1];
                s += 2;
            } else {
                *o++ = *s++;
            }
        }
        if (quoted)
            return -1;
        *o++ = '\0';
    }
    return count;
}

/* A value of an enum: letters, digits and '_', e.g. "vectorized" or "128B". */
static int is_value_name(const char *text)
{
    if (!*text)
        return 0;
    for (; *text; text++)
        if (!isalnum((unsigned char)*text) && *text != '_')
            return 0;
    return 1;
}

static int is_name(const char *text)
{
    if (!isalpha((unsigned char)*text) && *text != '_')
        return 0;
    for (; *text; text++)
        if (!isalnum((unsigned char)*text) && *text != '_')
            return 0;
    return 1;
}

static int append_string(char ***list, int *count, const char *text)
{
    char **grown = realloc(*list, (size_t)(*count + 1) * sizeof **list);
    if (!grown)
        return 0;
    *list = grown;
    grown[*count] = pj_strdup(text);
    if (!grown[*count])
        return 0;
    (*count)++;
    return 1;
}

static int parse_int(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || end == text || *end)
        return 0;
    *out = value;
    return 1;
}

/* "int(32..1024)", "enum(a,b)" or "dtype(i32,f32)" into param. */
static ptxjit_status parse_type(pj_param *param, const char *type, const where *at)
{
    const char *open = strchr(type, '(');
    size_t length = strlen(type);
    if (!open || type[length - 1] != ')')
        return bad(at, "parameter type '%s' must be int(MIN..MAX), enum(...) or dtype(...)",
                   type);
    char inner[512];
    size_t n = length - (size_t)(open - type) - 2;
    if (n >= sizeof inner)
        return bad(at, "parameter type '%s' is too long", type);
    memcpy(inner, open + 1, n);
    inner[n] = '\0';
    if (strncmp(type, "int(", 4) == 0) {
        param->kind = PJ_PARAM_INT;
        char *dots = strstr(inner, "..");
        if (!dots)
            return bad(at, "int range '%s' must be written MIN..MAX", type);
        *dots = '\0';
        if (!parse_int(inner, &param->min) || !parse_int(dots + 2, &param->max) ||
            param->min > param->max)
            return bad(at, "int range '%s' must be MIN..MAX with MIN <= MAX", type);
        return PTXJIT_OK;
    }
    if (strncmp(type, "enum(", 5) == 0)
        param->kind = PJ_PARAM_ENUM;
    else if (strncmp(type, "dtype(", 6) == 0)
        param->kind = PJ_PARAM_DTYPE;
    else
        return bad(at, "unknown parameter type '%s' (int, enum, dtype)", type);
    char *save = NULL; /* strtok_r: contexts may be opened from several threads at once */
    for (char *item = strtok_r(inner, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (!is_value_name(item))
            return bad(at, "value '%s' is not a name (letters, digits, '_')", item);
        if (strspn(item, "0123456789") == strlen(item)) /* an expression reads it as a number */
            return bad(at, "value '%s' is a number, which an expression would read as one; "
                           "give it a name that starts with a letter or '_'",
                       item);
        if (strcmp(item, "auto") == 0) /* a request's auto asks the tuner for the value */
            return bad(at, "value '%s' is reserved (a request's PARAM=auto); choose another",
                       item);
        for (int i = 0; i < param->value_count; i++)
            if (strcmp(param->values[i], item) == 0)
                return bad(at, "value '%s' is listed twice", item);
        if (!append_string(&param->values, &param->value_count, item))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (param->value_count == 0)
        return bad(at, "type '%s' lists no values", type);
    if (param->kind == PJ_PARAM_DTYPE) {
        param->dtypes = calloc((size_t)param->value_count, sizeof *param->dtypes);
        if (!param->dtypes)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        for (int i = 0; i < param->value_count; i++) {
            param->dtypes[i] = pj_dtype_from_name(param->values[i]);
            if (param->dtypes[i] < 0)
                return bad(at, "unknown dtype '%s' (i32 u32 i64 f16 bf16 f32 f64)",
                           param->values[i]);
        }
    }
    return PTXJIT_OK;
}

/* A value of param written in a template (default= or default_if=), as its stored form. */
static ptxjit_status parse_default(const pj_param *param, const char *text, int64_t *out,
                                   const where *at)
{
    if (param->kind == PJ_PARAM_INT) {
        int64_t v;
        if (!parse_int(text, &v) || v < param->min || v > param->max ||
            (param->pow2 && !pj_is_power_of_two(v)))
            return bad(at, "default '%s' is outside the parameter's own range", text);
        *out = v;
        return PTXJIT_OK;
    }
    int index = pj_param_value_index(param, text);
    if (index < 0)
        return bad(at, "default '%s' is not one of the listed values", text);
    *out = index;
    return PTXJIT_OK;
}

/* A stored value as a request writes it. Kept with the schema, so that introspection
 * (ptxjit_family_param) can hand out text that lives as long as the context. */
static char *value_text(const pj_param *param, int64_t value)
{
    if (param->kind != PJ_PARAM_INT)
        return pj_strdup(param->values[value]);
    char number[24];
    snprintf(number, sizeof number, "%lld", (long long)value);
    return pj_strdup(number);
}

/* default_if="EXPR => VALUE": the value now, the expression once all parameters are known. */
static ptxjit_status parse_default_case(pj_param *param, const char *text, const where *at)
{
    const char *arrow = strstr(text, "=>");
    if (!arrow)
        return bad(at, "default_if '%s' must be written \"EXPR => VALUE\"", text);
    const char *value = arrow + 2;
    while (*value == ' ')
        value++;
    size_t n = (size_t)(arrow - text);
    while (n && text[n - 1] == ' ')
        n--;
    int64_t v;
    ptxjit_status status = parse_default(param, value, &v, at);
    if (status != PTXJIT_OK)
        return status;
    int count = param->case_count;
    char *condition = pj_strndup(text, n), *shown = value_text(param, v);
    int64_t *values = realloc(param->case_value, (size_t)(count + 1) * sizeof *values);
    if (values)
        param->case_value = values;
    char **texts = realloc(param->case_value_text, (size_t)(count + 1) * sizeof *texts);
    if (texts)
        param->case_value_text = texts;
    /* case_count grows last, so that a failure leaves no half-made case behind for free. */
    if (!condition || !shown || !values || !texts ||
        !append_string(&param->case_text, &param->case_count, condition)) {
        free(condition);
        free(shown);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    free(condition);
    param->case_value[count] = v;
    param->case_value_text[count] = shown;
    return PTXJIT_OK;
}

/* One of pow2, default=, default_if=, when=, doc=; each but default_if= at most once, so
 * that no value is silently replaced (or leaked) by a second one. */
static ptxjit_status parse_attribute(pj_param *param, const char **default_text,
                                     const char *word, const where *at)
{
    const char *name = word;
    if (strcmp(word, "pow2") == 0 && param->kind == PJ_PARAM_INT) {
        if (!param->pow2) {
            param->pow2 = 1;
            return PTXJIT_OK;
        }
    } else if (strncmp(word, "default_if=", 11) == 0) {
        return parse_default_case(param, word + 11, at); /* one per case: may repeat */
    } else if (strncmp(word, "default=", 8) == 0) {
        name = "default=";
        if (!*default_text) {
            *default_text = word + 8;
            return PTXJIT_OK;
        }
    } else {
        char **text = strncmp(word, "when=", 5) == 0  ? &param->when_text
                      : strncmp(word, "doc=", 4) == 0 ? &param->doc
                                                      : NULL;
        if (!text)
            return bad(at, "unknown param attribute '%s' (pow2 for int, default=, default_if=, "
                           "when=, doc=)",
                       word);
        name = text == &param->doc ? "doc=" : "when=";
        if (!*text) {
            *text = pj_strdup(strchr(word, '=') + 1);
            return *text ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    return bad(at, "param attribute '%s' is given twice; keep one", name);
}

static ptxjit_status parse_param(pj_schema *schema, char **words, int count, const where *at)
{
    if (count < 3)
        return bad(at, "%s", "param needs a name and a type");
    if (!is_name(words[1]))
        return bad(at, "parameter name '%s' is not a name", words[1]);
    /* backend= is taken out of a request before its parameters are read; sm and bytes mean
     * the target and a dtype's size in expressions: a parameter of these names could never
     * be set, or would change what an expression means. */
    static const char *const reserved[] = {"backend", "sm", "bytes"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(words[1], reserved[i]) == 0)
            return bad(at, "parameter name '%s' is reserved (backend, sm, bytes); choose "
                           "another",
                       words[1]);
    if (pj_schema_param_index(schema, words[1]) >= 0)
        return bad(at, "parameter '%s' is declared twice", words[1]);
    pj_param *grown = realloc(schema->params, (size_t)(schema->param_count + 1) * sizeof *grown);
    if (!grown)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    schema->params = grown;
    pj_param *param = &grown[schema->param_count++];
    memset(param, 0, sizeof *param);
    param->line = at->line;
    if (!(param->name = pj_strdup(words[1])))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = parse_type(param, words[2], at);
    const char *default_text = NULL;
    for (int i = 3; i < count && status == PTXJIT_OK; i++)
        status = parse_attribute(param, &default_text, words[i], at);
    if (status != PTXJIT_OK)
        return status;
    /* A default_if read before a later `pow2` word was checked without it. */
    for (int c = 0; param->pow2 && c < param->case_count; c++)
        if (!pj_is_power_of_two(param->case_value[c]))
            return bad(at, "default_if value '%s' is not a power of two, as pow2 requires",
                       param->case_value_text[c] ? param->case_value_text[c] : "?");
    if (!default_text)
        return bad(at, "parameter '%s' needs default=", param->name);
    status = parse_default(param, default_text, &param->default_value, at);
    if (status == PTXJIT_OK && !(param->default_text = value_text(param, param->default_value)))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return status;
}

/* `tune NAME VALUES`: checked once every parameter is declared (check_tunes). */
static ptxjit_status parse_tune(pj_schema *schema, char **words, int count, const where *at)
{
    if (count != 3 || !is_name(words[1]))
        return bad(at, "%s", "expected 'tune PARAM VALUES' (e.g. tune tpb 128,256,512 or "
                             "tune batch 1..16)");
    pj_tune_line *grown = realloc(schema->tunes, (size_t)(schema->tune_count + 1) * sizeof *grown);
    if (!grown)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    schema->tunes = grown;
    pj_tune_line *tune = &grown[schema->tune_count++];
    tune->param = -1;
    tune->line = at->line;
    tune->param_name = pj_strdup(words[1]);
    tune->values = pj_strdup(words[2]);
    if (!tune->param_name || !tune->values)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return PTXJIT_OK;
}

/* "NAME" or "NAME_VALUE" upper-cased, as the prelude writes it (specialize.c). */
static char *prelude_name(const char *name, const char *value)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, value ? "%s_%s" : "%s", name, value ? value : "");
    for (char *c = sb.data; c && *c; c++)
        *c = (char)toupper((unsigned char)*c);
    return pj_sb_take(&sb);
}

/* The prelude defines NAME for each parameter, NAME_VALUE for each listed value and NAME_ID
 * for a dtype, upper-cased: two parameters or values that meet there (tpb and TPB; a_b=c and
 * a=b_c) would only fail later as a C++ redefinition, so they are refused here. */
static ptxjit_status check_prelude_names(const pj_schema *schema, const char *origin)
{
    int count = 0, capacity = 0;
    char **names = NULL;
    const char **owners = NULL;
    ptxjit_status status = PTXJIT_OK;
    for (int p = 0; p < schema->param_count && status == PTXJIT_OK; p++) {
        const pj_param *param = &schema->params[p];
        int extra = param->kind == PJ_PARAM_DTYPE;
        for (int v = -1; v < param->value_count + extra && status == PTXJIT_OK; v++) {
            const char *value = v < 0 ? NULL : v < param->value_count ? param->values[v] : "ID";
            char *name = prelude_name(param->name, value);
            if (count == capacity) {
                capacity = capacity ? 2 * capacity : 32;
                char **grown = realloc(names, (size_t)capacity * sizeof *names);
                names = grown ? grown : names;
                const char **grown_owners =
                    grown ? realloc(owners, (size_t)capacity * sizeof *owners) : NULL;
                owners = grown_owners ? grown_owners : owners;
                if (!grown || !grown_owners) {
                    free(name);
                    status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
                    break;
                }
            }
            if (!name) {
                status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            for (int i = 0; i < count && status == PTXJIT_OK; i++)
                if (strcmp(names[i], name) == 0)
                    status = pj_error(PTXJIT_ERR_TEMPLATE,
                                      "%s: parameter '%s' and parameter '%s' both define %s in "
                                      "the prelude (names and values are upper-cased, joined "
                                      "by '_'); rename one",
                                      origin, owners[i], param->name, name);
            names[count] = name;
            owners[count++] = param->name;
        }
    }
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
    free(owners);
    return status;
}

/* Each tune line names a declared parameter, once, with values its type allows. */
static ptxjit_status check_tunes(pj_schema *schema, const char *origin)
{
    for (int i = 0; i < schema->tune_count; i++) {
        pj_tune_line *tune = &schema->tunes[i];
        where at = {origin, tune->line};
        tune->param = pj_schema_param_index(schema, tune->param_name);
        if (tune->param < 0)
            return bad(&at, "tune names '%s', which is not a declared parameter",
                       tune->param_name);
        for (int j = 0; j < i; j++)
            if (schema->tunes[j].param == tune->param)
                return bad(&at, "parameter '%s' has two tune lines; keep one",
                           tune->param_name);
        int64_t *values = NULL;
        int count = 0;
        ptxjit_status status =
            pj_tune_values_parse(&values, &count, &schema->params[tune->param], tune->values);
        free(values);
        if (status == PTXJIT_ERR_PARAM) { /* the message is copied: pj_error rewrites it */
            char why[1024];
            snprintf(why, sizeof why, "%s", ptxjit_last_error());
            return pj_error(PTXJIT_ERR_TEMPLATE, "%s:%d: %s", origin, tune->line, why);
        }
        if (status != PTXJIT_OK)
            return status;
    }
    return PTXJIT_OK;
}

static const char *const fast_compile_levels[] = {
#define PJ_FAST_COMPILE_NAME(name) #name,
    PJ_FAST_COMPILE_LEVELS(PJ_FAST_COMPILE_NAME)
#undef PJ_FAST_COMPILE_NAME
};

/* "fast_compile=LEVEL": the level's value, or 0 when the word is not one. */
static int fast_compile_word(const char *word)
{
    const char *prefix = "fast_compile=";
    if (strncmp(word, prefix, strlen(prefix)) != 0)
        return 0;
    for (int i = 0; i < (int)PJ_ARRAY_SIZE(fast_compile_levels); i++)
        if (strcmp(word + strlen(prefix), fast_compile_levels[i]) == 0)
            return i + 1;
    return 0;
}

/* `nvrtc WORD...`: what a template promises about itself so that NVRTC may parse less, or
 * compile faster (docs/TEMPLATES.md, "What NVRTC may leave out"). */
static ptxjit_status parse_nvrtc(pj_schema *schema, char **words, int count, const where *at)
{
    if (count < 2)
        return bad(at, "%s", "expected 'nvrtc WORD...' with WORD half_storage, minimal or "
                             "fast_compile=min|mid|max");
    for (int i = 1; i < count; i++) {
        if (strcmp(words[i], "half_storage") == 0)
            schema->nvrtc_half_storage = 1;
        else if (strcmp(words[i], "minimal") == 0)
            schema->nvrtc_minimal = 1;
        else if (fast_compile_word(words[i]) && !schema->nvrtc_fast_compile)
            schema->nvrtc_fast_compile = fast_compile_word(words[i]);
        else
            return bad(at, "unknown or repeated nvrtc word '%s' (half_storage, minimal, "
                           "fast_compile=min|mid|max)",
                       words[i]);
    }
    return PTXJIT_OK;
}

static ptxjit_status parse_directive(pj_schema *schema, const char *line, const where *at)
{
    char buf[2048], *words[MAX_WORDS];
    if (strlen(line) >= sizeof buf)
        return bad(at, "%s", "directive line too long");
    if (strncmp(line, "doc", 3) == 0 && (line[3] == ' ' || line[3] == '\t')) {
        free(schema->doc); /* free text: not split into words */
        schema->doc = pj_strdup(line + 4);
        return schema->doc ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    int count = split_words(line, buf, words);
    if (count < 0)
        return bad(at, "%s", "unbalanced quotes or too many words");
    if (count == 0)
        return bad(at, "%s", "empty directive");
    const char *verb = words[0];
    if (strcmp(verb, "family") == 0) {
        if (count != 2 || !is_name(words[1]) || schema->family)
            return bad(at, "%s", "expected one 'family NAME' line with a plain name");
        if (!(schema->family = pj_strdup(words[1])))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    } else if (strcmp(verb, "entry") == 0) {
        if (count != 2 || !is_name(words[1]))
            return bad(at, "%s", "expected 'entry NAME'");
        if (!append_string(&schema->entries, &schema->entry_count, words[1]))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    } else if (strcmp(verb, "param") == 0) {
        return parse_param(schema, words, count, at);
    } else if (strcmp(verb, "constraint") == 0) {
        if (count != 3)
            return bad(at, "%s", "expected 'constraint \"EXPR\" \"MESSAGE\"'");
        pj_constraint *grown = realloc(schema->constraints,
                                       (size_t)(schema->constraint_count + 1) * sizeof *grown);
        if (!grown)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        schema->constraints = grown;
        pj_constraint *c = &grown[schema->constraint_count++];
        c->text = pj_strdup(words[1]);
        c->message = pj_strdup(words[2]);
        c->expr = NULL;
        c->line = at->line; /* its expression is parsed later, once every param is known */
        if (!c->text || !c->message)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    } else if (strcmp(verb, "tune") == 0) {
        return parse_tune(schema, words, count, at);
    } else if (strcmp(verb, "nvrtc") == 0) {
        return parse_nvrtc(schema, words, count, at);
    } else {
        return bad(at, "unknown directive '%s' (family, doc, entry, param, constraint, tune, "
                       "nvrtc)",
                   verb);
    }
    return PTXJIT_OK;
}

/* Expressions may name any parameter, so they are parsed once all are declared. A failure
 * keeps its status: a bad expression is PTXJIT_ERR_TEMPLATE, running out of memory is not. */
static ptxjit_status parse_expressions(pj_schema *schema, const char *origin)
{
    ptxjit_status status;
    for (int i = 0; i < schema->param_count; i++) {
        pj_param *param = &schema->params[i];
        if (param->when_text &&
            (status = pj_expr_parse(&param->when, param->when_text, schema)) != PTXJIT_OK)
            return pj_error_wrap(status, "%s:%d: `when` of parameter '%s'", origin, param->line,
                                 param->name);
        param->case_when = calloc((size_t)param->case_count + 1, sizeof *param->case_when);
        if (!param->case_when)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        for (int c = 0; c < param->case_count; c++) {
            status = pj_expr_parse(&param->case_when[c], param->case_text[c], schema);
            if (status != PTXJIT_OK)
                return pj_error_wrap(status, "%s:%d: default_if of parameter '%s'", origin,
                                     param->line, param->name);
            /* Defaults are settled in declaration order; a later one is not known yet. */
            if (pj_expr_reads_params(param->case_when[c], i, schema->param_count))
                return pj_error(PTXJIT_ERR_TEMPLATE,
                                "%s:%d: default_if \"%s\" of parameter '%s' names '%s' or a "
                                "parameter declared after it; name only earlier ones",
                                origin, param->line, param->case_text[c], param->name,
                                param->name);
        }
    }
    for (int i = 0; i < schema->constraint_count; i++) {
        pj_constraint *c = &schema->constraints[i];
        if ((status = pj_expr_parse(&c->expr, c->text, schema)) != PTXJIT_OK)
            return pj_error_wrap(status, "%s:%d: constraint", origin, c->line);
    }
    return PTXJIT_OK;
}

const char *pj_directive_words(const char *line, const char *end, int *malformed)
{
    static const char mark[] = "//@ptxjit";
    *malformed = 0;
    while (line < end && (*line == ' ' || *line == '\t'))
        line++;
    if ((size_t)(end - line) < sizeof mark - 1 || strncmp(line, mark, sizeof mark - 1) != 0)
        return NULL;
    line += sizeof mark - 1;
    const char *words = line;
    while (words < end && (*words == ' ' || *words == '\t'))
        words++;
    if (words == line || words == end) { /* "//@ptxjitX..." or nothing after the mark */
        *malformed = 1;
        return NULL;
    }
    return words;
}

ptxjit_status pj_schema_parse(pj_schema **out, const char *source, const char *origin)
{
    pj_schema *schema = calloc(1, sizeof *schema);
    if (!schema)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    schema->origin = pj_strdup(origin);
    schema->source = pj_strdup(source);
    ptxjit_status status = schema->origin && schema->source
                               ? PTXJIT_OK
                               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    schema->source_hash = pj_hash(source, strlen(source));
    where at = {origin, 0};
    for (const char *line = source; *line && status == PTXJIT_OK;) {
        const char *end = line + strcspn(line, "\n");
        at.line++;
        int malformed;
        const char *words = pj_directive_words(line, end, &malformed);
        if (malformed)
            status = bad(&at, "%s", "a line that starts with //@ptxjit is a directive: write "
                                    "'//@ptxjit WORD ...' (a blank after //@ptxjit, then the "
                                    "directive), or start the comment otherwise");
        if (words) {
            char *text = pj_strndup(words, (size_t)(end - words));
            status = text ? parse_directive(schema, text, &at)
                          : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
            free(text);
        }
        line = *end ? end + 1 : end;
    }
    if (status == PTXJIT_OK && !schema->family)
        status = pj_error(PTXJIT_ERR_TEMPLATE,
                          "%s: no '//@ptxjit family NAME' line; every template names its family",
                          origin);
    if (status == PTXJIT_OK && schema->entry_count == 0)
        status = pj_error(PTXJIT_ERR_TEMPLATE,
                          "%s: no '//@ptxjit entry NAME' line; name the kernel's extern \"C\" "
                          "entry points",
                          origin);
    if (status == PTXJIT_OK)
        status = parse_expressions(schema, origin);
    if (status == PTXJIT_OK)
        status = check_tunes(schema, origin);
    if (status == PTXJIT_OK)
        status = check_prelude_names(schema, origin);
    if (status != PTXJIT_OK) {
        pj_schema_free(schema);
        return status;
    }
    *out = schema;
    return PTXJIT_OK;
}

void pj_schema_free(pj_schema *schema)
{
    if (!schema)
        return;
    for (int i = 0; i < schema->param_count; i++) {
        pj_param *param = &schema->params[i];
        free(param->name);
        for (int v = 0; v < param->value_count; v++)
            free(param->values[v]);
        free(param->values);
        free(param->dtypes);
        free(param->doc);
        free(param->when_text);
        pj_expr_free(param->when);
        for (int c = 0; c < param->case_count; c++) {
            free(param->case_text[c]);
            free(param->case_value_text[c]);
            if (param->case_when)
                pj_expr_free(param->case_when[c]);
        }
        free(param->case_text);
        free(param->case_when);
        free(param->case_value);
        free(param->case_value_text);
        free(param->default_text);
    }
    for (int i = 0; i < schema->constraint_count; i++) {
        free(schema->constraints[i].text);
        free(schema->constraints[i].message);
        pj_expr_free(schema->constraints[i].expr);
    }
    for (int i = 0; i < schema->tune_count; i++) {
        free(schema->tunes[i].param_name);
        free(schema->tunes[i].values);
    }
    free(schema->tunes);
    for (int i = 0; i < schema->entry_count; i++)
        free(schema->entries[i]);
    free(schema->entries);
    free(schema->params);
    free(schema->constraints);
    free(schema->family);
    free(schema->doc);
    free(schema->origin);
    free(schema->source);
    free(schema);
}

char *pj_schema_describe(const pj_schema *schema)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "family %s  (%s)\n", schema->family, schema->origin);
    if (schema->doc)
        pj_sb_appendf(&sb, "  %s\n", schema->doc);
    pj_sb_append(&sb, "\nparameters:\n");
    for (int i = 0; i < schema->param_count; i++) {
        const pj_param *param = &schema->params[i];
        pj_sb_appendf(&sb, "  %-10s default %-12s ", param->name, param->default_text);
        pj_schema_describe_allowed(&sb, param);
        pj_sb_append(&sb, "\n");
        if (param->doc)
            pj_sb_appendf(&sb, "  %-10s %s\n", "", param->doc);
        for (int c = 0; c < param->case_count; c++)
            pj_sb_appendf(&sb, "  %-10s default %s when %s\n", "", param->case_value_text[c],
                          param->case_text[c]);
        if (param->when_text)
            pj_sb_appendf(&sb, "  %-10s applies when %s\n", "", param->when_text);
    }
    if (schema->constraint_count) {
        pj_sb_append(&sb, "\nconstraints:\n");
        for (int i = 0; i < schema->constraint_count; i++)
            pj_sb_appendf(&sb, "  %s  (%s)\n", schema->constraints[i].text,
                       schema->constraints[i].message);
    }
    if (schema->tune_count) {
        pj_sb_append(&sb, "\ntuning space (ptxjit tune; a request's PARAM=auto takes the tuned "
                          "value):\n");
        for (int i = 0; i < schema->tune_count; i++)
            pj_sb_appendf(&sb, "  %-10s %s\n", schema->tunes[i].param_name,
                          schema->tunes[i].values);
    }
    pj_sb_append(&sb, "\nentries:");
    for (int i = 0; i < schema->entry_count; i++)
        pj_sb_appendf(&sb, " %s", schema->entries[i]);
    pj_sb_append(&sb, "\n");
    return pj_sb_take(&sb);
}
