"""The ``abstain-gym gen`` command: ``gen sandbox`` and ``gen pairs`` (options, checks of the input, the summary)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentabstain_gym.gen.audit import Audit, GenError, LiveModel, logged_settings
from agentabstain_gym.gen.gates import PAIR_GATES, SANDBOX_GATES

SCENARIOS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8")


def _count(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--actor-model", default=None, help="the model that proposes (required unless --replay)")
    p.add_argument("--critic-model", default=None,
                   help="the model that tries to falsify proposals; best of another family (required unless --replay)")
    p.add_argument("--base-url", default=None,
                   help="OpenAI-compatible server of the actor, e.g. http://localhost:8000/v1 "
                        "(default $ABSTAIN_GYM_LLM_BASE_URL)")
    p.add_argument("--critic-base-url", default=None, help="the critic's server (default: --base-url)")
    p.add_argument("--api-key", default=None, help="API key (default $ABSTAIN_GYM_LLM_API_KEY, $OPENAI_API_KEY)")
    p.add_argument("--critic-api-key", default=None, help="the critic's API key (default: --api-key)")
    p.add_argument("--max-retries", type=lambda t: _count(t, 0), default=2,
                   help="proposals asked again after a rejection, per sandbox or pair slot (default 2)")
    p.add_argument("--timeout", type=lambda t: _count(t, 1), default=300, help="seconds per request (default 300)")
    p.add_argument("--max-reply-tokens", type=lambda t: _count(t, 256), default=8192,
                   help="most tokens of one reply (default 8192)")
    p.add_argument("--log", default=None, help="the JSONL audit log to write (default: next to --out)")
    p.add_argument("--replay", default=None, metavar="LOG",
                   help="take the replies from this audit log instead of a server (same command, same files)")
    p.add_argument("--force", action="store_true", help="overwrite existing output and log files")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="gen_command", required=True)
    p = sub.add_parser("sandbox", help="a new sandbox (YAML data) from seed instructions, through the gates")
    p.add_argument("--seeds", required=True, help='JSONL of seed instructions, one {"instruction": "..."} a line')
    p.add_argument("--out", required=True, help="directory for <name>.yaml and tasks/<name>.yaml")
    p.add_argument("--min-tasks", type=lambda t: _count(t, 1), default=3, help="act tasks to replay (default 3)")
    _common(p)
    p.set_defaults(func=run_sandbox)
    p = sub.add_parser("pairs", help="new pairs for a sandbox and scenario, through the gates and the critic")
    p.add_argument("--sandbox", required=True, help="a built-in sandbox name, or a generated sandbox's file or dir")
    p.add_argument("--scenario", required=True, action="append", choices=SCENARIOS,
                   help="S1..S8 (repeatable: --n pairs for each)")
    p.add_argument("--n", type=lambda t: _count(t, 1), default=5, help="pairs wanted per scenario (default 5)")
    p.add_argument("--out", required=True, help="pair file to write (YAML); run it with `abstain-gym eval --pairs`")
    p.add_argument("--records", type=lambda t: _count(t, 1), default=15,
                   help="records per collection shown to the actor (default 15)")
    _common(p)
    p.set_defaults(func=run_pairs)


def _usage(message: str) -> Exception:
    return GenError(message)


def _one_line(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Bad input, a dead server, an unknown model or a log that does not fit: one line on stderr and exit 2."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except GenError as exc:
            print(f"abstain-gym gen: error: {exc}", file=sys.stderr)
            return 2

    return wrapped


def _writable(path: Path, force: bool, option: str) -> None:
    if path.is_dir():
        raise _usage(f"{option} {path} is a directory; give a file name")
    if path.exists() and not force:
        raise _usage(f"{option} {path} exists; pass --force to overwrite it")


def _open_audit(args: argparse.Namespace, log: Path, settings: dict[str, Any]) -> tuple[Audit, dict[str, Any]]:
    """The audit log and the run's models: from the options, or from the replayed log's settings."""
    from agentabstain_gym import __version__

    replay = Path(args.replay) if args.replay else None
    if replay is not None and replay.resolve() == log.resolve():
        raise _usage(f"--log {log} is the log being replayed; give another --log")
    _writable(log, args.force, "--log")
    logged = logged_settings(replay) if replay is not None else {}
    for option, given, key in (("--actor-model", args.actor_model, "actor_model"),
                               ("--critic-model", args.critic_model, "critic_model")):
        if logged and given and given != logged.get(key):
            raise _usage(f"{option} {given} is not the logged run's ({logged.get(key)}); leave it out with --replay")
    actor = args.actor_model or logged.get("actor_model")
    critic = args.critic_model or logged.get("critic_model")
    if not actor or not critic:
        raise _usage("give --actor-model and --critic-model (or --replay LOG)")
    if actor == critic:
        print(f"warning: the actor and the critic are the same model ({actor}); a critic of another model family "
              "falsifies more", file=sys.stderr)
    models = {}
    if replay is None:
        base = args.base_url or os.environ.get("ABSTAIN_GYM_LLM_BASE_URL") or None
        for role, model, url, key in (("actor", actor, base, args.api_key),
                                      ("critic", critic, args.critic_base_url or base, args.critic_api_key
                                       or args.api_key)):
            try:
                models[role] = LiveModel(model, base_url=url, api_key=key, timeout=float(args.timeout),
                                         max_reply_tokens=args.max_reply_tokens)
            except ImportError as exc:
                raise _usage(str(exc)) from None
            models[role].preflight()
    settings = {"actor_model": actor, "critic_model": critic, "max_retries": args.max_retries,
                "version": __version__, **settings}
    log.parent.mkdir(parents=True, exist_ok=True)
    audit = Audit(log, models=models, replay=replay)
    source = ({"replay": str(replay)} if replay is not None else
              {role: {"model": m.model, "base_url": m.caller.base_url} for role, m in models.items()})
    audit.write("start", settings=settings, source=source)
    return audit, settings


def _summary(audit: Audit, gates: tuple[str, ...], proposals: int, rejected: Counter[str], **extra: Any) -> str:
    audit.write("summary", proposals=proposals, rejected={g: rejected.get(g, 0) for g in gates}, **extra)
    return ("rejected by gate: " + ", ".join(f"{g} {rejected.get(g, 0)}" for g in gates)
            + f" (of {proposals} proposal(s))\naudit log: {audit.path}")


@_one_line
def run_sandbox(args: argparse.Namespace) -> int:
    from agentabstain_gym.gen.sandbox import generate_sandbox, output_paths, read_seeds, write_sandbox

    out, seeds_path = Path(args.out), Path(args.seeds)
    seeds = read_seeds(seeds_path)
    if out.exists() and not out.is_dir():
        raise _usage(f"--out {out} is a file; gen sandbox writes into a directory")
    log = Path(args.log) if args.log else out / f"{seeds_path.stem}.audit.jsonl"
    audit, settings = _open_audit(args, log, {"command": "sandbox", "seeds": seeds, "min_tasks": args.min_tasks})
    try:
        run = generate_sandbox(seeds, audit, actor=settings["actor_model"], critic=settings["critic_model"],
                               max_retries=args.max_retries, min_tasks=args.min_tasks)
        print(_summary(audit, SANDBOX_GATES, run.proposals, run.rejected,
                       admitted=run.spec["name"] if run.spec else None))
    finally:
        audit.close()
    if run.spec is None:
        print(f"gen sandbox: no proposal was admitted within {run.proposals} proposal(s)", file=sys.stderr)
        return 1
    for path in output_paths(out, str(run.spec["name"])):
        if path.exists() and not args.force:
            raise _usage(f"{path} exists; the admitted proposal is in {log}: write it with --replay {log} --force "
                         "--log ANOTHER_LOG")
    spec_path, tasks_path = write_sandbox(run, out, actor=settings["actor_model"], critic=settings["critic_model"])
    print(f"gen sandbox: admitted {run.spec['name']} ({len(run.tasks)} act tasks) -> {spec_path}, {tasks_path}")
    return 0


@_one_line
def run_pairs(args: argparse.Namespace) -> int:
    from agentabstain_gym.gen.pairs import generate_pairs, pair_file_text, resolve_sandbox

    out = Path(args.out)
    wanted = list(dict.fromkeys(args.scenario))
    _writable(out, args.force, "--out")
    name, directory = resolve_sandbox(args.sandbox)
    log = Path(args.log) if args.log else out.with_name(out.stem + ".audit.jsonl")
    audit, settings = _open_audit(args, log, {"command": "pairs", "sandbox": name, "scenarios": wanted, "n": args.n,
                                              "records": args.records})
    try:
        run = generate_pairs(name, directory, wanted, args.n, audit, actor=settings["actor_model"],
                             critic=settings["critic_model"], max_retries=args.max_retries, records=args.records)
        print(_summary(audit, PAIR_GATES, run.proposals, run.rejected, kept=len(run.entries),
                       empty_slots=run.empty_slots))
    finally:
        audit.close()
    if not run.entries:
        print(f"gen pairs: no pair survived the gates ({run.proposals} proposal(s)); nothing written", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(pair_file_text(run, out, sandbox=name, directory=directory, actor=settings["actor_model"],
                                  critic=settings["critic_model"], wanted=wanted), encoding="utf-8")
    by_scenario = Counter(e["delta"]["scenario"] for e in run.entries)
    print(f"gen pairs: {len(run.entries)} pair(s) kept of {args.n * len(wanted)} wanted ("
          + ", ".join(f"{s} {by_scenario.get(s, 0)}" for s in wanted) + f") -> {out}")
    return 0
