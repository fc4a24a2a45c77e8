"""The GPU tests without pytest (torch, CuPy and JAX where installed):
    PYTHONPATH=build/python python3 python/tests/run_gpu.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(run.main([os.path.join(here, "test_gpu.py")] + sys.argv[1:]))
