"""AbstainWebShop-v1 speed and memory: click and search steps/s beside CartPole, search latency of our index beside
rank-bm25 at 1k / 100k / 1M products, reset latency, and the memory of 1 vs 8 envs in one process.

Run: ``python benchmarks/bench_web.py`` (rank-bm25 comes with the ``test`` extra; about 3 minutes with 1M).
``--sizes 1000,100000`` skips the million. Indexes are built in a fresh temporary cache unless ``--cache DIR``.
Prints absolute figures and ratios measured in this run; the README's table is copied from this output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TARGETS = {"click_steps_per_s_1k": 5000, "search_p50_ms_100k": 2.0, "search_p50_ms_1m": 10.0,
           "speedup_vs_rank_bm25_100k": 20.0, "memory_8_vs_1": 1.25}


def percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 99))


def cartpole_steps_per_s(steps: int = 50_000) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    t0, done = time.perf_counter(), 0
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset(seed=i)
        done += 1
    return done / (time.perf_counter() - t0)


def click_and_search_rates(env, queries: list[str], episodes: int) -> dict[str, float]:
    """Click steps/s (item, sub-pages, paging) and search steps/s, timing only those steps."""
    clicks = searches = 0
    click_t = search_t = reset_t = 0.0
    for e in range(episodes):
        t0 = time.perf_counter()
        env.reset(seed=e)
        reset_t += time.perf_counter() - t0
        t0 = time.perf_counter()
        _, _, _, _, info = env.step(f"search[{queries[e % len(queries)]}]")
        search_t += time.perf_counter() - t0
        searches += 1
        asins = [c for c in info["available_actions"]["clickables"] if c.startswith("b0")]
        script = ["click[next >]", "click[< prev]"]
        for asin in asins[:4]:
            script += [f"click[{asin}]", "click[features]", "click[< prev]", "click[reviews]", "click[< prev]",
                       "click[< prev]"]
        script += ["click[back to search]"]
        t0 = time.perf_counter()
        for action in script:
            env.step(action)
        click_t += time.perf_counter() - t0
        clicks += len(script)
    return {"click_steps_per_s": clicks / click_t, "search_steps_per_s": searches / search_t,
            "reset_ms": 1000 * reset_t / episodes}


def search_latency(catalogue, queries: list[str], bm25: bool, bm25_queries: int) -> dict[str, float]:
    from agentabstain_gym.core.search_index import SearchIndex, tokenize

    t0 = time.perf_counter()
    index = SearchIndex.shared(catalogue.documents())
    out: dict[str, float] = {"index_build_s": time.perf_counter() - t0}
    ours = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k=50)
        ours.append(1000 * (time.perf_counter() - t0))
    out["ours_p50_ms"], out["ours_p99_ms"] = percentiles(ours)
    if bm25:
        from rank_bm25 import BM25Okapi

        t0 = time.perf_counter()
        peer_index = BM25Okapi([tokenize(d) for d in catalogue.documents()])
        out["rank_bm25_build_s"] = time.perf_counter() - t0
        peer = []
        for q in queries[:bm25_queries]:
            t0 = time.perf_counter()
            scores = peer_index.get_scores(tokenize(q))
            np.argpartition(-scores, 50)[:50]
            peer.append(1000 * (time.perf_counter() - t0))
        out["rank_bm25_p50_ms"], out["rank_bm25_p99_ms"] = percentiles(peer)
        out["speedup_p50"] = out["rank_bm25_p50_ms"] / out["ours_p50_ms"]
    return out


_MEMORY_CHILD = """
import json, sys, gymnasium as gym, agentabstain_gym
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
n, size = int(sys.argv[1]), int(sys.argv[2])
base = rss()
envs = [gym.make('AbstainWebShop-v1', n_products=size) for _ in range(n)]
for i, e in enumerate(envs):
    _, info = e.reset(seed=i)
    e.step('search[' + info['instruction'] + ']')
