"""The CONVOLVE protocol of the Agentic Abstention paper, on any family's abstention slice (docs/design.md, section 8).

1. **Split**: abstain tasks that have a solvable twin (same ``pair_id``), stratified by category with a seeded
   generator: ``n_train`` from the env's ``train`` split, ``n_val`` from ``val``, ``n_heldout`` from ``test``
   (topped up from the rest of ``val`` where ``test`` is short; the paper's sizes are 20 / 8 / 101).
2. **Train**: for each training example, up to ``rounds`` rounds of: roll out its solvable twin and the example
   with the current playbook, reflect on each trajectory (the deterministic miner or an LLM), apply the
   deterministic updater. A second round runs only when the first did not end in a timely ABSTAIN.
3. **Validate**: roll out the validation examples and their twins with the final playbook; the updater counts
   helpful / harmful and prunes bullets that did more harm than good. Nothing new is learned here.
4. **Held-out**: the base agent and base + playbook on the held-out examples and their solvable twins, everything
   else identical (env, seeds, budget). Reported: AbsRec@1, AbsRec@10, SPL, over-abstention on the twins, paired
   accuracy (and premature rate, success rate).

With the miner and a deterministic base agent the whole run is a function of the seed: the files written by
:func:`write_outputs` are byte-for-byte reproducible. Held-out tasks are only ever played, never reflected on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentabstain_gym.agents import env_family
from agentabstain_gym.agents.base import Agent
from agentabstain_gym.agents.playbook import Playbook, PlaybookAgent, TrajectoryMiner, update
from agentabstain_gym.core import outcome as oc
from agentabstain_gym.core.metrics import summarize
from agentabstain_gym.core.record import append_records
from agentabstain_gym.core.task import Task
from agentabstain_gym.runner import build_agent, episode_seed, run_episode

APPLY_MODES = ("auto", "stops", "prompt", "both")
REFLECTORS = ("miner", "llm")
#: (metric key in the summary, column label) of the printed comparison.
COMPARISON = (("absrec@1", "AbsRec@1"), ("absrec@10", "AbsRec@10"), ("spl", "SPL"),
              ("over_abstention_rate", "OverAbst(twins)"), ("paired_accuracy", "PairedAcc"),
              ("premature_rate", "Premature"), ("success_rate", "Success(twins)"))


@dataclass
class ConvolveConfig:
    """One protocol run. ``agent`` is a runner agent spec (name or ``module:Class``); ``apply`` says how the
    playbook reaches it: executable ``stops``, the system ``prompt`` (agents with ``set_playbook``), ``both``, or
    ``auto`` (prompt where the agent takes one, else stops). ``llm`` holds LLM agent arguments (base_url, model,
    ...) and ``reflector_llm`` the reflector's (defaults to ``llm``)."""

    env_id: str = "AbstainQA-v0"
    agent: str = "never-abstain"
    reflector: str = "miner"
    seed: int = 0
    n_train: int = 20
    n_val: int = 8
    n_heldout: int = 101
    rounds: int = 2
    apply: str = "auto"
    max_bullets: int = 40
    max_chars: int = 6000
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    reflector_llm: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """Raise ``ValueError`` on an unknown mode or reflector, or on impossible set sizes."""
        if self.apply not in APPLY_MODES:
            raise ValueError(f"apply must be one of {APPLY_MODES}, got {self.apply!r}")
        if self.reflector not in REFLECTORS:
            raise ValueError(f"reflector must be one of {REFLECTORS}, got {self.reflector!r}")
        if min(self.n_train, self.n_val, self.n_heldout) < 0 or self.rounds < 1:
            raise ValueError("set sizes must be >= 0 and rounds >= 1")


