"""Products per type at several store sizes (issue #16): empty types, Missing Target views with no product of the
goal's type left, build time and peak memory. Run: PYTHONPATH=. python wip_notes/measure_store_size.py 1000 10000"""

from __future__ import annotations

import resource
import sys
import tempfile
import time

import numpy as np


def measure(n: int) -> dict:
    import os
    os.environ["ABSTAIN_GYM_CACHE"] = tempfile.mkdtemp()  # time a cold index build
    from agentabstain_gym.core.search_index import SearchIndex
    from agentabstain_gym.envs.web.dataset import MISSING_TARGET, build_dataset
    from agentabstain_gym.envs.web.vocab import type_by_name

    t0 = time.perf_counter()
    data = build_dataset(0, n, 500)
    t1 = time.perf_counter()
    SearchIndex.shared(data.documents())
    t2 = time.perf_counter()
    cat = data.catalogue
    counts = np.bincount(cat.type_id.astype(np.int64), minlength=len(cat.types))
    names = type_by_name()
    goal_types = {t.payload["goal"]["product_type"] for t in data.tasks}
    goal_counts = [int(counts[names[g].type_id]) for g in goal_types]
    mt = [t for t in data.tasks if t.category == MISSING_TARGET]
    none_left = 0
    for t in mt:
        tid = names[t.payload["goal"]["product_type"]].type_id
        left = set(int(i) for i in cat.type_positions(tid)) - data.hidden(t)
        none_left += not left
    return {"n_products": n, "median_per_type": float(np.median(counts)), "min_per_type": int(counts.min()),
            "empty_types": int((counts == 0).sum()), "median_per_goal_type": float(np.median(goal_counts)),
            "mt_none_of_type_left": none_left, "mt": len(mt), "dataset_s": round(t1 - t0, 2),
            "index_s": round(t2 - t1, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


if __name__ == "__main__":
    print(measure(int(sys.argv[1])))
