#!/usr/bin/env python3
"""ncu_stalls.py — a summary of Nsight Compute source pages (`ncu -i REPORT --page source
--print-source sass --csv`): per report, its warp-state samples by stall reason and the SASS
instructions that hold the most samples, with how often each ran.
Usage: python3 bench/experiments/ncu_stalls.py SOURCE.csv [SOURCE.csv ...] [--top N]"""
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", "")) if text else 0.0
    except ValueError:
        return 0.0


def summarise(path, top):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # The first row names the kernel; the second is the header.
    header, data = rows[1], [r for r in rows[2:] if len(r) == len(rows[1])]
    at = {name: header.index(name) for name in
          ("Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed")}
    samples = at["Warp Stall Sampling (All Samples)"]
    total = sum(number(r[samples]) for r in data) or 1.0
    executed = sum(number(r[at["Instructions Executed"]]) for r in data)
    print(f"== {path}: {len(data)} SASS instructions, {executed:,.0f} executed (warp "
          f"instructions), {total:,.0f} samples")
    reasons = {}
    for i, name in enumerate(header):
        if name.startswith("stall_") and "(Not Issued)" not in name:
            reasons[name] = sum(number(r[i]) for r in data)
    for name, count in sorted(reasons.items(), key=lambda x: -x[1])[:8]:
        print(f"   {name:24s} {100 * count / total:5.1f}%")
    base = int(data[0][at["Address"]], 16) if data else 0
    for r in sorted(data, key=lambda r: -number(r[samples]))[:top]:
        offset = int(r[at["Address"]], 16) - base
        print(f"   {100 * number(r[samples]) / total:5.1f}%  +{offset:05x}  ran "
              f"{number(r[at['Instructions Executed']]):>10,.0f}  {r[at['Source']].strip()[:72]}")


def main(argv):
    top = 12
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if not argv:
        sys.exit(__doc__)
    for path in argv:
        summarise(path, top)


if __name__ == "__main__":
    main(sys.argv[1:])
