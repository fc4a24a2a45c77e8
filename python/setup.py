"""Builds the ptxjit package: the C extension _ptxjit against CPython's stable ABI (3.11 and
later) with libptxjit.a linked in, built first from this repository with make; the ptxjit
program (compile workers) and, where it was built, the LLVM plugin go into the package beside
it, where libptxjit looks for them.

    pip install --no-build-isolation ./python     # offline: the setuptools already installed
PTXJIT_BUILD names another build folder of the repository (default: build/)."""
import glob
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("PTXJIT_BUILD", os.path.join(REPO, "build"))
LIBRARY = os.path.join(BUILD, "libptxjit.a")
PROGRAM = os.path.join(BUILD, "ptxjit")
PLUGIN = os.path.join(BUILD, "libptxjit_llvm.so")


class BuildWithLibrary(build_ext):
    """make builds libptxjit.a and the ptxjit program first; both go with the extension."""

    def run(self):
        jobs = os.environ.get("PTXJIT_MAKE_JOBS", "2")
        subprocess.check_call(["make", "-C", REPO, f"-j{jobs}", f"BUILD={BUILD}", LIBRARY,
                               PROGRAM])
        super().run()
        package = os.path.join(self.build_lib, "ptxjit")
        os.makedirs(package, exist_ok=True)
        shutil.copy2(PROGRAM, os.path.join(package, "ptxjit"))
        if os.path.exists(PLUGIN):
            shutil.copy2(PLUGIN, os.path.join(package, "libptxjit_llvm.so"))


extension = Extension(
    "ptxjit._ptxjit",
    sources=sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "src", "*.c"))),
    include_dirs=[os.path.join(REPO, "include")],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-fvisibility=hidden", "-O2"],
    extra_objects=[LIBRARY],
    extra_link_args=["-Wl,--version-script=" + os.path.join(HERE, "src", "extension.map"),
                     "-Wl,--exclude-libs,ALL", "-Wl,-z,relro,-z,now", "-ldl", "-lpthread",
                     "-lm"],
    py_limited_api=True,
)

setup(
    name="ptxjit",
    version="0.1.0",
    description="JIT-compiled, parameter-specialized GPU kernels from Python",
    packages=["ptxjit"],
    ext_modules=[extension],
    cmdclass={"build_ext": BuildWithLibrary},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
    python_requires=">=3.11",
    zip_safe=False,
)
