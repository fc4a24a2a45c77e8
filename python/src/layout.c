/* layout.c — each entry's parameters, read once when a Kernel object is made: sizes from
 * ptxjit_kernel_param_layout (what ptxjit_launch_checked checks), and each parameter's PTX
 * type from the entry's declaration, so that a launch converts a Python number to what the
 * kernel reads (an int given for an .f32 becomes a float) and refuses what does not fit. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

/* The first ".param" declaration after the entry's opening parenthesis, or NULL. */
static const char *entry_declaration(const char *ptx, const char *name)
{
    size_t length = strlen(name);
    for (const char *at = strstr(ptx, ".entry "); at; at = strstr(at + 1, ".entry ")) {
        const char *word = at + 7;
        while (*word == ' ')
            word++;
        if (strncmp(word, name, length) == 0 && (word[length] == '(' || isspace((unsigned char)word[length])))
            return word + length;
    }
    return NULL;
}

/* Reads one ".param ... NAME[...]" declaration at *cursor (moved past it) into param's type
 * and kind; 0 when there is none before the closing parenthesis. */
static int next_param(const char **cursor, pyx_param *param)
{
    const char *at = strstr(*cursor, ".param");
    const char *close = strchr(*cursor, ')');
    if (!at || (close && close < at))
        return 0;
    const char *end = at + 6;
    while (*end && *end != ',' && *end != ')')
        end++;
    param->kind = PYX_PARAM_INT;
    strcpy(param->type, "b8");
    for (const char *dot = strchr(at + 6, '.'); dot && dot < end; dot = strchr(dot + 1, '.')) {
        char c = dot[1];
        if ((c == 'u' || c == 's' || c == 'f' || c == 'b') && isdigit((unsigned char)dot[2])) {
            size_t n = 1;
            while (isdigit((unsigned char)dot[1 + n]) && n < 5)
                n++;
            memcpy(param->type, dot + 1, n);
            param->type[n] = 0;
            param->kind = c == 'f' && strcmp(param->type, "f16") != 0 ? PYX_PARAM_FLOAT
                                                                       : PYX_PARAM_INT;
            break;
        }
    }
    const char *bracket = memchr(at, '[', (size_t)(end - at));
    if (bracket || strcmp(param->type, "f16") == 0)
        param->kind = PYX_PARAM_BYTES; /* an array (a struct by value) or a half */
    *cursor = end;
    return 1;
}

static void read_types(pyx_entry *entry, const char *ptx)
{
    const char *cursor = ptx ? entry_declaration(ptx, entry->name) : NULL;
    for (int i = 0; i < entry->count; i++) {
        pyx_param *param = &entry->params[i];
        if (!cursor || !next_param(&cursor, param)) {
            cursor = NULL; /* no declaration to read: the size alone decides */
            param->kind = param->size <= 8 ? PYX_PARAM_INT : PYX_PARAM_BYTES;
            strcpy(param->type, param->size <= 8 ? "b" : "b8");
        }
        if (param->kind != PYX_PARAM_BYTES && param->size > 8)
            param->kind = PYX_PARAM_BYTES;
    }
}

static int read_entry(pyx_entry *entry, ptxjit_kernel *kernel, int index)
{
    const char *name = ptxjit_kernel_entry_name(kernel, index);
    entry->name = strdup(name ? name : "");
    entry->py_name = PyUnicode_FromString(entry->name ? entry->name : "");
    if (!entry->name || !entry->py_name) {
        PyErr_NoMemory();
        return -1;
    }
    ptxjit_status status = ptxjit_kernel_param_count(&entry->count, kernel, entry->name);
    if (status != PTXJIT_OK) {
        pyx_raise(status);
        return -1;
    }
    entry->params = calloc((size_t)entry->count + 1, sizeof *entry->params);
    if (!entry->params) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < entry->count; i++) {
        ptxjit_param_layout layout;
        status = ptxjit_kernel_param_layout(&layout, kernel, entry->name, i);
        if (status != PTXJIT_OK) {
            pyx_raise(status);
            return -1;
        }
        entry->params[i].size = (uint32_t)layout.size;
    }
    read_types(entry, ptxjit_kernel_ptx(kernel));
    return 0;
}

int pyx_layout_read(pyx_entry **entries, int *count, ptxjit_kernel *kernel)
{
    *count = ptxjit_kernel_entry_count(kernel);
    *entries = calloc((size_t)*count + 1, sizeof **entries);
    if (!*entries) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < *count; i++)
        if (read_entry(&(*entries)[i], kernel, i) < 0) {
            pyx_layout_free(*entries, *count);
            *entries = NULL;
            return -1;
        }
    return 0;
}

void pyx_layout_free(pyx_entry *entries, int count)
{
    for (int i = 0; entries && i < count; i++) {
        free(entries[i].name);
        Py_XDECREF(entries[i].py_name);
        free(entries[i].params);
    }
    free(entries);
}

PyObject *pyx_layout_describe(const pyx_entry *entry)
{
    PyObject *parts = PyList_New(0);
    for (int i = 0; parts && i < entry->count; i++) {
        const pyx_param *p = &entry->params[i];
        PyObject *part = p->kind == PYX_PARAM_BYTES
                             ? PyUnicode_FromFormat("%d bytes", (int)p->size)
                             : PyUnicode_FromFormat("%s", p->type);
        if (!part || PyList_Append(parts, part) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(part);
    }
    if (!parts)
        return NULL;
    PyObject *separator = PyUnicode_FromString(", ");
    PyObject *joined = separator ? PyUnicode_Join(separator, parts) : NULL;
    Py_XDECREF(separator);
    Py_DECREF(parts);
    if (!joined)
        return NULL;
    PyObject *text = PyUnicode_FromFormat("%s(%U)", entry->name, joined);
    Py_DECREF(joined);
    return text;
}
