/* expr.c — the small expression language of template constraints and `when` clauses,
 * parsed once per schema into a tree and evaluated per request. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/dtype.h"
#include "params/expr.h"
#include "params/expr_node.h"

/* Deeper nesting than any constraint needs; bounds the recursion of parse, eval and free. */
#define MAX_DEPTH 64

typedef struct {
    const char *text, *at;
    const pj_schema *schema;
    ptxjit_status status;
    int depth; /* parentheses and unary operators open at this point */
} expr_parser;

static pj_expr *parse_or(expr_parser *p);

static pj_expr *node(pj_expr_kind kind, int64_t value, pj_expr *left, pj_expr *right)
{
    pj_expr *e = calloc(1, sizeof *e);
    if (!e) {
        pj_expr_free(left);
        pj_expr_free(right);
        return NULL;
    }
    e->kind = kind;
    e->value = value;
    e->left = left;
    e->right = right;
    return e;
}

static pj_expr *fail(expr_parser *p, const char *why)
{
    if (p->status == PTXJIT_OK)
        p->status = pj_error(PTXJIT_ERR_TEMPLATE, "in expression \"%s\" at column %d: %s",
                             p->text, (int)(p->at - p->text) + 1, why);
    return NULL;
}

static void skip_space(expr_parser *p)
{
    while (isspace((unsigned char)*p->at))
        p->at++;
}

static int accept(expr_parser *p, const char *token)
{
    skip_space(p);
    size_t n = strlen(token);
    if (strncmp(p->at, token, n) != 0)
        return 0;
    /* "<" must not match the start of "<=", nor "!" of "!=". */
    if (n == 1 && strchr("<>!=", token[0]) && p->at[1] == '=')
        return 0;
    p->at += n;
    return 1;
}

/* An identifier is a parameter, `sm` (the target's compute capability, e.g. 90), or a value
 * name of an enum or dtype parameter. */
static pj_expr *resolve_identifier(expr_parser *p, const char *name)
{
    int index = pj_schema_param_index(p->schema, name);
    if (index >= 0)
        return node(PJ_EXPR_PARAM, index, NULL, NULL);
    if (strcmp(name, "sm") == 0) /* the slot after the parameters; see pj_request_parse */
        return node(PJ_EXPR_PARAM, p->schema->param_count, NULL, NULL);
    int found = -1;
    for (int i = 0; i < p->schema->param_count; i++) {
        const pj_param *param = &p->schema->params[i];
        for (int v = 0; v < param->value_count; v++) {
            if (strcmp(param->values[v], name) != 0)
                continue;
            if (found >= 0 && found != v)
                return fail(p, "value name belongs to two parameters at different positions");
            found = v;
        }
    }
    if (found < 0) {
        char why[160];
        snprintf(why, sizeof why, "unknown name '%s' (not a parameter or a value)", name);
        return fail(p, why);
    }
    return node(PJ_EXPR_CONST, found, NULL, NULL);
}

