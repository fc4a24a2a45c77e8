#!/bin/sh
# run.sh PYTHON — the Python package's tests: under pytest where PYTHON has it, else under
# run.py (the standard library only). PYTHONPATH must name build/python.
python=${1:-python3}
dir=$(dirname "$0")
if "$python" -c 'import pytest' >/dev/null 2>&1; then
    exec "$python" -m pytest -q -p no:cacheprovider "$dir"
fi
exec "$python" "$dir/run.py"
