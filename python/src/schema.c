/* schema.c — a family's schema as Python data (Context.info): parameters with their kind,
 * range or values, default, conditional defaults, doc and condition; constraints; the tuning
 * space; the entries. Read through the ptxjit_family_* calls, which allocate nothing. */
#include <string.h>

#include "ext.h"

static PyObject *text(const char *value)
{
    return value ? PyUnicode_FromString(value) : Py_NewRef(Py_None);
}

/* Adds key: value to dict, stealing value; -1 when value is NULL or the add fails. */
static int put(PyObject *dict, const char *key, PyObject *value)
{
    int result = value ? PyDict_SetItemString(dict, key, value) : -1;
    Py_XDECREF(value);
    return result;
}

static PyObject *default_ifs(ptxjit_context *context, const char *family, int param, int count)
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        ptxjit_default_if_info info;
        ptxjit_status status = ptxjit_family_default_if(&info, context, family, param, i);
        PyObject *item = status == PTXJIT_OK ? Py_BuildValue("{s:s,s:s}", "condition",
                                                            info.condition, "value",
                                                            info.value_text)
                                             : pyx_raise(status);
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

static PyObject *values_of(const ptxjit_param_info *p)
{
    if (!p->values)
        return Py_NewRef(Py_None);
    PyObject *values = PyList_New(p->value_count);
    for (int i = 0; values && i < p->value_count; i++)
        PyList_SetItem(values, i, PyUnicode_FromString(p->values[i]));
    return values;
}

static PyObject *param_dict(ptxjit_context *context, const char *family, int index)
{
    ptxjit_param_info p;
    ptxjit_status status = ptxjit_family_param(&p, context, family, index);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *d = PyDict_New();
    int is_int = p.kind == PTXJIT_PARAM_INT;
    PyObject *default_value = is_int ? PyLong_FromLongLong(p.default_value)
                                     : PyUnicode_FromString(p.default_text);
    if (!d || put(d, "name", text(p.name)) < 0 || put(d, "kind", text(p.kind_name)) < 0 ||
        put(d, "min", is_int ? PyLong_FromLongLong(p.min) : Py_NewRef(Py_None)) < 0 ||
        put(d, "max", is_int ? PyLong_FromLongLong(p.max) : Py_NewRef(Py_None)) < 0 ||
        put(d, "pow2", PyBool_FromLong(p.pow2)) < 0 || put(d, "values", values_of(&p)) < 0 ||
        put(d, "default", Py_XNewRef(default_value)) < 0 ||
        put(d, "default_if", default_ifs(context, family, index, p.default_if_count)) < 0 ||
        put(d, "doc", text(p.doc)) < 0 || put(d, "when", text(p.when)) < 0)
        Py_CLEAR(d);
    Py_XDECREF(default_value);
    return d;
}

/* A list of count items made by item(context, family, i). */
static PyObject *list_of(ptxjit_context *context, const char *family, int count,
                         PyObject *(*item)(ptxjit_context *, const char *, int))
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        PyObject *value = item(context, family, i);
        if (!value || PyList_Append(list, value) < 0)
            Py_CLEAR(list);
        Py_XDECREF(value);
    }
    return list;
}

static PyObject *constraint_dict(ptxjit_context *context, const char *family, int index)
{
    ptxjit_constraint_info c;
    ptxjit_status status = ptxjit_family_constraint(&c, context, family, index);
    return status == PTXJIT_OK
               ? Py_BuildValue("{s:s,s:s}", "expression", c.expression, "message", c.message)
               : pyx_raise(status);
}

static PyObject *tune_pair(ptxjit_context *context, const char *family, int index)
{
    ptxjit_tune_line_info line;
    ptxjit_status status = ptxjit_family_tune_line(&line, context, family, index);
    return status == PTXJIT_OK ? Py_BuildValue("(ss)", line.param, line.values)
                               : pyx_raise(status);
}

static PyObject *entry_name(ptxjit_context *context, const char *family, int index)
{
    const char *name = NULL;
    ptxjit_status status = ptxjit_family_entry(&name, context, family, index);
    return status == PTXJIT_OK ? PyUnicode_FromString(name) : pyx_raise(status);
}

/* The family's origin by its index in the list ("built-in:reduce.cu", a path, "memory:..."). */
static PyObject *origin_of(ptxjit_context *context, const char *family)
{
    int count = ptxjit_family_count(context);
    for (int i = 0; i < count; i++) {
        const char *name = ptxjit_family_name(context, i);
        if (name && strcmp(name, family) == 0)
            return text(ptxjit_family_origin(context, i));
    }
    return Py_NewRef(Py_None);
}

PyObject *pyx_family_info(ptxjit_context *context, const char *family)
{
    int params, constraints, tunes, entries;
    const char *doc = NULL;
    ptxjit_status status = ptxjit_family_param_count(&params, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_constraint_count(&constraints, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_tune_count(&tunes, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_entry_count(&entries, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_doc(&doc, context, family);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *d = PyDict_New();
    PyObject *tune_pairs = list_of(context, family, tunes, tune_pair);
    PyObject *tune = tune_pairs ? PyDict_New() : NULL;
    for (Py_ssize_t i = 0; tune && i < PyList_Size(tune_pairs); i++) {
        PyObject *pair = PyList_GetItem(tune_pairs, i);
        if (PyDict_SetItem(tune, PyTuple_GetItem(pair, 0), PyTuple_GetItem(pair, 1)) < 0)
            Py_CLEAR(tune);
    }
    Py_XDECREF(tune_pairs);
    if (!d || put(d, "name", PyUnicode_FromString(family)) < 0 || put(d, "doc", text(doc)) < 0 ||
        put(d, "origin", origin_of(context, family)) < 0 ||
        put(d, "params", list_of(context, family, params, param_dict)) < 0 ||
        put(d, "constraints", list_of(context, family, constraints, constraint_dict)) < 0 ||
        put(d, "tune", Py_XNewRef(tune)) < 0 ||
        put(d, "entries", list_of(context, family, entries, entry_name)) < 0)
        Py_CLEAR(d);
    Py_XDECREF(tune);
    return d;
}