static pj_expr *parse_primary(expr_parser *p)
{
    skip_space(p);
    if (accept(p, "(")) {
        if (++p->depth > MAX_DEPTH)
            return fail(p, "nested too deeply");
        pj_expr *inner = parse_or(p);
        p->depth--;
        if (inner && !accept(p, ")")) {
            pj_expr_free(inner);
            return fail(p, "expected ')'");
        }
        return inner;
    }
    /* A word that starts with a digit but holds letters ("32B") is a value name. */
    size_t word = strspn(p->at, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");
    if (isdigit((unsigned char)*p->at) && strspn(p->at, "0123456789") < word) {
        char name[64];
        if (word >= sizeof name)
            return fail(p, "name too long");
        memcpy(name, p->at, word);
        name[word] = '\0';
        p->at += word;
        return resolve_identifier(p, name);
    }
    if (isdigit((unsigned char)*p->at)) {
        char *end;
        errno = 0;
        long long value = strtoll(p->at, &end, 10);
        if (errno == ERANGE)
            return fail(p, "integer literal out of range");
        p->at = end;
        return node(PJ_EXPR_CONST, value, NULL, NULL);
    }
    if (isalpha((unsigned char)*p->at) || *p->at == '_') {
        const char *start = p->at;
        while (isalnum((unsigned char)*p->at) || *p->at == '_')
            p->at++;
        char name[64];
        size_t n = (size_t)(p->at - start);
        if (n >= sizeof name)
            return fail(p, "name too long");
        memcpy(name, start, n);
        name[n] = '\0';
        if (strcmp(name, "bytes") == 0) {
            pj_expr *arg = parse_primary(p);
            if (!arg)
                return NULL;
            /* `sm` is an PJ_EXPR_PARAM past the last parameter: not a dtype either. */
            if (arg->kind != PJ_EXPR_PARAM || arg->value >= p->schema->param_count ||
                p->schema->params[arg->value].kind != PJ_PARAM_DTYPE) {
                pj_expr_free(arg);
                return fail(p, "bytes() takes a dtype parameter");
            }
            arg->kind = PJ_EXPR_BYTES;
            return arg;
        }
        return resolve_identifier(p, name);
    }
    return fail(p, *p->at ? "unexpected character" : "unexpected end");
}

static pj_expr *parse_unary(expr_parser *p)
{
    int negate = accept(p, "-");
    if (!negate && !accept(p, "!"))
        return parse_primary(p);
    if (++p->depth > MAX_DEPTH)
        return fail(p, "nested too deeply");
    pj_expr *operand = parse_unary(p);
    p->depth--;
    return operand ? node(negate ? PJ_EXPR_NEG : PJ_EXPR_NOT, 0, operand, NULL) : NULL;
}

/* One precedence level: operands from next, joined by any of ops (longest first). */
static pj_expr *parse_level(expr_parser *p, pj_expr *(*next)(expr_parser *),
                            const char *const *ops)
{
    pj_expr *left = next(p);
    while (left) {
        const char *op = NULL;
        for (int i = 0; ops[i] && !op; i++)
            if (accept(p, ops[i]))
                op = ops[i];
        if (!op)
            break;
        pj_expr *right = next(p);
        if (!right) {
            pj_expr_free(left);
            return NULL;
        }
        left = node(PJ_EXPR_BINARY, 0, left, right);
        if (left)
            strcpy(left->op, op);
    }
    return left;
}

static pj_expr *parse_mul(expr_parser *p)
{
    static const char *const ops[] = {"*", "/", "%", NULL};
    return parse_level(p, parse_unary, ops);
}
static pj_expr *parse_add(expr_parser *p)
{
    static const char *const ops[] = {"+", "-", NULL};
    return parse_level(p, parse_mul, ops);
}
static pj_expr *parse_compare(expr_parser *p)
{
    static const char *const ops[] = {"<=", ">=", "<", ">", NULL};
    return parse_level(p, parse_add, ops);
}
static pj_expr *parse_equal(expr_parser *p)
{
    static const char *const ops[] = {"==", "!=", NULL};
    return parse_level(p, parse_compare, ops);
}
static pj_expr *parse_and(expr_parser *p)
{
    static const char *const ops[] = {"&&", NULL};
    return parse_level(p, parse_equal, ops);
}
static pj_expr *parse_or(expr_parser *p)
{
    static const char *const ops[] = {"||", NULL};
    return parse_level(p, parse_and, ops);
}

ptxjit_status pj_expr_parse(pj_expr **out, const char *text, const pj_schema *schema)
{
    expr_parser p = {text, text, schema, PTXJIT_OK, 0};
    pj_expr *e = parse_or(&p);
    skip_space(&p);
    if (e && *p.at) {
        pj_expr_free(e);
        e = fail(&p, "unexpected text after the expression");
    }
    if (!e)
        return p.status != PTXJIT_OK ? p.status
                                     : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *out = e;
    return PTXJIT_OK;
}

/* Arithmetic wraps modulo 2^64, where C leaves overflow undefined: a template may write any
 * constant, and evaluating it must not be a way to crash the process (found by fuzzing). */
static int64_t wrap(uint64_t value)
{
    int64_t result;
    memcpy(&result, &value, sizeof result);
    return result;
}

static int64_t apply(const char *op, int64_t a, int64_t b)
{
    switch (op[0]) {
    case '*': return wrap((uint64_t)a * (uint64_t)b);
    case '/': return b == 0 ? 0 : b == -1 ? wrap(0 - (uint64_t)a) : a / b;
    case '%': return b == 0 || b == -1 ? 0 : a % b;
    case '+': return wrap((uint64_t)a + (uint64_t)b);
    case '-': return wrap((uint64_t)a - (uint64_t)b);
    case '<': return op[1] ? a <= b : a < b;
    case '>': return op[1] ? a >= b : a > b;
    case '=': return a == b;
    case '!': return a != b;
    case '&': return a && b;
    case '|': return a || b;
    }
    return 0;
}

int64_t pj_expr_eval(const pj_expr *e, const int64_t *values, const pj_schema *schema)
{
    switch (e->kind) {
    case PJ_EXPR_CONST:
        return e->value;
    case PJ_EXPR_PARAM:
        return values[e->value];
    case PJ_EXPR_BYTES: {
        const pj_param *param = &schema->params[e->value];
        return pj_dtype_bytes((pj_dtype)param->dtypes[values[e->value]]);
    }
    case PJ_EXPR_NOT:
        return !pj_expr_eval(e->left, values, schema);
    case PJ_EXPR_NEG:
        return wrap(0 - (uint64_t)pj_expr_eval(e->left, values, schema));
    case PJ_EXPR_BINARY:
        /* && and || short-circuit as in C. */
        if (e->op[0] == '&' && !pj_expr_eval(e->left, values, schema))
            return 0;
        if (e->op[0] == '|' && pj_expr_eval(e->left, values, schema))
            return 1;
        return apply(e->op, pj_expr_eval(e->left, values, schema),
                     pj_expr_eval(e->right, values, schema));
    }
    return 0;
}

int pj_expr_reads_params(const pj_expr *e, int first, int last)
{
    if (!e)
        return 0;
    if ((e->kind == PJ_EXPR_PARAM || e->kind == PJ_EXPR_BYTES) && e->value >= first && e->value < last)
        return 1;
    return pj_expr_reads_params(e->left, first, last) || pj_expr_reads_params(e->right, first, last);
}

void pj_expr_free(pj_expr *e)
{
    if (!e)
        return;
    pj_expr_free(e->left);
    pj_expr_free(e->right);
    free(e);
}
