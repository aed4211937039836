"""Episodes per second of `abstain-gym eval`: the baselines per family with 1 and 2 workers at 200 and 1,000
episodes, a local Ray cluster against the local pool on the same work, and the LLM agent on AbstainQA-v0 at several
``--concurrency`` levels against a local server with a fixed latency per request.

Run: ``python benchmarks/bench_eval.py [--section workers|ray|llm|all] [--sizes 200,1000] [--latency S]``. The
2-worker figure includes everything a user's run pays: the in-process start that decides whether workers pay off,
and forking them.

The LLM section needs no model: a chat-completions server on 127.0.0.1 answers every request after ``--latency``
seconds (200 ms by default) with a scripted reply that depends only on the conversation (search on the first turn,
then abstain), with ids derived from the request, so every concurrency level must give byte-identical records; the
benchmark checks that. LLM episodes are I/O-bound, so episodes/s should grow almost linearly with concurrency.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentabstain_gym.agents import env_family
from agentabstain_gym.runner import Episode, EvalConfig, evaluate, iter_run, plan, suite_env_ids

LLM_ENV = "AbstainQA-v0"
CONCURRENCY = (1, 8, 32, 64)


# ----- a minimal scripted chat-completions server (kept here: benchmarks do not import from tests) ---------------
def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """A completion that depends only on the request: one search, then abstain."""
    messages = body.get("messages") or []
    turns = sum(m.get("role") == "assistant" for m in messages)
    tag = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
    if turns == 0:
        name, arguments = "search", {"query": str(messages[-1].get("content") or "")[:40]}
    else:
        name, arguments = "abstain", {"reason": "not found in the corpus"}
    message = {"role": "assistant", "content": None,
               "tool_calls": [{"id": f"call_{tag}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(arguments)}}]}
    return {"id": f"chatcmpl-{tag}", "object": "chat.completion", "created": 0, "model": body.get("model", "bench"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


class LatencyServer:
    """``with LatencyServer(0.2) as srv:`` serves ``srv.base_url`` (``/v1``), each request answered after the delay."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.requests = 0
        lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers: no TCP connect per request
            disable_nagle_algorithm = True  # else headers and body as two writes meet delayed ACKs: +40 ms a reply
            wbufsize = -1  # the whole reply in one write

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with lock:
                    owner.requests += 1
                time.sleep(owner.latency)
                payload = json.dumps(_reply(body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # 64 clients connecting at once must not overflow the listen backlog
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> LatencyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _serve(latency: float, ports: Any, stop: Any) -> None:
    """The server's process: a real server never shares the evaluating process's GIL, so neither does this one."""
    with LatencyServer(latency) as srv:
        ports.put(srv.httpd.server_address[1])
        stop.wait()


# ----- sections ---------------------------------------------------------------------------------------------------
BASELINES = ("heuristic", "rules", "random", "always-abstain", "never-abstain")


def _episodes(env_id: str, count: int) -> list[Episode]:
    """``count`` distinct episodes of ``env_id``: every task with the baselines in turn, over seeds 0, 1, ... (a
    family with fewer tasks than ``count`` still gets ``count`` episodes)."""
    found: list[Episode] = []
    seed = 0
    while len(found) < count:
        for agent in BASELINES:
            found += plan(EvalConfig(env_ids=[env_id], agents=[agent], split=None, seed=seed))
        seed += 1
    return found[:count]


def _rate(episodes: list[Episode], **options: Any) -> float:
    t0 = time.perf_counter()
    n = sum(1 for _ in iter_run(episodes, **options))
    return n / (time.perf_counter() - t0)


def bench_workers(sizes: list[int], repeats: int, families: list[str]) -> None:
    """Episodes/s with 1 and 2 workers (the 2-worker figure includes starting them, and the in-process start
    that decides whether they pay), median of ``repeats`` alternating runs; the terminal family once."""
    print(f"{'env':20s} {'episodes':>8s} {'1 worker ep/s':>14s} {'2 workers ep/s':>15s} {'speedup':>8s}")
    for env_id in families:
        iter_run(_episodes(env_id, 4)[:4])  # warm the family's data, as a second run of a session would be
        for size in sizes:
            episodes = _episodes(env_id, size)
            rates: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(1 if env_family(env_id) == "terminal" else repeats):
                for workers in (1, 2):
                    rates[workers].append(_rate(episodes, workers=workers))
            one, two = statistics.median(rates[1]), statistics.median(rates[2])
            print(f"{env_id:20s} {size:8d} {one:14.1f} {two:15.1f} {two / one:8.2f}", flush=True)


def bench_ray(size: int) -> None:
    """The same work on a local pool of 2 workers and on a one-machine Ray cluster of 2 CPUs (started beforehand,
    as a cluster is; its start is shown apart)."""
    try:
        import ray
    except ImportError:
        print("ray: not installed (pip install 'agentabstain-gym[ray]'); section skipped")
        return
    episodes = [e for env_id in ("AbstainQA-v0", "AbstainWebShop-v1", "AbstainTools-v0")
                for e in _episodes(env_id, size)]
    pool_rate = _rate(episodes, workers=2)
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - t0
    try:
        first = _rate(episodes, backend="ray")
        warm = _rate(episodes, backend="ray")
    finally:
        ray.shutdown()
    print(f"{len(episodes)} episodes (QA, web, tools; {size} each): local pool of 2 {pool_rate:.0f} ep/s; Ray "
          f"(2 CPUs, cluster start {started:.1f} s apart) first run {first:.0f} ep/s ({first / pool_rate:.2f}x), "
          f"second run {warm:.0f} ep/s ({warm / pool_rate:.2f}x)")


def _lines(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each record as the line `eval --out` would write, by task id."""
    return {r["task_id"]: json.dumps(r, sort_keys=True) for r in records}


def bench_llm(latency: float, sequential_episodes: int, concurrent_episodes: int) -> bool:
    """Episodes/s of the LLM agent per concurrency level; returns whether every level gave identical records.

    Concurrency 1 runs ``sequential_episodes`` (the seeded plan's first tasks), the others ``concurrent_episodes``
    (the same plan, longer), so each level runs several waves; records are compared on the common tasks.
    """
    os.environ.update({"ABSTAIN_GYM_LLM_MODEL": "bench-model", "ABSTAIN_GYM_LLM_API_KEY": "EMPTY"})
    print(f"LLM agent on {LLM_ENV}, {latency * 1000:.0f} ms per request (2 requests per episode)")
    print(f"{'concurrency':>11s} {'episodes':>9s} {'seconds':>8s} {'ep/s':>8s} {'x vs 1':>7s} {'records':>10s}")
    ctx = multiprocessing.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(latency, ports, stop), daemon=True)
    server.start()
    try:
        os.environ["ABSTAIN_GYM_LLM_BASE_URL"] = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
        evaluate(EvalConfig(env_ids=[LLM_ENV], agents=["llm"], split=None, episodes=2))  # warm caches, imports
        reference: dict[str, str] = {}
        base_rate, identical = 0.0, True
        for level in CONCURRENCY:
            n = sequential_episodes if level == 1 else concurrent_episodes
            config = EvalConfig(env_ids=[LLM_ENV], agents=["llm"], split=None, episodes=n, concurrency=level)
            t0 = time.perf_counter()
            records = evaluate(config)
            rate = len(records) / (time.perf_counter() - t0)
            lines = _lines(records)
            if level == 1:
                reference, base_rate, same = lines, rate, True
            else:
                same = all(lines.get(task) == line for task, line in reference.items())
            identical &= same and len(records) == n
            print(f"{level:11d} {len(records):9d} {len(records) / rate:8.2f} {rate:8.2f} {rate / base_rate:7.1f} "
                  f"{'identical' if same else 'DIFFER':>10s}")
    finally:
        stop.set()
        server.join(10)
    return identical


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--section", choices=("workers", "llm", "ray", "all"), default="all")
    parser.add_argument("--sizes", default="200,1000", help="workers section: episodes per env, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="workers section: runs per figure (median)")
    parser.add_argument("--family", default="all", help="workers section: one family (web, terminal, qa, tools)")
    parser.add_argument("--latency", type=float, default=0.2, help="LLM section: seconds per request")
    parser.add_argument("--llm-episodes", type=int, default=48, help="LLM section: episodes at concurrency 1")
    parser.add_argument("--llm-concurrent-episodes", type=int, default=256,
                        help="LLM section: episodes at concurrency > 1")
    args = parser.parse_args()
    if args.section in ("workers", "all"):
        families = [e for e in suite_env_ids("all") if args.family in ("all", env_family(e))]
        bench_workers([int(n) for n in args.sizes.split(",")], args.repeats, families)
    if args.section in ("ray", "all"):
        bench_ray(1000)
    if args.section in ("llm", "all") and not bench_llm(args.latency, args.llm_episodes,
                                                         args.llm_concurrent_episodes):
        raise SystemExit("records differ between concurrency levels")


if __name__ == "__main__":
    main()
