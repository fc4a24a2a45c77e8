/* expr_node.h — a node of a parsed expression (expr.c): shared with the build tool that
 * writes the built-in templates' schemas as C data (src/tools/embed_templates.c), which
 * emits the trees as static nodes, and with the test that compares them with a parse. */
#ifndef PTXJIT_PARAMS_EXPR_NODE_H
#define PTXJIT_PARAMS_EXPR_NODE_H

#include <stdint.h>

#include "params/param.h"

typedef enum {
    PJ_EXPR_CONST, PJ_EXPR_PARAM, PJ_EXPR_BYTES, PJ_EXPR_NOT, PJ_EXPR_NEG, PJ_EXPR_BINARY
} pj_expr_kind;

struct pj_expr {
    pj_expr_kind kind;
    int64_t value;      /* PJ_EXPR_CONST; PJ_EXPR_PARAM/PJ_EXPR_BYTES: parameter index */
    char op[3];         /* PJ_EXPR_BINARY */
    pj_expr *left, *right;
};

#endif
