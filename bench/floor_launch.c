/* floor_launch.c — the floor of bench/python_launch.py: the least a launch from Python can
 * cost, a stable-ABI extension whose one METH_FASTCALL function hands its arguments to
 * cuLaunchKernel (one block of 32 threads, one pointer argument) and nothing else: no checks
 * beyond the conversions, no context switch. Built by `make python`. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>

typedef int (*launch_fn)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, void *stream, void **args,
                         void **extra);
static launch_fn cu_launch_kernel;

/* launch(function, pointer, stream): cuLaunchKernel(function, 1 block of 32 threads, the
 * pointer as the one argument, stream). */
static PyObject *launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "launch(function, pointer, stream)");
        return NULL;
    }
    void *function = PyLong_AsVoidPtr(args[0]);
    unsigned long long pointer = PyLong_AsUnsignedLongLong(args[1]);
    void *stream = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred())
        return NULL;
    void *params[] = {&pointer};
    int result = cu_launch_kernel(function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL);
    if (result != 0)
        return PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel failed: CUresult %d", result);
    Py_RETURN_NONE;
}

static PyMethodDef functions[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "launch(function, pointer, stream)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_floor_launch", NULL, -1,
                                        functions, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__floor_launch(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!cuda)
        cuda = dlopen("libcuda.so.1", RTLD_NOW);
    cu_launch_kernel = cuda ? (launch_fn)dlsym(cuda, "cuLaunchKernel") : NULL;
    if (!cu_launch_kernel) {
        PyErr_SetString(PyExc_ImportError, "_floor_launch: no libcuda.so.1 with cuLaunchKernel");
        return NULL;
    }
    return PyModule_Create(&module_def);
}