# ----- splitting ----------------------------------------------------------------------------------------------------
def _quotas(n: int, categories: list[str], rng: np.random.Generator) -> dict[str, int]:
    """``n`` spread evenly over categories; the remainder goes to categories picked by the seeded generator."""
    if not categories:
        return {}
    base, extra = divmod(n, len(categories))
    lucky = {categories[i] for i in rng.permutation(len(categories))[:extra]}
    return {c: base + (c in lucky) for c in categories}


def _shuffled(tasks: list[Task], rng: np.random.Generator) -> list[Task]:
    ordered = sorted(tasks, key=lambda t: t.task_id)
    return [ordered[i] for i in rng.permutation(len(ordered))]


def protocol_split(tasks: list[Task], *, seed: int, n_train: int = 20, n_val: int = 8,
                   n_heldout: int = 101) -> dict[str, list[Task]]:
    """Stratified ``train`` / ``val`` / ``heldout`` abstain tasks (each with a solvable twin), disjoint by pair."""
    rng = np.random.default_rng(seed)
    twins = {t.pair_id for t in tasks if not t.should_abstain and t.pair_id is not None}
    pool = [t for t in tasks if t.should_abstain and t.pair_id in twins]
    categories = sorted({t.category for t in pool})
    out: dict[str, list[Task]] = {"train": [], "val": [], "heldout": []}
    quotas = {name: _quotas(n, categories, rng) for name, n in (("train", n_train), ("val", n_val),
                                                                 ("heldout", n_heldout))}
    for category in categories:
        mine = [t for t in pool if t.category == category]
        by_split = {s: _shuffled([t for t in mine if t.split == s], rng) for s in ("train", "val", "test")}
        out["train"] += by_split["train"][: quotas["train"][category]]
        val = by_split["val"][: quotas["val"][category]]
        out["val"] += val
        used_pairs = {t.pair_id for t in val}
        rest = by_split["test"] + [t for t in by_split["val"] if t.pair_id not in used_pairs]
        out["heldout"] += rest[: quotas["heldout"][category]]
    return out


def twins_of(examples: list[Task], tasks: list[Task]) -> dict[str, list[Task]]:
    """Solvable tasks sharing each example's ``pair_id`` (the over-abstention controls)."""
    by_pair: dict[str, list[Task]] = {}
    for t in tasks:
        if not t.should_abstain and t.pair_id is not None:
            by_pair.setdefault(t.pair_id, []).append(t)
    return {e.task_id: sorted(by_pair.get(str(e.pair_id), []), key=lambda t: t.task_id) for e in examples}


# ----- agents -------------------------------------------------------------------------------------------------------
class _Player:
    """Builds the base agent once and plays episodes with or without a playbook, identically otherwise."""

    def __init__(self, config: ConvolveConfig, env: gym.Env[Any, Any]) -> None:
        self.config, self.env = config, env
        self.family = env_family(config.env_id)
        self.base = self._build()
        takes_prompt = callable(getattr(self.base, "set_playbook", None))
        mode = config.apply
        if mode == "auto":
            mode = "prompt" if takes_prompt else "stops"
        if mode in ("prompt", "both") and not takes_prompt:
            raise ValueError(f"agent {config.agent!r} takes no playbook prompt (no set_playbook); use --apply stops")
        self.prompt, self.stops = mode in ("prompt", "both"), mode in ("stops", "both")

    def _build(self) -> Agent:
        if self.config.agent == "llm":
            from agentabstain_gym.agents.llm import LLMAgent

            return LLMAgent(family=self.family, **self.config.llm)
        return build_agent(self.config.agent, self.config.env_id, seed=self.config.seed)

    def play(self, task: Task, playbook: Playbook | None, label: str) -> dict[str, Any]:
        agent: Agent = self.base
        if self.prompt:
            self.base.set_playbook(playbook.render(self.family) if playbook else None)  # type: ignore[attr-defined]
        if self.stops and playbook is not None:
            agent = PlaybookAgent(self.base, playbook, family=self.family)
        seed = episode_seed(self.config.seed, self.config.env_id, task.task_id)
        record = run_episode(self.env, agent, task.task_id, seed)
        record["agent"] = label
        return record


