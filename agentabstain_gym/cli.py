"""The ``abstain-gym`` command: list environments, evaluate agents, report metrics."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TABLE_COLUMNS = (
    ("n_abstain", "N abst", "{:d}"), ("n_solvable", "N solv", "{:d}"), ("absrec@1", "AbsRec@1", "{:.3f}"),
    ("timely_within_grace", "Timely(g)", "{:.3f}"), ("absrec@5", "AbsRec@5", "{:.3f}"), ("absrec@10", "AbsRec@10", "{:.3f}"), ("spl", "SPL", "{:.3f}"),
    ("premature_rate", "Prem", "{:.3f}"), ("over_abstention_rate", "OverAbst", "{:.3f}"),
    ("success_rate", "Success", "{:.3f}"), ("paired_accuracy", "PairAcc", "{:.3f}"), ("car", "CAR", "{:.3f}"),
)

#: AgentAbstain's per-scenario table: per-side pass rates, paired accuracy, CAR, and the commit x response classes.
PAIRED_COLUMNS = (
    ("act", "Act", "{:.3f}"), ("abstain", "Abstain", "{:.3f}"), ("paired_accuracy", "PairAcc", "{:.3f}"),
    ("car", "CAR", "{:.3f}"),
)
ABSTENTION_CLASSES = (("successful", "Successful"), ("implicit", "Implicit"), ("post_hoc", "PostHoc"),
                      ("no_abstention", "NoAbst"))


#: The agents of the main job, in the order the tables show them.
BASELINES = ("random", "always-abstain", "never-abstain", "rules", "heuristic")


#: ``eval --concurrency`` when every agent is ``llm`` and none was given.
LLM_CONCURRENCY = 16


class UsageError(Exception):
    """A bad name or argument: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (``abstain-gym eval: error: ...``), exit 2, with no usage dump above it."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _first_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    line = " ".join(part.strip() for part in text.strip().splitlines()) or type(exc).__name__
    return line if len(line) <= 300 else line[:297] + "..."


def preflight_agent(spec: str) -> None:
    """Load a user or sb3 agent once before the run, so a bad path or class fails now with one line, not in a
    worker with a traceback."""
    from agentabstain_gym.agents import AGENT_NAMES

    if spec in AGENT_NAMES:
        return
    try:
        if spec.startswith("sb3:"):
            from agentabstain_gym.agents.sb3 import load_metadata, policy_paths

            model, _ = policy_paths(spec[4:])
            if not model.is_file():
                raise FileNotFoundError(f"no such policy file: {model}")
            load_metadata(spec[4:])
        else:
            from agentabstain_gym.runner import load_user_agent

            target = spec.rpartition(":")[0]
            if target.endswith(".py") and not Path(target).is_file():
                raise FileNotFoundError(f"no such agent file: {target}")
            load_user_agent(spec)
    except Exception as exc:  # noqa: BLE001 - whatever loading the agent raises is the user's to fix
        raise UsageError(f"--agent {spec}: {_first_line(exc)}") from None


def positive_int(text: str) -> int:
    """argparse ``type=``: a count that must be at least 1, so a typo fails at once with one line."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def nonnegative_int(text: str) -> int:
    """argparse ``type=``: a seed or a count that may be 0 but not negative."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _retype(parser: argparse.ArgumentParser, types: dict[str, Any]) -> None:
    """Give options defined in other modules (train, convolve) validating types without editing those modules."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public way to change an option's type
        if action.dest in types:
            action.type = types[action.dest]


def check_new_file(path: str | Path, *, force: bool, option: str = "--out") -> None:
    """Refuse to overwrite an existing file (or to write over a directory) unless ``--force``."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path} is a directory; give a file name")
    if target.exists() and not force:
        raise UsageError(f"{option} {path} exists; pass --force to overwrite it")


def _check_plots(directory: str, *, force: bool) -> None:
    """Before a run starts: matplotlib is importable, and no existing plot would be overwritten without --force."""
    from agentabstain_gym.plots import PLOT_FILES

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plots needs matplotlib: pip install matplotlib (the [plot] extra)") from None
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise UsageError(f"--plots {directory} is not a directory")
    for name in PLOT_FILES:
        if (target / name).exists() and not force:
            raise UsageError(f"--plots {directory} already holds {name}; pass --force to overwrite the plots")


