"""AbstainQA-v0 speed: steps/s and reset latency beside CartPole, and our search index beside rank-bm25.

Run: ``python benchmarks/bench_qa.py`` (rank-bm25 comes with the ``test`` extra). Prints absolute figures and ratios
measured in this run; the README's performance table is copied from this output.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
from floor import cartpole, timed_rollouts

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core.search_index import SearchIndex, tokenize
from agentabstain_gym.envs.qa.dataset import build_dataset


def steps_per_second(env: gym.Env, actions: list[str], episodes: int) -> tuple[float, float]:
    """(steps/s over the given actions, mean reset latency in ms), resetting between episodes."""
    return timed_rollouts(env, episodes, lambda i, j: actions[j], per_episode=len(actions))


def percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 99))


def search_latency(queries: list[str], documents: list[str], rank_bm25_queries: int) -> dict[str, float]:
    from rank_bm25 import BM25Okapi

    index = SearchIndex.shared(documents)
    ours = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k=3)
        ours.append(1000 * (time.perf_counter() - t0))
    t0 = time.perf_counter()
    bm25 = BM25Okapi([tokenize(d) for d in documents])
    build = time.perf_counter() - t0
    peer = []
    for q in queries[:rank_bm25_queries]:
        t0 = time.perf_counter()
        scores = bm25.get_scores(tokenize(q))
        np.argpartition(-scores, 3)[:3]
        peer.append(1000 * (time.perf_counter() - t0))
    o50, o99 = percentiles(ours)
    p50, p99 = percentiles(peer)
    return {"ours_p50_ms": o50, "ours_p99_ms": o99, "rank_bm25_p50_ms": p50, "rank_bm25_p99_ms": p99,
            "rank_bm25_build_s": build, "speedup_p50": p50 / o50}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    dataset = build_dataset()
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    SearchIndex.shared(dataset.documents())
    index_s = time.perf_counter() - t0

    env = gym.make("AbstainQA-v0")
    questions = [t.instruction for t in dataset.tasks]
    search_sps, reset_ms = steps_per_second(env, [f"search[{q}]" for q in questions[:9]], args.episodes)
    answer_sps, _ = steps_per_second(env, ["answer[1874]"], args.episodes * 5)
    invalid_sps, _ = steps_per_second(env, ["not an action"] * 9, args.episodes)
    cp_sps, cp_reset_ms = cartpole(args.episodes)
    latency = search_latency(questions, dataset.documents(), rank_bm25_queries=100)

    result = {
        "corpus_passages": len(dataset.passages), "dataset_build_s": build_s, "index_build_or_open_s": index_s,
        "qa_search_steps_per_s": search_sps, "qa_answer_steps_per_s": answer_sps,
        "qa_invalid_steps_per_s": invalid_sps, "qa_reset_ms": reset_ms,
        "cartpole_steps_per_s": cp_sps, "cartpole_reset_ms": cp_reset_ms,
        "search_steps_vs_cartpole": search_sps / cp_sps, **latency,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"corpus: {len(dataset.passages)} passages; dataset build {build_s:.2f} s; index build/open {index_s:.2f} s")
    print(f"{'measure':34s} {'AbstainQA-v0':>14s} {'CartPole-v1':>14s}")
    print(f"{'search steps/s':34s} {search_sps:14,.0f} {cp_sps:14,.0f}   ratio {search_sps / cp_sps:.3f}")
    print(f"{'answer steps/s':34s} {answer_sps:14,.0f}")
    print(f"{'invalid-action steps/s':34s} {invalid_sps:14,.0f}")
    print(f"{'reset latency (mean ms)':34s} {reset_ms:14.3f} {cp_reset_ms:14.3f}")
    print(f"search latency p50/p99 ms: ours {latency['ours_p50_ms']:.3f}/{latency['ours_p99_ms']:.3f}, "
          f"rank-bm25 {latency['rank_bm25_p50_ms']:.2f}/{latency['rank_bm25_p99_ms']:.2f} "
          f"-> ours is {latency['speedup_p50']:.0f}x faster at p50 (targets: >= 2,000 QA steps/s, >= 20x)")
    print(f"targets met: steps {min(search_sps, answer_sps) >= 2000}, search {latency['speedup_p50'] >= 20}")


if __name__ == "__main__":
    main()