def make_reflector(config: ConvolveConfig, family: str) -> Any:
    """The miner, or the LLM reflector + curator configured from ``reflector_llm`` (else ``llm``)."""
    if config.reflector == "miner":
        return TrajectoryMiner(family=family)
    from agentabstain_gym.agents.playbook.reflector import LLMReflector

    return LLMReflector(family=family, **(config.reflector_llm or config.llm))


# ----- the protocol -------------------------------------------------------------------------------------------------
def run_convolve(config: ConvolveConfig,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the whole protocol; returns a JSON-ready result (config, splits, training log, playbook, records,
    held-out metrics of both conditions)."""
    config.check()
    say = progress or (lambda _msg: None)
    env = gym.make(config.env_id, **config.env_kwargs)
    try:
        tasks = list(env.unwrapped.tasks(split=None))  # type: ignore[attr-defined]
        splits = protocol_split(tasks, seed=config.seed, n_train=config.n_train, n_val=config.n_val,
                                n_heldout=config.n_heldout)
        twins = twins_of(splits["train"] + splits["val"] + splits["heldout"], tasks)
        player = _Player(config, env)
        reflector = make_reflector(config, player.family)
        if isinstance(reflector, TrajectoryMiner):  # training data without rollouts: the doable requests of train
            reflector.observe_solvable_requests(t.instruction for t in tasks
                                                if t.split == "train" and not t.should_abstain)
        book = Playbook(meta={"env_id": config.env_id, "agent": config.agent, "reflector": config.reflector,
                              "seed": config.seed})
        log: list[dict[str, Any]] = []

        def learn(record: dict[str, Any], phase: str, round_: int) -> None:
            nonlocal book
            reflection = reflector.reflect(record, book) if phase == "train" else None  # val: counts only
            result = update(book, record, reflection, max_bullets=config.max_bullets, max_chars=config.max_chars)
            book = result.playbook
            log.append({"phase": phase, "round": round_, "task_id": record["task_id"],
                        "category": record["category"], "outcome": record["outcome"], "tau": record["tau"],
                        "reflection": reflection.to_dict() if reflection else None, "applied": result.applied,
                        "skipped": result.skipped, "playbook_version": book.version, "bullets": len(book)})

        for i, example in enumerate(splits["train"], start=1):
            say(f"train {i}/{len(splits['train'])}: {example.task_id} ({example.category})")
            for round_ in range(1, config.rounds + 1):
                for twin in twins[example.task_id]:
                    learn(player.play(twin, book, "train"), "train", round_)
                record = player.play(example, book, "train")
                learn(record, "train", round_)
                if record["outcome"] == oc.TIMELY:
                    break
        say(f"validation: {len(splits['val'])} examples")
        for example in splits["val"]:
            for task in [*twins[example.task_id], example]:
                learn(player.play(task, book, "val"), "val", 0)
        say(f"held-out: {len(splits['heldout'])} examples, base and base+playbook")
        heldout_tasks = _with_twins(splits["heldout"], twins)
        base_label = f"{config.agent}"
        pb_label = f"{config.agent}+playbook"
        records = {"base": [player.play(t, None, base_label) for t in heldout_tasks],
                   "playbook": [player.play(t, book, pb_label) for t in heldout_tasks]}
    finally:
        env.close()
    metrics = {k: summarize(v, bootstrap=0) for k, v in records.items()}
    return {
        "config": asdict(config) | {"llm": _redacted(config.llm), "reflector_llm": _redacted(config.reflector_llm)},
        "family": player.family,
        "splits": {k: [t.task_id for t in v] for k, v in splits.items()},
        "split_categories": {k: _count(t.category for t in v) for k, v in splits.items()},
        "training_log": log,
        "playbook": book.to_dict(),
        "records": records,
        "heldout": {k: {key: m.get(key) for key, _ in COMPARISON} | {"n_abstain": m["n_abstain"],
                                                                       "n_solvable": m["n_solvable"],
                                                                       "n_pairs": m["n_pairs"]}
                    for k, m in metrics.items()},
        "labels": {"base": base_label, "playbook": pb_label},
    }


def _with_twins(examples: list[Task], twins: dict[str, list[Task]]) -> list[Task]:
    out, seen = [], set()
    for e in examples:
        for t in [e, *twins[e.task_id]]:
            if t.task_id not in seen:
                seen.add(t.task_id)
                out.append(t)
    return out


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return dict(sorted(counts.items()))


def _redacted(llm: dict[str, Any]) -> dict[str, Any]:
    return {k: ("***" if "key" in k.lower() else v) for k, v in llm.items()}


# ----- output -------------------------------------------------------------------------------------------------------
def format_comparison(result: dict[str, Any]) -> str:
    """The printed table: base vs base + playbook on the held-out tasks, and the difference."""
    rows = [(result["labels"]["base"], result["heldout"]["base"]),
            (result["labels"]["playbook"], result["heldout"]["playbook"])]
    header = ["held-out"] + [label for _, label in COMPARISON]
    table = [header]
    for name, m in rows:
        table.append([name] + ["-" if m.get(k) is None else f"{m[k]:.3f}" for k, _ in COMPARISON])
    delta = ["difference"]
    for k, _ in COMPARISON:
        a, b = rows[0][1].get(k), rows[1][1].get(k)
        delta.append("-" if a is None or b is None else f"{b - a:+.3f}")
    table.append(delta)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)) for r in table]
    lines.insert(1, "-" * len(lines[0]))
    base = result["heldout"]["base"]
    sizes = result["split_categories"]
    book = result["playbook"]
    lines.append(f"({base['n_abstain']} held-out abstain tasks, {base['n_solvable']} solvable twins; trained on "
                 f"{sum(sizes['train'].values())} examples, validated on {sum(sizes['val'].values())}; playbook "
                 f"v{book['version']} with {len(book['bullets'])} bullets)")
    return "\n".join(lines)


#: What :func:`write_outputs` writes into its directory.
OUTPUT_FILES = ("playbook.json", "convolve.json", "heldout_base.jsonl", "heldout_playbook.jsonl", "training.jsonl")


def existing_outputs(out_dir: str | Path) -> list[Path]:
    """Output files already in ``out_dir``: the CLI refuses to overwrite them without ``--force``."""
    return [Path(out_dir) / name for name in OUTPUT_FILES if (Path(out_dir) / name).exists()]


def write_outputs(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """``playbook.json``, ``convolve.json`` (everything but the records), ``heldout_base.jsonl``,
    ``heldout_playbook.jsonl`` and ``training.jsonl``; canonical JSON, so equal runs give equal bytes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    playbook = Playbook.from_dict(result["playbook"])
    playbook.save(out / "playbook.json")
    written.append(out / "playbook.json")
    summary = {k: v for k, v in result.items() if k not in ("records", "training_log")}
    (out / "convolve.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    written.append(out / "convolve.json")
    for name, rows in (("heldout_base", result["records"]["base"]), ("heldout_playbook", result["records"]["playbook"]),
                       ("training", result["training_log"])):
        path = out / f"{name}.jsonl"
        path.unlink(missing_ok=True)
        append_records(path, rows)
        written.append(path)
    return written


# ----- command line (``abstain-gym convolve``; also ``python -m agentabstain_gym.convolve``) ------------------------
def add_arguments(parser: Any) -> None:
    """The ``convolve`` options, for the CLI owner to mount under a sub-command."""
    parser.add_argument("--env", default="AbstainWebShop-v1", help="env id (default AbstainWebShop-v1, the paper's "
                        "setting; AbstainQA-v0 and AbstainTools-v0 work too)")
    parser.add_argument("--agent", default="never-abstain", help="never-abstain | rules | llm | module:Class")
    parser.add_argument("--reflector", default="miner", choices=list(REFLECTORS),
                        help="miner: deterministic, no model; llm: reflector + curator prompts on a server")
    parser.add_argument("--apply", default="auto", choices=list(APPLY_MODES),
                        help="how the playbook reaches the agent (auto: prompt for llm, stops otherwise)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train", type=int, default=20, help="training examples (default 20)")
    parser.add_argument("--val", type=int, default=8, help="validation examples (default 8)")
    parser.add_argument("--heldout", type=int, default=101, help="held-out examples (default 101)")
    parser.add_argument("--rounds", type=int, default=2, help="reflection rounds per training example (default 2)")
    parser.add_argument("--max-bullets", type=int, default=40, help="playbook size budget in bullets")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible server for --agent/--reflector llm")
    parser.add_argument("--model", default=None, help="model of the LLM agent (and of the reflector)")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--reflector-model", default=None, help="a different model for the reflector + curator")
    parser.add_argument("--reflector-base-url", default=None, help="a different server for the reflector")
    parser.add_argument("--out", default=None, help="directory for playbook.json, convolve.json and the records")
    parser.add_argument("--json", action="store_true", help="print the held-out metrics as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--force", action="store_true", help="overwrite output files already in --out")


def config_from_args(args: Any) -> ConvolveConfig:
    """A :class:`ConvolveConfig` from the parsed command line (the reflector may use another model or server).
    """
    llm = {k: v for k, v in (("base_url", args.base_url), ("model", args.model), ("api_key", args.api_key))
           if v is not None}
    reflector_llm = dict(llm)
    if args.reflector_model:
        reflector_llm["model"] = args.reflector_model
    if args.reflector_base_url:
        reflector_llm["base_url"] = args.reflector_base_url
    return ConvolveConfig(env_id=args.env, agent=args.agent, reflector=args.reflector, seed=args.seed,
                          n_train=args.train, n_val=args.val, n_heldout=args.heldout, rounds=args.rounds,
                          apply=args.apply, max_bullets=args.max_bullets, llm=llm, reflector_llm=reflector_llm)


def run_cli(args: Any) -> int:
    """Run the protocol from parsed arguments; bad names or files give one line and exit code 2."""
    import sys

    import agentabstain_gym
    from agentabstain_gym.runner import check_agent

    try:
        if args.env not in agentabstain_gym.ENV_IDS:
            raise KeyError(f"unknown env id {args.env!r}; valid ids: {', '.join(agentabstain_gym.ENV_IDS)}")
        check_agent(args.agent)
        config = config_from_args(args)
        config.check()
        from agentabstain_gym.agents.llm_client import ChatCaller

        if config.agent == "llm":  # fail before any rollout when no model is set
            ChatCaller(**config.llm)
        if config.reflector == "llm":
            ChatCaller(**(config.reflector_llm or config.llm))
    except (KeyError, ValueError) as exc:
        print(f"abstain-gym: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    if args.out:
        existing = existing_outputs(args.out)
        if Path(args.out).exists() and not Path(args.out).is_dir():
            print(f"abstain-gym: error: --out {args.out} is a file; convolve writes a directory", file=sys.stderr)
            return 2
        if existing and not getattr(args, "force", False):
            print(f"abstain-gym: error: --out {args.out} already holds {existing[0].name}; pass --force to "
                  "overwrite it", file=sys.stderr)
            return 2
    progress = None if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    result = run_convolve(config, progress=progress)
    if args.out:
        for path in write_outputs(result, args.out):
            if not args.quiet:
                print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result["heldout"], indent=2, sort_keys=True) if args.json else format_comparison(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``abstain-gym convolve`` as a standalone command."""
    import argparse

    parser = argparse.ArgumentParser(prog="abstain-gym convolve", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