def _grid(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(r))
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def format_table(title: str, groups: dict[str, dict[str, Any]]) -> str:
    """A fixed-width table, one row per group; ``-`` where a metric has nothing to count."""
    header = [title] + [label for _, label, _ in TABLE_COLUMNS]
    rows = [header]
    for name, m in groups.items():
        row = [name]
        for key, _, fmt in TABLE_COLUMNS:
            value = m.get(key)
            row.append("-" if value is None else fmt.format(value))
        rows.append(row)
    return _grid(rows)


def format_paired_table(title: str, groups: dict[str, dict[str, Any]], macro: dict[str, Any]) -> str:
    """Per scenario: Act, Abstain, paired accuracy, CAR and the shares of the four abstention classes (of the
    should-abstain episodes), with the macro average over scenarios as the last row."""
    header = [title] + [label for _, label, _ in PAIRED_COLUMNS] + [label for _, label in ABSTENTION_CLASSES]
    rows = [header]
    for name, m in [*groups.items(), ("macro", macro)]:
        row = [name] + ["-" if m.get(k) is None else fmt.format(m[k]) for k, _, fmt in PAIRED_COLUMNS]
        classes = m.get("abstention_classes") or {}
        total = sum(classes.values())
        row += [f"{classes.get(k, 0) / total:.3f}" if total else "-" for k, _ in ABSTENTION_CLASSES]
        rows.append(row)
    return _grid(rows)


def _macro_with_classes(rep: dict[str, Any]) -> dict[str, Any]:
    """The scenario macro row; its class shares pool the scenarios' counts (each scenario weighted equally)."""
    macro = dict(rep.get("scenario_macro") or {})
    shares: dict[str, float] = {}
    for m in rep["by_scenario"].values():
        classes = m.get("abstention_classes") or {}
        total = sum(classes.values())
        for k, n in classes.items():
            shares[k] = shares.get(k, 0.0) + (n / total if total else 0.0)
    n = len(rep["by_scenario"])
    macro["abstention_classes"] = {k: v / n for k, v in shares.items()} if shares else {}
    return macro


def format_report(rep: dict[str, Any], per_agent: dict[str, dict[str, Any]] | None = None) -> str:
    """Readable tables. With several agents, every breakdown is shown per agent (``agent / group`` rows), so
    no row mixes two agents' episodes."""
    if per_agent:
        parts = [format_table("agent", rep["by_agent"])]
        for section, title in (("by_family", "family"), ("by_category", "category"), ("by_scenario", "scenario")):
            rows = {f"{agent} / {name}": m for agent, sub in per_agent.items() for name, m in sub[section].items()}
            if rows:
                parts.append(format_table(f"agent / {title}", rows))
        for agent, sub in per_agent.items():
            if sub.get("by_scenario"):
                parts.append(format_paired_table(f"{agent} / scenario", sub["by_scenario"], _macro_with_classes(sub)))
        return "\n\n".join(parts)
    parts = [format_table("overall", {"all": rep["overall"]})]
    for section, title in (("by_family", "family"), ("by_category", "category"), ("by_scenario", "scenario")):
        if rep.get(section):
            parts.append(format_table(title, rep[section]))
    if rep.get("by_scenario"):
        parts.append(format_paired_table("scenario", rep["by_scenario"], _macro_with_classes(rep)))
    return "\n\n".join(parts)


def render(records: list[dict[str, Any]], *, as_json: bool, bootstrap: int = 1000) -> str:
    """The report of ``records``: text tables, or one JSON object (with each agent's own tables under
    ``per_agent``).
    """
    from agentabstain_gym.core.metrics import report

    rep = report(records, bootstrap=bootstrap)
    # ``overall`` and the by_* tables pool all agents; ``per_agent`` holds each agent's own tables (the text
    # report's ``agent / group`` rows), so the JSON has every number the text shows; {} with a single agent
    rep["per_agent"] = {str(agent): {k: v for k, v in report([r for r in records if r.get("agent") == agent],
                                                             bootstrap=bootstrap if as_json else 0).items()
                                     if k != "by_agent"}
                        for agent in rep["by_agent"]}
    if as_json:
        return json.dumps(rep, indent=2, sort_keys=True)
    return format_report(rep, rep["per_agent"] or None)


