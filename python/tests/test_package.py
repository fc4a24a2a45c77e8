"""The built package as another machine meets it: one file for every CPython from 3.11 on (the
stable ABI's tag), nothing exported but the module's init, nothing needed at load beyond the
C library (CUDA, NVRTC, LLVM are opened when first used), and `pip install ./python` into a
fresh virtual environment with no network."""
import os
import shutil
import subprocess
import sys

from _support import BUILD, REPO, skip

EXTENSION = os.path.join(BUILD, "python", "ptxjit", "_ptxjit.abi3.so")
ALLOWED_AT_LOAD = ("linux-vdso", "libc.so", "libm.so", "libdl.so", "libpthread.so",
                   "libstdc++.so", "libgcc_s.so", "ld-linux")


def test_the_extension_carries_the_stable_abi_tag_and_is_the_one_imported():
    import ptxjit._ptxjit as core
    assert os.path.basename(core.__file__) == "_ptxjit.abi3.so"
    assert os.path.exists(EXTENSION)


def test_only_the_module_init_is_exported():
    if not shutil.which("nm"):
        skip("no nm")
    out = subprocess.run(["nm", "-D", "--defined-only", EXTENSION], capture_output=True,
                         text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names == ["PyInit__ptxjit"], names


def test_python_symbols_used_are_of_the_limited_api():
    if not shutil.which("nm"):
        skip("no nm")
    out = subprocess.run(["nm", "-D", "--undefined-only", EXTENSION], capture_output=True,
                         text=True, check=True).stdout
    private = [line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith("_Py")]
    # The underscored names of the stable ABI (Misc/stable_abi.toml: abi_only), which the
    # limited API's macros call; any other would tie the file to one Python version.
    stable = {"_Py_Dealloc", "_PyObject_GC_New", "_Py_NoneStruct", "_Py_TrueStruct",
              "_Py_FalseStruct", "_PyArg_ParseTupleAndKeywords_SizeT", "_PyArg_ParseTuple_SizeT",
              "_PyObject_CallFunction_SizeT", "_PyObject_CallMethod_SizeT",
              "_Py_BuildValue_SizeT", "_Py_NotImplementedStruct"}
    assert set(private) <= stable, sorted(set(private) - stable)


def test_nothing_but_the_c_library_is_needed_at_load():
    if not shutil.which("ldd"):
        skip("no ldd")
    out = subprocess.run(["ldd", EXTENSION], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name = os.path.basename(line.split()[0])
        assert name.startswith(ALLOWED_AT_LOAD), line


def test_pip_installs_the_package_into_a_fresh_venv_offline(tmp_path):
    try:
        import wheel  # noqa: F401  (pip builds a wheel with the setuptools already here)
        import setuptools  # noqa: F401
    except ImportError:
        skip(f"{sys.executable} lacks setuptools or wheel (make deps installs Debian's)")
    if not os.path.exists(os.path.join(BUILD, "obj")):
        skip("the build's objects are not here (a build/ carried without build/obj would be "
             "rebuilt from scratch by pip's make)")
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        skip(f"no venv here: {made.stderr.strip()[-200:]}")
    python = str(venv / "bin" / "python")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run([python, "-m", "pip", "install", "-q", "--no-build-isolation",
                              os.path.join(REPO, "python")], capture_output=True, text=True,
                             env=env, timeout=600)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    check = ("import ptxjit, os\n"
             "assert ptxjit.__file__.startswith(%r), ptxjit.__file__\n"
             "here = os.path.dirname(ptxjit.__file__)\n"
             "assert os.access(os.path.join(here, 'ptxjit'), os.X_OK)\n"
             "with ptxjit.Context(use_gpu=False, disk_cache=False) as ctx:\n"
             "    print(ctx.kernel('reduce', tpb=128).params)\n") % str(venv)
    run = subprocess.run([python, "-c", check], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "batch=4 dtype=i32 tpb=128 variant=vectorized"


def _other_pythons():
    """Interpreters of CPython 3.12 and later on PATH or under pyenv, for the ABI check."""
    import glob
    found = {shutil.which(f"python3.{minor}") for minor in range(12, 20)}
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found.update(glob.glob(os.path.join(root, "versions", "3.1[2-9]*", "bin", "python3")))
    runs = [p for p in found if p and subprocess.run([p, "-c", "pass"],
                                                      capture_output=True).returncode == 0]
    return sorted(runs)  # (a pyenv shim of a version not selected does not run)


def test_the_one_build_imports_under_every_later_cpython_found():
    pythons = _other_pythons()
    if not pythons:
        skip("no CPython 3.12 or later here to import the 3.11 build with")
    check = ("import sys; sys.path.insert(0, %r)\n"
             "import ptxjit\n"
             "with ptxjit.Context(use_gpu=False, disk_cache=False) as ctx:\n"
             "    k = ctx.kernel('reduce', tpb=64)\n"
             "    assert ctx.kernel('reduce', 'tpb=64') is k and '.entry' in k.ptx\n"
             "print(sys.version_info[:2])\n") % os.path.join(BUILD, "python")
    for python in pythons:
        run = subprocess.run([python, "-c", check], capture_output=True, text=True)
        assert run.returncode == 0, (python, run.stderr[-2000:])
