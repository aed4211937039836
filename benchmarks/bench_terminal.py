"""Terminal sandbox speed: reset latency and command round trip per backend, beside a tmux loop.

Run: ``python benchmarks/bench_terminal.py`` (``--json`` for machine-readable output). The peer is Terminal-Bench's
method of driving a shell: ``tmux send-keys`` of the command followed by ``tmux wait -S``, a blocking ``tmux wait``,
then ``tmux capture-pane``. Backends that are not available here are reported as skipped. Targets (issue 5): bwrap
reset <= 100 ms p50, round trip <= 5 ms p50 and at least 3x faster than the tmux loop.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
import uuid

from agentabstain_gym.envs.terminal.sandbox import make_sandbox, why_unavailable

SETUP = "printf '%s\\n' 3 1 2 > numbers.txt\nmkdir -p data && echo ready > data/state\n"
CHECK = "set -eu\n[ \"$(sort -n numbers.txt | head -n 1)\" = 1 ] && grep -qx ready data/state\n"


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {"p50_ms": round(1000 * statistics.median(ordered), 3), "p99_ms": round(1000 * p99, 3)}


def bench_backend(backend: str, resets: int, commands: int) -> dict[str, object]:
    """Reset = tear down the previous sandbox, start a new one, run a small setup script (what env.reset does)."""
    reset_times: list[float] = []
    check_times: list[float] = []
    sandbox = None
    for _ in range(resets):
        if sandbox is not None:  # what submit does: kill the agent, then check in a fresh process
            t0 = time.perf_counter()
            verdict = sandbox.check(CHECK)
            check_times.append(time.perf_counter() - t0)
            assert verdict.exit_status == 0, verdict
        t0 = time.perf_counter()
        if sandbox is not None:
            sandbox.close()
        sandbox = make_sandbox(backend, unsafe=True)
        sandbox.start()
        sandbox.run_script(SETUP, ["original"])
        reset_times.append(time.perf_counter() - t0)
    assert sandbox is not None
    round_trips: list[float] = []
    for i in range(commands):
        t0 = time.perf_counter()
        result = sandbox.run(f"echo {i}")
        round_trips.append(time.perf_counter() - t0)
        assert result.output == f"{i}\n", result
    t0 = time.perf_counter()
    sandbox.close()
    close_ms = 1000 * (time.perf_counter() - t0)
    return {"reset": percentiles(reset_times), "round_trip": percentiles(round_trips), "close_ms": round(close_ms, 2),
            "check": percentiles(check_times)}


def bench_tmux(commands: int) -> dict[str, object]:
    """Terminal-Bench's loop: send-keys + wait -S, wait, capture-pane; one command per iteration."""
    session = f"bench-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
                    "bash --noprofile --norc"], check=True)
    try:
        times: list[float] = []
        for i in range(commands):
            t0 = time.perf_counter()
            subprocess.run(["tmux", "send-keys", "-t", session, f"echo {i}; tmux wait -S {session}-done", "Enter"],
                           check=True)
            subprocess.run(["tmux", "wait", f"{session}-done"], check=True)
            pane = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], check=True, capture_output=True,
                                  text=True).stdout
            times.append(time.perf_counter() - t0)
            assert str(i) in pane
            if i % 40 == 39:
                subprocess.run(["tmux", "send-keys", "-t", session, "clear", "Enter"], check=True)
        return {"round_trip": percentiles(times)}
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=30)
    parser.add_argument("--commands", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, object] = {}
    for backend in ("bwrap", "unshare", "docker", "local"):
        why = why_unavailable(backend)
        if why is not None:
            results[backend] = {"skipped": why}
            continue
        heavy = backend == "docker"
        results[backend] = bench_backend(backend, max(3, args.resets // 3) if heavy else args.resets,
                                         args.commands // 3 if heavy else args.commands)
    results["tmux"] = bench_tmux(args.commands) if shutil.which("tmux") else {"skipped": "tmux is not installed"}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'backend':<10} {'reset p50':>10} {'reset p99':>10} {'cmd p50':>9} {'cmd p99':>9} {'check p50':>10}   (ms)")
    for name, figures in results.items():
        if "skipped" in figures:
            print(f"{name:<10} skipped: {figures['skipped']}")
            continue
        reset = figures.get("reset", {"p50_ms": float("nan"), "p99_ms": float("nan")})
        rt = figures["round_trip"]
        check = figures.get("check", {}).get("p50_ms", float("nan"))
        print(f"{name:<10} {reset['p50_ms']:>10.1f} {reset['p99_ms']:>10.1f} {rt['p50_ms']:>9.2f} {rt['p99_ms']:>9.2f} "
              f"{check:>10.1f}")
    tmux = results.get("tmux", {})
    if "round_trip" in tmux:
        for name in ("bwrap", "unshare", "docker", "local"):
            figures = results[name]
            if "round_trip" in figures:
                ratio = tmux["round_trip"]["p50_ms"] / figures["round_trip"]["p50_ms"]
                print(f"{name} round trip is {ratio:.1f}x faster than the tmux loop (p50)")
    bwrap = results.get("bwrap", {})
    if "reset" in bwrap:
        ok_reset = bwrap["reset"]["p50_ms"] <= 100
        ok_rt = bwrap["round_trip"]["p50_ms"] <= 5
        print(f"targets: bwrap reset p50 <= 100 ms: {'met' if ok_reset else 'MISSED'}; "
              f"round trip p50 <= 5 ms: {'met' if ok_rt else 'MISSED'}")


if __name__ == "__main__":
    main()