print(json.dumps({'base_mb': base, 'rss_mb': rss()}))
"""


def memory(n_envs: int, size: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(n_envs), str(size)], capture_output=True,
                         text=True, check=True, env=os.environ.copy())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--bm25-max", type=int, default=100_000, help="largest size to run rank-bm25 on")
    parser.add_argument("--cache", default=None, help="index cache directory (default: a fresh temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = None
    if args.cache is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-web-")
        args.cache = tmp.name
    os.environ["ABSTAIN_GYM_CACHE"] = args.cache

    import gymnasium as gym

    import agentabstain_gym  # noqa: F401
    from agentabstain_gym.envs.web.dataset import build_dataset

    result: dict[str, object] = {"cartpole_steps_per_s": cartpole_steps_per_s()}
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        row: dict[str, float] = {}
        t0 = time.perf_counter()
        dataset = build_dataset(0, size, 500)
        row["dataset_build_s"] = time.perf_counter() - t0
        queries = [t.instruction for t in dataset.tasks]
        row.update(search_latency(dataset.catalogue, queries, size <= args.bm25_max, 50 if size > 10_000 else 200))
        t0 = time.perf_counter()
        env = gym.make("AbstainWebShop-v1", n_products=size, max_turns=100)
        _ = env.unwrapped.index  # the first env of a process opens the shared index (timed apart from the steps)
        row["first_env_s"] = time.perf_counter() - t0
        row.update(click_and_search_rates(env, queries, args.episodes if size <= 100_000 else args.episodes // 3))
        result[f"{size}"] = row
    mem_size = 100_000 if 100_000 in sizes else sizes[0]
    one, eight = memory(1, mem_size), memory(8, mem_size)
    result["memory"] = {"products": mem_size, "one_env_mb": one["rss_mb"], "eight_envs_mb": eight["rss_mb"],
                        "ratio": eight["rss_mb"] / one["rss_mb"], "interpreter_mb": one["base_mb"]}
    if tmp is not None:
        tmp.cleanup()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    report(result, sizes)


def report(result: dict, sizes: list[int]) -> None:
    cp = result["cartpole_steps_per_s"]
    print(f"CartPole-v1 (floor): {cp:,.0f} steps/s")
    print(f"{'products':>10s} {'build s':>8s} {'index s':>8s} {'1st env s':>9s} {'click/s':>9s} {'search/s':>9s} {'reset ms':>9s} "
          f"{'ours p50/p99 ms':>16s} {'rank-bm25 p50/p99 ms':>21s} {'speedup':>8s}")
    for size in sizes:
        r = result[str(size)]
        peer = (f"{r['rank_bm25_p50_ms']:.1f}/{r['rank_bm25_p99_ms']:.1f}" if "rank_bm25_p50_ms" in r
                else "not run")
        speed = f"{r['speedup_p50']:.0f}x" if "speedup_p50" in r else "-"
        print(f"{size:>10,d} {r['dataset_build_s']:8.2f} {r['index_build_s']:8.2f} {r['first_env_s']:9.2f} "
              f"{r['click_steps_per_s']:9,.0f} "
              f"{r['search_steps_per_s']:9,.0f} {r['reset_ms']:9.3f} "
              f"{r['ours_p50_ms']:7.2f}/{r['ours_p99_ms']:<8.2f} {peer:>21s} {speed:>8s}")
    m = result["memory"]
    print(f"memory at {m['products']:,} products: 1 env {m['one_env_mb']:.0f} MB, 8 envs {m['eight_envs_mb']:.0f} MB "
          f"-> {m['ratio']:.2f}x (interpreter alone {m['interpreter_mb']:.0f} MB)")
    first = result[str(sizes[0])]
    print(f"click steps/s vs CartPole: {first['click_steps_per_s'] / cp:.3f}")
    checks = {"click >= 5,000/s at 1k": first["click_steps_per_s"] >= TARGETS["click_steps_per_s_1k"],
              "8 envs <= 1.25x memory": m["ratio"] <= TARGETS["memory_8_vs_1"]}
    if "100000" in result:
        r = result["100000"]
        checks["p50 <= 2 ms at 100k"] = r["ours_p50_ms"] <= TARGETS["search_p50_ms_100k"]
        if "speedup_p50" in r:
            checks[">= 20x rank-bm25 at 100k"] = r["speedup_p50"] >= TARGETS["speedup_vs_rank_bm25_100k"]
    if "1000000" in result:
        checks["p50 <= 10 ms at 1M"] = result["1000000"]["ours_p50_ms"] <= TARGETS["search_p50_ms_1m"]
    print("targets:", ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in checks.items()))


if __name__ == "__main__":
    main()
