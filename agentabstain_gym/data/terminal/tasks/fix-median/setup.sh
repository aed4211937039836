#!/usr/bin/env bash
# Builds the workspace: a small stats script with an off-by-one median, its tests and its helper module.
set -euo pipefail
cat > stats.py <<'X'
"""Summary statistics for a file of numbers, one per line."""
import sys

from mathutil import mean, parse_numbers


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid] + ordered[mid + 1]) / 2


def main(path):
    values = parse_numbers(open(path).read())
    print(f"n={len(values)} mean={mean(values):.2f} median={median(values):g}")


if __name__ == "__main__":
    main(sys.argv[1])
X
cat > test_stats.py <<'X'
import unittest

from stats import median


class MedianTest(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([5, 1, 3]), 3)

    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_two(self):
        self.assertEqual(median([10, 20]), 15)


if __name__ == "__main__":
    unittest.main()
X
printf '%s\n' 12 7 3 19 8 10 > numbers.txt
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > mathutil.py <<'X'
"""Helpers shared by the project's scripts."""


def parse_numbers(text):
    return [float(tok) for tok in text.split()]


def mean(values):
    return sum(values) / len(values)
X
fi
