"""SASS of a cubin through the CUDA toolkit's nvdisasm (Kernel.sass), when it is installed."""
import os
import shutil
import subprocess
import tempfile


def _nvdisasm():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for candidate in (os.path.join(home, "bin", "nvdisasm"), "/usr/local/cuda/bin/nvdisasm"):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("nvdisasm")


def disassemble(cubin):
    """The SASS text of cubin (bytes), or None without nvdisasm or when it fails."""
    tool = _nvdisasm()
    if tool is None or not cubin:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin") as file:
        file.write(cubin)
        file.flush()
        done = subprocess.run([tool, "-c", file.name], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None
