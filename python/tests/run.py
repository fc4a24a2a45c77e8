"""Runs the tests of this folder without pytest: every test_* function of every test_*.py
(a tmp_path argument gets a fresh directory), skips reported with their reason.

    PYTHONPATH=build/python python3 python/tests/run.py [-k WORD] [FILE...]
    python3 python/tests/run_gpu.py     # the GPU tests alone
"""
import importlib.util
import inspect
import os
import pathlib
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def load(path):
    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_one(function):
    arguments = {}
    with tempfile.TemporaryDirectory(prefix="ptxjit-test-") as scratch:
        if "tmp_path" in inspect.signature(function).parameters:
            arguments["tmp_path"] = pathlib.Path(scratch)
        function(**arguments)


def main(argv):
    word = None
    if argv[:1] == ["-k"]:
        word, argv = argv[1], argv[2:]
    files = argv or sorted(str(p) for p in pathlib.Path(HERE).glob("test_*.py"))
    passed, skipped, failed = 0, [], []
    start = time.time()
    for path in files:
        module = load(path)
        for name, function in sorted(vars(module).items()):
            if not name.startswith("test_") or not callable(function):
                continue
            if word and word not in name:
                continue
            try:
                run_one(function)
                passed += 1
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 (pytest.skip is one)
                if type(error).__name__ in ("SkipTest", "Skipped"):
                    skipped.append(f"{name}: {error}")
                else:
                    failed.append(name)
                    print(f"FAILED {pathlib.Path(path).name}::{name}")
                    traceback.print_exc()
    for line in skipped:
        print(f"SKIPPED {line}")
    print(f"{passed} passed, {len(skipped)} skipped, {len(failed)} failed "
          f"in {time.time() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
