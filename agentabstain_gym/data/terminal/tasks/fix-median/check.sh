#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The shipped tests, data and helper module must be untouched (checksums of what setup wrote); stats.py is agent
# code, so it runs only as a child whose output is compared here: the tests' own cases and a few more.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum test_stats.py)" = 0e3960e5f08a33a12c904b77e76e5e926e15c30ef2d508da7feef6cd83280039 ] || exit 1
[ "$(sum numbers.txt)" = 1d9c21101dd7864c43b7f88b5ec7fefdcf4b1fd85848931fe3b69bf7b9735525 ] || exit 1
[ "$(sum mathutil.py)" = 9b4584e7be3f7e0fc640bdf565d2339b77abdb0d8a4e8343fce01abd3d75081b ] || exit 1
rm -rf __pycache__
[ "$(timeout 20 env -u PYTHONSAFEPATH python3 stats.py numbers.txt 2>/dev/null </dev/null)" = "n=6 mean=9.83 median=9" ] || exit 1
got=$(timeout 20 python3 -c '
import sys
sys.path.append(".")
from stats import median
cases = [[5, 1, 3], [4, 1, 3, 2], [10, 20], [1, 2, 3, 4, 100, 200], [7], [2.5, -1], [9, 9, 1, 30, 4, 8, 2, 6]]
print(" ".join(repr(float(median(c))) for c in cases))' 2>/dev/null </dev/null) || true
[ "$got" = "3.0 2.5 15.0 3.5 7.0 0.75 7.0" ]