def _read(paths: list[str]) -> list[dict[str, Any]]:
    from agentabstain_gym.core.record import read_records

    for path in paths:
        if not Path(path).is_file():
            raise UsageError(f"no such file: {path}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = read_records(paths)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    records, dropped = dedupe(records)
    if dropped:
        print(f"warning: dropped {dropped} duplicate episode record(s) (same env_id, agent, task_id and seed; "
              "the first is kept)", file=sys.stderr)
    for line in mixed_fingerprints(records):
        print(f"warning: {line}", file=sys.stderr)
    return records


def mixed_fingerprints(records: list[dict[str, Any]]) -> list[str]:
    """One line per env id whose records carry more than one benchmark fingerprint (runs of different task lists
    are being pooled). Records without one (older files, custom tasks) are not counted."""
    seen: dict[str, set[str]] = {}
    for r in records:
        if isinstance(r.get("fingerprint"), str):
            seen.setdefault(str(r.get("env_id")), set()).add(r["fingerprint"])
    return [f"{env_id} records carry {len(values)} benchmark fingerprints ("
            + ", ".join(v[:12] for v in sorted(values)) + "): episodes of different task lists are pooled"
            for env_id, values in sorted(seen.items()) if len(values) > 1]


def dedupe(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep the first record per episode key, so a file given twice (or a resumed run written twice) does not
    count an episode twice."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for r in records:
        key = (r.get("env_id"), r.get("agent_spec") or r.get("agent"), r.get("task_id"), r.get("seed"))
        if key not in seen:
            seen.add(key)
            kept.append(r)
    return kept, len(records) - len(kept)


def _plots(records: list[dict[str, Any]], directory: str) -> None:
    from agentabstain_gym.core.metrics import report
    from agentabstain_gym.plots import write_plots

    agents = sorted({str(r.get("agent")) for r in records})
    per_agent = {a: report([r for r in records if str(r.get("agent")) == a], bootstrap=0) for a in agents}
    written = write_plots(per_agent, directory)
    print(f"plots: {', '.join(str(Path(directory) / name) for name in written)}", file=sys.stderr)


def _error_summary(records: list[dict[str, Any]]) -> str:
    """The "agent errors: N; env errors: M" line: episodes that failed because the agent raised (or spent its
    budget) and because the environment itself failed; both count as failures, so they must be visible."""
    from agentabstain_gym.core.metrics import error_counts

    counts = error_counts(records)
    return f"agent errors: {counts['agent']}; env errors: {counts['env']}"


def cmd_report(args: argparse.Namespace) -> int:
    """``abstain-gym report``: metrics tables (and plots) from run files."""
    if args.plots:
        _check_plots(args.plots, force=args.force)
    records = _read(args.files)
    print(f"{len(records)} episodes; {_error_summary(records)}", file=sys.stderr)
    if args.metrics == "paper":
        from agentabstain_gym.core.paper_metrics import render_paper

        print(render_paper(records, as_json=args.json))
    else:
        print(render(records, as_json=args.json, bootstrap=args.bootstrap))
    if args.plots:
        _plots(records, args.plots)
    return 0


def task_counts(env_id: str) -> dict[str, Any]:
    """What `list` shows for one id: family, task counts per split and category (and scenario, where there are)."""
    import gymnasium as gym

    env = gym.make(env_id)
    tasks = env.unwrapped.tasks()
    info: dict[str, Any] = {"family": env.unwrapped.family, "tasks": len(tasks),
                            "should_abstain": sum(t.should_abstain for t in tasks),
                            "max_turns": env.unwrapped.max_turns, "fingerprint": env.unwrapped.fingerprint}
    for key, getter in (("split", lambda t: t.split), ("category", lambda t: t.category),
                        ("scenario", lambda t: t.scenario)):
        counts: dict[str, int] = {}
        for t in tasks:
            value = getter(t)
            if value is not None:
                counts[value] = counts.get(value, 0) + 1
        if counts:
            info[key] = dict(sorted(counts.items()))
    extra = getattr(env.unwrapped, "listing", None)
    if callable(extra):
        info.update(extra())
    env.close()
    return info


def cmd_list(args: argparse.Namespace) -> int:
    """``abstain-gym list``: each text id's task counts and benchmark fingerprint, and the numeric forms."""
    import gymnasium as gym

    import agentabstain_gym

    listing = {env_id: task_counts(env_id) for env_id in agentabstain_gym.ENV_IDS}
    # the numeric forms run their family id's tasks, so they share its fingerprint
    forms = {env_id: gym.spec(env_id).kwargs["env_id"] for env_id in agentabstain_gym.SB3_ENV_IDS}
    forms = {env_id: family for env_id, family in forms.items() if family in listing}
    if args.json:
        for env_id, family in forms.items():
            listing[family].setdefault("numeric_forms", []).append(env_id)
        print(json.dumps(listing, indent=2, sort_keys=True))
        return 0
    for env_id, info in listing.items():
        print(f"{env_id}  family={info['family']}  tasks={info['tasks']} "
              f"(should abstain {info['should_abstain']})  max_turns={info['max_turns']}")
        print(f"    fingerprint: {info['fingerprint']}")
        for key in ("split", "category", "scenario", "pairs_by_split", "pairs_by_scenario", "delta_location", "phase",
                    "task_type", "tool_kinds"):
            if isinstance(info.get(key), dict):
                print(f"    {key}: " + ", ".join(f"{k} {v}" for k, v in info[key].items()))
        if isinstance(info.get("sandboxes"), dict) and len(info["sandboxes"]) > 1:
            print(f"    sandboxes: {len(info['sandboxes'])} (" + ", ".join(
                f"{name} {kinds.get('tools')}" for name, kinds in info["sandboxes"].items()) + " tools)")
    for env_id, family in forms.items():
        print(f"{env_id}  numeric form of {family}  fingerprint: {listing[family]['fingerprint']}")
    return 0


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm

    from agentabstain_gym.core import outcome
    from agentabstain_gym.core.metrics import error_kind

    tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked only from a single-threaded process
    bar = tqdm(total=total, unit="ep", file=sys.stderr, dynamic_ncols=True, mininterval=0.5)
    counts = {"abstain": 0, "timely": 0, "solvable": 0, "over": 0, "agent": 0, "env": 0}

    def update(record: dict[str, Any], finished: int, _total: int) -> None:
        if record["should_abstain"]:
            counts["abstain"] += 1
            counts["timely"] += record["outcome"] == outcome.TIMELY
        else:
            counts["solvable"] += 1
            counts["over"] += record["outcome"] == outcome.OVER_ABSTAIN
        kind = error_kind(record)
        if kind is not None:
            counts[kind] += 1
        bar.set_postfix(absrec1=f"{counts['timely'] / max(1, counts['abstain']):.2f}",
                        over=f"{counts['over'] / max(1, counts['solvable']):.2f}", errors=counts["agent"],
                        env_errors=counts["env"], refresh=False)
        bar.update(finished - bar.n)  # redraws at most every mininterval

    return bar, update


class _LazyBar:
    """The progress bar, made when the first record arrives (the run knows its size only once it has planned,
    which it does after locking ``--out``)."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.update: Any = None

    def __call__(self, record: dict[str, Any], finished: int, total: int) -> None:
        if self.bar is None:
            self.bar, self.update = _progress_bar(total)
            self.bar.update(finished - 1)
        self.update(record, finished, total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _concurrency(args: argparse.Namespace, agents: list[str]) -> int:
    """Episodes at once per process: as given, else 16 when every agent is ``llm`` (I/O-bound: waiting on the
    server), else 1. With ``--workers`` each worker process runs that many."""
    given = args.concurrency
    if given is not None and given < 1:
        raise UsageError(f"--concurrency must be at least 1, not {given}")
    if given is None:
        return LLM_CONCURRENCY if all(a == "llm" for a in agents) else 1
    return int(given)


#: Constructor arguments that take a family's own task data, tried in this order by ``eval --tasks FILE``.
TASKS_ARGUMENTS = ("tasks_file", "questions_file", "tasks_dir", "pairs_file")


def env_kwargs_from_args(env_ids: list[str], tasks: str | None, raw: str | None,
                         overlay: str | None = None) -> dict[str, dict[str, Any]]:
    """Per-env keyword arguments from ``--tasks FILE``, ``--overlay FILE`` and ``--env-kwargs JSON``, checked against
    each env's constructor and by building the env once, so a bad file or a typo is one line now, not a failure per
    episode."""
    import inspect

    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    extra: dict[str, Any] = {}
    if raw is not None:
        try:
            extra = json.loads(raw)
        except ValueError as exc:
            raise UsageError(f"--env-kwargs is not valid JSON ({exc})") from None
        if not isinstance(extra, dict):
            raise UsageError('--env-kwargs must be a JSON object, e.g. \'{"max_turns": 20}\'')
    if tasks is not None and len(env_ids) != 1:
        raise UsageError("--tasks runs one env on your file: give exactly one env id")
    if overlay is not None:
        if env_ids != ["AbstainTerminal-v1"]:
            raise UsageError("--overlay adds abstention variants to task folders on AbstainTerminal-v1 only")
        if not Path(overlay).is_file():
            raise UsageError(f"--overlay {overlay}: no such file")
        extra = {**extra, "overlay": overlay}
    out: dict[str, dict[str, Any]] = {}
    for env_id in env_ids:
        creator = load_env_creator(gym.spec(env_id).entry_point)
        params = [n for n in inspect.signature(creator).parameters if n not in ("self", "render_mode")]
        unknown = sorted(set(extra) - set(params))
        if unknown:
            raise UsageError(f"--env-kwargs: {env_id} takes no {', '.join(unknown)}; it takes {', '.join(params)}")
        kwargs = {k: str(Path(v).resolve()) if k.endswith(("_file", "_dir")) and isinstance(v, str) else v
                  for k, v in extra.items()}
        if tasks is not None:
            name = next((a for a in TASKS_ARGUMENTS if a in params), None)
            if name is None:
                raise UsageError(f"--tasks: {env_id} takes no file of tasks")
            if name in kwargs:
                raise UsageError(f"--tasks and --env-kwargs both give {name}")
            if not Path(tasks).exists():
                raise UsageError(f"--tasks: no such file or folder: {tasks}")
            kwargs[name] = str(Path(tasks).resolve())
        if kwargs:
            try:
                gym.make(env_id, **kwargs).close()
            except (ValueError, TypeError, OSError, KeyError) as exc:
                raise UsageError(f"{env_id}: {_first_line(exc)}") from None
            out[env_id] = kwargs
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    """``abstain-gym eval``: plan, run (resumably) and report envs x agents x episodes."""
    from agentabstain_gym.core.task import SPLITS
    from agentabstain_gym.runner import EvalConfig, check_agent, check_env_id, evaluate, suite_env_ids

    try:
        if args.tasks and not args.env and not Path(args.tasks).is_dir():
            raise UsageError(f"--tasks {args.tasks}: name the env it is for (only a folder of terminal tasks "
                             "defaults to AbstainTerminal-v1)")
        env_ids = list(args.env) or (["AbstainTools-v0"] if args.pairs else ["AbstainTerminal-v1"] if args.tasks
                                     else suite_env_ids(args.suite))
        env_kwargs: dict[str, dict[str, Any]] = {}
        if args.pairs:
            if env_ids != ["AbstainTools-v0"]:
                raise UsageError("--pairs runs a pair file on AbstainTools-v0; give no other env ids")
            if not Path(args.pairs).is_file():
                raise UsageError(f"no such pair file: {args.pairs}")
            env_kwargs["AbstainTools-v0"] = {"pairs_file": str(Path(args.pairs).resolve())}
        for env_id in env_ids:
            check_env_id(env_id)
        if args.tasks is not None or args.env_kwargs is not None or args.overlay is not None:
            if args.pairs:
                raise UsageError("--pairs is --tasks for AbstainTools-v0: give one of them")
            env_kwargs = env_kwargs_from_args(env_ids, args.tasks, args.env_kwargs, args.overlay)
        if args.split is None:  # your own tasks run whole; the suites run their test split
            args.split = None if args.tasks is not None else "test"
        elif args.split not in SPLITS:
            raise KeyError(f"unknown split {args.split!r}; valid splits: {', '.join(SPLITS)}")
        agents = args.agent or list(BASELINES)
        for spec in agents:
            check_agent(spec)
            preflight_agent(spec)
        from agentabstain_gym.agents.llm import apply_llm_arguments, check_llm_config

        apply_llm_arguments(args)  # as environment variables, so spawned workers see them
        concurrency = _concurrency(args, agents)
        if "llm" in agents:
            try:
                check_llm_config()
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            from agentabstain_gym.agents.llm import LLMError, preflight_llm

            try:
                preflight_llm()  # a dead URL or unknown model: one line and exit 2 now, not a retry loop per episode
            except LLMError as exc:
                raise UsageError(str(exc)) from None
        config = EvalConfig(env_ids=env_ids, agents=agents, split=args.split, episodes=args.episodes,
                            seed=args.seed, env_kwargs=env_kwargs, concurrency=concurrency)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.backend == "ray":
        from agentabstain_gym.distributed import check_ray

        try:
            check_ray()
        except RuntimeError as exc:
            raise UsageError(str(exc)) from None
    if args.plots:
        _check_plots(args.plots, force=args.force)
    if args.out:
        from agentabstain_gym.runfile import RunFileError, check_out

        try:
            check_out(args.out)
        except RunFileError as exc:
            raise UsageError(str(exc)) from None
    if args.out and Path(args.out).exists() and not args.force_new:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from agentabstain_gym.runner import recorded_keys

            recorded_keys(Path(args.out))
        for w in caught:
            print(f"warning: {w.message} (the episode will be re-run)", file=sys.stderr)
    progress = _LazyBar() if not args.quiet else None
    from agentabstain_gym.runfile import RunFileError
    from agentabstain_gym.runner import EvalInterrupted, PlanError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unreadable lines were reported above
            records = evaluate(config, out=args.out, workers=args.workers, progress=progress,
                               force_new=args.force_new, say=lambda line: print(line, file=sys.stderr),
                               backend=args.backend, address=args.address)
    except RunFileError as exc:
        raise UsageError(str(exc)) from None
    except PlanError as exc:  # e.g. a broken --pairs YAML: one line, not a traceback
        raise UsageError(f"{'--pairs ' + args.pairs if args.pairs else 'planning the run'}: {exc}") from None
    except EvalInterrupted as exc:
        if progress is not None:
            progress.close()
        where = (f"{exc.recorded} episodes recorded in {args.out}, run the same command to resume" if args.out else
                 f"{exc.finished} episodes finished, none recorded (no --out)")
        print(f"interrupted: {where}", file=sys.stderr)
        return 130
    finally:
        if progress is not None:
            progress.close()
    print(f"{len(records)} episodes ({', '.join(env_ids)} x {', '.join(agents)}, split {args.split or 'all'}); "
          f"{_error_summary(records)}", file=sys.stderr)
    print(render(records, as_json=args.json))
    if args.plots:
        _plots(records, args.plots)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    """``abstain-gym play``: a human plays one episode in the terminal."""
    import gymnasium as gym

    from agentabstain_gym.runner import check_env_id

    try:
        check_env_id(args.env)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    env = gym.make(args.env)
    options = {"task_id": args.task_id} if args.task_id else None
    try:
        observation, info = env.reset(seed=args.seed, options=options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"Playing {args.env} (task {info['task_id']}); type an action, or 'abstain[reason]' to stop.")
    while True:
        available = info.get("available_actions")
        page = observation.replace(" [SEP] ", "\n") if isinstance(available, dict) else observation
        print(f"\n--- turn {info['turn'] + 1} of {info['max_turns']} ---\n{page}")
        if isinstance(available, dict):  # the web shop: what can be clicked, written as the actions that click it
            actions = ["search[...]"] if available.get("has_search_bar") else []
            actions += [f"click[{c}]" for c in available.get("clickables") or []]
            print("actions: " + ", ".join([*actions, "abstain[reason]"]))
        try:
            action = input("> ")
        except EOFError:
            print("\n(end of input: abstaining)")
            action = "abstain[end of input]"
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            record = info["abstention"]
            print(f"\n{observation}\n\nepisode over: outcome={record['outcome']} should_abstain="
                  f"{record['should_abstain']} category={record['category']} w={record['w']} tau={record['tau']} "
                  f"delay={record['delay']} success={record['success']} reward={reward}")
            return 0


def cmd_terminal_build_image(args: argparse.Namespace) -> int:
    """``abstain-gym terminal build-image``: build the terminal family's Docker image locally."""
    import subprocess

    from agentabstain_gym.envs.terminal.image import build_image
    from agentabstain_gym.envs.terminal.sandbox import SandboxError

    try:
        print(build_image(suite=args.suite, mirror=args.mirror, force=args.force))
    except (RuntimeError, SandboxError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"abstain-gym: build-image failed: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_terminal_validate(args: argparse.Namespace) -> int:
    """``abstain-gym terminal validate``: one line per problem of the task folders under a directory."""
    from agentabstain_gym.envs.terminal.tasks import validate_path

    if not Path(args.dir).exists():
        raise UsageError(f"no such folder: {args.dir}")
    report = validate_path(args.dir, run=args.run)
    for folder, problems in report.items():
        for problem in problems:
            print(f"{folder}: {problem}")
    bad = sum(1 for problems in report.values() if problems)
    print(f"{len(report)} task folder(s), {bad} with problems")
    return 1 if bad else 0


def cmd_tools_generate(args: argparse.Namespace) -> int:
    """``abstain-gym tools generate``: fresh replay-validated pairs from the sandboxes' templates."""
    from collections import Counter

    from agentabstain_gym.envs.tools.fresh import TemplateError, generate, write_pairs
    from agentabstain_gym.envs.tools.splits import shipped_origins

    if args.per_template < 1:
        raise UsageError("--per-template must be at least 1")
    check_new_file(args.out, force=args.force)  # before the work, so a refusal wastes nothing
    try:
        entries, rejected = generate(args.seed, sandboxes=args.sandbox, per_template=args.per_template,
                                     exclude=shipped_origins())  # new to a model trained on the train split
    except TemplateError as exc:
        raise UsageError(str(exc)) from None
    check_new_file(args.out, force=args.force)
    write_pairs(entries, args.out, seed=args.seed)
    scenarios = Counter(d["scenario"] for e in entries for d in e["deltas"])
    print(f"{sum(scenarios.values())} validated pair(s) from {len(entries)} T+ task(s) -> {args.out}")
    print("by scenario: " + ", ".join(f"{k} {v}" for k, v in sorted(scenarios.items())))
    if rejected:
        print(f"{sum(rejected.values())} candidate record(s) rejected by validation")
    return 0 if entries else 1


def cmd_export(args: argparse.Namespace) -> int:
    """``abstain-gym export``: episode records as chat-format JSONL."""
    from agentabstain_gym import export

    check_new_file(args.out, force=args.force)
    return int(export.run_cli(args))


def cmd_train(args: argparse.Namespace) -> int:
    """``abstain-gym train``: PPO stopping policies on a family's Stop form, compared with the baselines."""
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        raise UsageError("train needs the rl extra: pip install torch==2.13.0 stable-baselines3 sb3-contrib (the [rl] extra)") from None
    import agentabstain_gym
    from agentabstain_gym.rl.train import config_from_args, existing_outputs, run, stop_id

    trainable = [e for e in agentabstain_gym.ENV_IDS if stop_id(e) in agentabstain_gym.SB3_ENV_IDS]
    if args.env not in trainable:
        raise UsageError(f"train --env {args.env!r} has no *-Stop-v* form with train/val/test splits; "
                         f"trainable ids: {', '.join(trainable)}")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file; train writes a directory of outputs")
    config = config_from_args(args)
    existing = existing_outputs(config, plot=not args.no_plot)
    if existing and not args.force:
        raise UsageError(f"--out {args.out} already holds {existing[0].name}; pass --force to overwrite it")

    run(config, plot=not args.no_plot)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``abstain-gym`` argument parser with every subcommand."""
    from agentabstain_gym import convolve, export, mcp_server, serve
    from agentabstain_gym.agents.llm import add_llm_arguments

    parser = _Parser(prog="abstain-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="registered ids with their task counts and benchmark fingerprints")
    p.add_argument("--json", action="store_true", help="one JSON object keyed by env id")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("eval", help="evaluate agents on envs, write records, print the report")
    p.add_argument("env", nargs="*", help="env ids (default: the --suite)")
    p.add_argument("--suite", default="all", help="all | web | terminal | qa | tools (when no ids are given)")
    p.add_argument("--agent", action="append",
                   help="random | always-abstain | never-abstain | rules | heuristic | llm | sb3:PATH | module:Class; "
                        "repeatable "
                        "(default: all five baselines)")
    p.add_argument("--split", default=None, help="train | val | test (default test; with --tasks every task)")
    p.add_argument("--episodes", type=positive_int, default=None, help="a seeded sample of this many tasks per env")
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes, started only when the run is big enough to gain from them (results do not "
                        "depend on it); with --backend ray, Ray actors (default: the cluster's CPUs)")
    p.add_argument("--out", default=None, help="JSONL of episode records; re-running with it resumes")
    p.add_argument("--force-new", action="store_true",
                   help="replace --out with a new run file even if it holds another run's records")
    p.add_argument("--plots", default=None, help="directory for the PNG plots")
    p.add_argument("--force", action="store_true", help="overwrite existing --plots images")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--pairs", default=None, help="run this tool pair file (from `tools generate`) on AbstainTools-v0")
    p.add_argument("--tasks", default=None, metavar="FILE",
                   help="your own tasks for the one env given: web task rows (ours, the paper's, WebShop goals), "
                        "QA questions (with --env-kwargs corpus_file), a terminal tasks folder (ours or Terminal-Bench's, either layout; "
                        "the default env for a folder is AbstainTerminal-v1), a tool pair file")
    p.add_argument("--overlay", default=None, help="with AbstainTerminal-v1: a JSONL file of abstention variants")
    p.add_argument("--env-kwargs", default=None, metavar="JSON",
                   help="keyword arguments for every env of the run, as a JSON object")
    p.add_argument("--concurrency", type=int, default=None,
                   help="episodes run at once per process, on threads (default 16 when every agent is llm, "
                        "else 1; with --workers, per worker; results do not depend on it)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (default), or Ray tasks on a Ray cluster (pip install ray: the [ray] extra)")
    p.add_argument("--address", default=None,
                   help="with --backend ray: the cluster (auto, ray://HOST:10001); default: a local one-machine cluster")
    add_llm_arguments(p)  # --base-url --model --api-key --llm-text --playbook
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("report", help="metrics tables (and plots) from JSONL episode records")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object (overall, by family, category, scenario)")
    p.add_argument("--plots", default=None, help="directory for the PNG plots")
    p.add_argument("--force", action="store_true", help="overwrite existing --plots images")
    p.add_argument("--bootstrap", type=nonnegative_int, default=1000, help="bootstrap resamples for the 95%% intervals")
    p.add_argument("--metrics", choices=("ours", "paper"), default="ours",
                   help="ours (default) | paper: the Agentic Abstention release's pass@k and timely-within-grace")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("play", help="play an episode yourself in the terminal")
    p.add_argument("env")
    p.add_argument("--task-id", default=None)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.set_defaults(func=cmd_play)

    term = sub.add_parser("terminal", help="terminal family: build the Docker image, validate task folders")
    tsub = term.add_subparsers(dest="terminal_command", required=True)
    p = tsub.add_parser("build-image", help="build the local Docker image (mmdebstrap + docker import; never pulled)")
    p.add_argument("--suite", default="bookworm")
    p.add_argument("--mirror", default=None, help="Debian mirror (default $ABSTAIN_GYM_DEBIAN_MIRROR or deb.debian.org)")
    p.add_argument("--force", action="store_true", help="rebuild even if the image exists")
    p.set_defaults(func=cmd_terminal_build_image)
    p = tsub.add_parser("validate", help="check terminal task folders (manifest, scripts; --run executes them)")
    p.add_argument("dir", help="a task folder, or a directory of task folders")
    p.add_argument("--run", action="store_true", help="also run setup/solution/check with plain bash (trusted folders)")
    p.set_defaults(func=cmd_terminal_validate)
    from agentabstain_gym.envs.terminal.native.cli import add_check_parser

    add_check_parser(tsub)  # `terminal check DIR`: which Terminal-Bench tasks run on which backend, and why not

    tools = sub.add_parser("tools", help="tool family: make fresh validated pairs")
    toolsub = tools.add_subparsers(dest="tools_command", required=True)
    p = toolsub.add_parser("generate", help="fresh pairs from the sandboxes' T+ templates, replay-validated")
    p.add_argument("--seed", type=nonnegative_int, required=True, help="which records the templates are filled from")
    p.add_argument("--out", required=True, help="pair file to write (YAML); run it with `eval --pairs FILE`")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.add_argument("--sandbox", action="append", help="only these sandboxes (repeatable; default: all with templates)")
    p.add_argument("--per-template", type=positive_int, default=2, help="records drawn per template (default 2)")
    p.set_defaults(func=cmd_tools_generate)

    from agentabstain_gym.gen import cli as gen_cli  # imports no model client until a command runs

    p = sub.add_parser("gen", help="LLM-generated sandboxes and pairs, admitted through validation gates and a critic")
    gen_cli.add_arguments(p)

    from agentabstain_gym.rl.train import add_arguments as add_train_arguments  # imports no torch

    p = sub.add_parser("train", help="train PPO stopping policies on a family's *-Stop-v* env; compare with baselines")
    add_train_arguments(p)
    _retype(p, {"seeds": nonnegative_int, "timesteps": positive_int, "n_envs": positive_int,
                "checkpoints": nonnegative_int})
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("convolve", help="learn a stopping playbook (CONVOLVE); base vs base+playbook on held-out tasks")
    convolve.add_arguments(p)
    _retype(p, {"seed": nonnegative_int, "train": nonnegative_int, "val": nonnegative_int,
                "heldout": nonnegative_int, "rounds": positive_int, "max_bullets": positive_int})
    p.set_defaults(func=convolve.run_cli)

    p = sub.add_parser("mcp", help="serve one env's episodes as MCP tools to an agent harness (stdio or http)")
    mcp_server.add_arguments(p)
    p.set_defaults(func=mcp_server.run)
    p = sub.add_parser("serve", help="the web shop's pages on localhost: shop (search, click, abstain) in a browser")
    serve.add_arguments(p)
    p.set_defaults(func=serve.run)

    p = sub.add_parser("export", help="episode records as chat-format JSONL for fine-tuning")
    export.add_arguments(p)
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.set_defaults(func=cmd_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``abstain-gym`` entry point: 0 on success, 2 with one line on a usage error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"abstain-gym: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
