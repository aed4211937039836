"""Train a PPO stopping policy on a family's ``*-Stop-v*`` env and compare it with the baselines on held-out tasks.

The loop the issue asks for, as functions the example script and ``abstain-gym train`` share: PPO (torch on one
thread) on the train split for each of several seeds, a learning curve (training reward, and paired accuracy / SPL
on the *validation* split at checkpoints), the saved policy (``.zip`` + ``.json`` sidecar, loadable as the agent
``sb3:PATH``), and a table on the *test* split against ``never-abstain``, ``always-abstain`` and ``rules``. Nothing
is chosen by looking at the test split: hyper-parameters are fixed arguments, and the final model of each seed is
the one evaluated.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentabstain_gym.core import metrics
from agentabstain_gym.runner import EvalConfig, evaluate, plan, run_episode

#: Columns of the comparison table: (metric key of :func:`metrics.summarize`, header).
COLUMNS = (("absrec@1", "AbsRec@1"), ("absrec@5", "AbsRec@5"), ("spl", "SPL"),
           ("over_abstention_rate", "over-abst"), ("paired_accuracy", "paired acc"), ("success_rate", "success"))
BASELINES = ("never-abstain", "always-abstain", "rules")
#: Shown for reference: the family's hand-written heuristic, which reads request cues and evidence itself.
REFERENCE = ("heuristic",)
DEFAULT_REWARD = {"justified": 1.0, "spl_weighted": True, "premature": -0.5, "missed": 0.0, "over_abstain": -1.0,
                  "task_scale": 1.0, "step_cost": 0.0}
DEFAULT_PPO = {"n_steps": 256, "batch_size": 256, "n_epochs": 10, "learning_rate": 3e-4, "gamma": 0.99,
               "ent_coef": 0.01, "policy_kwargs": {"net_arch": [64, 64]}}


def stop_id(env_id: str) -> str:
    """The stopping-policy id of a family id, same version: ``AbstainWebShop-v1`` -> ``AbstainWebShop-Stop-v1``."""
    name, _, version = env_id.rpartition("-v")
    return f"{name}-Stop-v{version}"


@dataclass
class TrainConfig:
    """What to train and how; every field has a default that runs in minutes on 2 CPU cores."""

    env_id: str = "AbstainQA-v0"
    seeds: Sequence[int] = (0, 1, 2)
    timesteps: int = 30_000
    n_envs: int = 4
    subproc: bool = False
    reward: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_REWARD))
    ppo: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_PPO))
    checkpoints: int = 6
    family_features: bool = True
    out_dir: str = "runs/rl"
    eval_split: str = "test"
    curve_split: str = "val"
    baselines: Sequence[str] = BASELINES + REFERENCE
    #: Pick the ABSTAIN-probability threshold on ``curve_split`` (never the test split): the best paired accuracy
    #: among thresholds whose over-abstention there is no higher than the rules agent's.
    calibrate: bool = True


@dataclass
class SeedResult:
    """One training seed's outcome: the saved policy, time taken, learning curve and test summary."""
    seed: int
    path: str
    seconds: float
    curve: dict[str, list[float]]
    summary: dict[str, Any] = field(default_factory=dict)


def _make_stop_env(env_id: str, split: str, reward: dict[str, Any], family_features: bool) -> gym.Env:
    from stable_baselines3.common.monitor import Monitor

    from agentabstain_gym.wrappers.rl.stopping_env import StoppingPolicyEnv

    return Monitor(StoppingPolicyEnv(env_id, env_kwargs={"split": split}, family_features=family_features, **reward))


def make_stop_vec_env(env_id: str, n_envs: int, *, split: str = "train", reward: dict[str, Any] | None = None,
                      subproc: bool = False, family_features: bool = True) -> Any:
    """An SB3 VecEnv of ``n_envs`` stopping envs (``SubprocVecEnv`` when ``subproc``), each Monitor-wrapped."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns: list[Callable[[], gym.Env]] = [partial(_make_stop_env, env_id, split, dict(reward or DEFAULT_REWARD),
                                                family_features) for _ in range(n_envs)]
    return SubprocVecEnv(fns) if subproc else DummyVecEnv(fns)


def policy_metadata(env_id: str, reward: dict[str, Any], *, algorithm: str = "PPO", family_features: bool = True,
                    **extra: Any) -> dict[str, Any]:
    """The sidecar of a saved policy: what it was trained on and the feature layout it expects."""
    from agentabstain_gym.wrappers.rl.stopping_env import StoppingPolicyEnv

    env = StoppingPolicyEnv(env_id, env_kwargs={"split": "train"}, family_features=family_features, **reward)
    meta = {"algorithm": algorithm, "env_id": env_id, "family": env.family, "feature_names": list(env.feature_names),
            "max_retries": env.features.max_retries, "seconds_per_turn": 0.0, "family_features": family_features,
            "reward": dict(reward), **extra}
    env.close()
    return meta


def save_policy(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write ``<path>.zip`` (SB3) and ``<path>.json`` (sidecar); return the zip's path."""
    from agentabstain_gym.agents.sb3 import policy_paths

    zip_path, meta_path = policy_paths(path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(zip_path))
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return zip_path


def evaluate_agent(agent: Any, env_id: str, *, split: str, seed: int = 0, label: str | None = None,
                   spec: str | None = None) -> list[dict[str, Any]]:
    """The runner's episode plan for one agent object (same tasks and seeds as ``evaluate``), played with
    :func:`runner.run_episode`."""
    label = label or str(getattr(agent, "name", "agent"))
    episodes = plan(EvalConfig(env_ids=[env_id], agents=[spec or label], split=split, seed=seed))
    env = gym.make(env_id)
    records = []
    for episode in episodes:
        record = run_episode(env, agent, episode.task_id, episode.seed)
        record["agent"], record["agent_spec"] = label, spec or label
        records.append(record)
    env.close()
    return records


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics of ``records`` without bootstrap intervals (training compares point estimates)."""
    return metrics.summarize(records, bootstrap=0)


THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99)


def calibrate_threshold(model: Any, env_id: str, meta: dict[str, Any], *, split: str, max_over_abstention: float,
                        thresholds: Sequence[float] = THRESHOLDS) -> dict[str, Any]:
    """Choose the ABSTAIN threshold on ``split``: the best paired accuracy (then SPL, then the lower threshold)
    among thresholds with over-abstention <= ``max_over_abstention``; if none qualifies, the lowest over-abstention."""
    from agentabstain_gym.agents.sb3 import SB3StoppingAgent

    rows = []
    for threshold in thresholds:
        agent = SB3StoppingAgent.from_model(model, env_id, {**meta, "abstain_threshold": threshold})
        summary = summarize(evaluate_agent(agent, env_id, split=split))
        rows.append({"threshold": threshold, **{k: summary[k] or 0.0 for k in
                                                ("paired_accuracy", "spl", "over_abstention_rate")}})
    ok = [r for r in rows if r["over_abstention_rate"] <= max_over_abstention + 1e-9]
    best = (max(ok, key=lambda r: (r["paired_accuracy"], r["spl"], -r["threshold"])) if ok
            else min(rows, key=lambda r: (r["over_abstention_rate"], -r["paired_accuracy"])))
    return {"split": split, "max_over_abstention": max_over_abstention, "chosen": best["threshold"], "rows": rows}


class _CurveCallback:
    """Collects the training curve (Monitor episode rewards) and validation metrics at checkpoints."""

    def __init__(self, env_id: str, meta: dict[str, Any], split: str, every: int) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        outer = self

        class Callback(BaseCallback):
            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    if "episode" in info:
                        outer.rewards.append((self.num_timesteps, float(info["episode"]["r"])))
                if self.num_timesteps >= outer.next_check:
                    outer.check(self.model, self.num_timesteps)
                return True

        self.callback = Callback()
        self.env_id, self.meta, self.split, self.every = env_id, meta, split, every
        self.next_check = every
        self.rewards: list[tuple[int, float]] = []
        self.checks: dict[str, list[float]] = {"timesteps": [], "paired_accuracy": [], "spl": [],
                                               "over_abstention_rate": []}

    def check(self, model: Any, timesteps: int) -> None:
        from agentabstain_gym.agents.sb3 import SB3StoppingAgent

        agent = SB3StoppingAgent.from_model(model, self.env_id, self.meta, name="sb3")
        summary = summarize(evaluate_agent(agent, self.env_id, split=self.split))
        self.checks["timesteps"].append(float(timesteps))
        for key in ("paired_accuracy", "spl", "over_abstention_rate"):
            self.checks[key].append(float(summary[key] or 0.0))
        self.next_check = timesteps + self.every

    def curve(self, window: int = 200) -> dict[str, list[float]]:
        steps = [float(t) for t, _ in self.rewards]
        values = np.array([r for _, r in self.rewards], dtype=float)
        smooth = [float(values[max(0, i - window + 1): i + 1].mean()) for i in range(len(values))]
        stride = max(1, len(steps) // 200)
        return {"train_timesteps": steps[::stride], "train_reward": smooth[::stride],
                **{f"val_{k}" if k != "timesteps" else "val_timesteps": v for k, v in self.checks.items()}}


def train_seed(config: TrainConfig, seed: int, *, log: Callable[[str], None] = print,
               max_over_abstention: float | None = None) -> SeedResult:
    """Train one PPO policy on the train split and save it under ``out_dir``."""
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    tag = "" if config.family_features else "-generic"
    meta = policy_metadata(config.env_id, config.reward, family_features=config.family_features, seed=seed,
                           timesteps=config.timesteps, ppo=dict(config.ppo), name=f"sb3-ppo{tag}-seed{seed}")
    env = make_stop_vec_env(config.env_id, config.n_envs, split="train", reward=config.reward,
                            subproc=config.subproc, family_features=config.family_features)
    curve = _CurveCallback(config.env_id, meta, config.curve_split,
                           every=max(1, config.timesteps // max(1, config.checkpoints)))
    start = time.perf_counter()
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **config.ppo)
    model.learn(total_timesteps=config.timesteps, callback=curve.callback)
    seconds = time.perf_counter() - start
    env.close()
    if config.calibrate:
        if max_over_abstention is None:
            max_over_abstention = float(baseline_summaries(config.env_id, config.curve_split, ("rules",))["rules"]
                                        ["over_abstention_rate"] or 0.0)
        meta["calibration"] = calibrate_threshold(model, config.env_id, meta, split=config.curve_split,
                                                  max_over_abstention=max_over_abstention)
        meta["abstain_threshold"] = meta["calibration"]["chosen"]
        log(f"seed {seed}: ABSTAIN threshold {meta['abstain_threshold']} (chosen on the {config.curve_split} split)")
    path = save_policy(model, Path(config.out_dir) / f"{stop_id(config.env_id)}-ppo{tag}-seed{seed}", meta)
    log(f"seed {seed}: {config.timesteps} steps in {seconds:.1f} s ({config.timesteps / seconds:.0f} steps/s)"
        f" -> {path}")
    return SeedResult(seed=seed, path=str(path), seconds=seconds, curve=curve.curve())


def baseline_summaries(env_id: str, split: str, agents: Sequence[str] = BASELINES) -> dict[str, dict[str, Any]]:
    """Each baseline agent's metrics on ``split`` of ``env_id``, for the comparison table."""
    records = evaluate(EvalConfig(env_ids=[env_id], agents=list(agents), split=split))
    return {a: summarize([r for r in records if r["agent_spec"] == a]) for a in agents}


def _cell(values: list[float | None]) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "-"
    if len(values) == 1:
        return f"{present[0]:.3f}"
    return f"{np.mean(present):.3f} ± {np.std(present):.3f}"


def format_table(baselines: dict[str, dict[str, Any]], learned: list[SeedResult], *, label: str = "PPO") -> str:
    """Markdown table: one row per baseline, the learned policy as mean ± std over seeds, then each seed."""
    header = "| agent | " + " | ".join(h for _, h in COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 1)]
    for name, summary in baselines.items():
        lines.append(f"| {name} | " + " | ".join(_cell([summary.get(k)]) for k, _ in COLUMNS) + " |")
    if learned:
        seeds = ",".join(str(r.seed) for r in learned)
        lines.append(f"| {label} (seeds {seeds}, mean ± std) | "
                     + " | ".join(_cell([r.summary.get(k) for r in learned]) for k, _ in COLUMNS) + " |")
        for r in learned:
            lines.append(f"| {label} seed {r.seed} | " + " | ".join(_cell([r.summary.get(k)]) for k, _ in COLUMNS)
                         + " |")
    return "\n".join(lines)


def verdict(rules: dict[str, Any], learned: list[SeedResult]) -> dict[str, Any]:
    """Whether the learned policy (mean over seeds) beats ``rules`` on paired accuracy and SPL, with over-abstention
    no higher; also per seed."""
    def beats(s: dict[str, Any]) -> bool:
        return bool((s["paired_accuracy"] or 0) > (rules["paired_accuracy"] or 0) and (s["spl"] or 0) > (rules["spl"] or 0)
                    and (s["over_abstention_rate"] or 0) <= (rules["over_abstention_rate"] or 0))

    mean = {k: float(np.mean([r.summary[k] or 0 for r in learned])) for k in
            ("paired_accuracy", "spl", "over_abstention_rate")}
    return {"mean_beats_rules": beats(mean), "seeds_beating_rules": [r.seed for r in learned if beats(r.summary)],
            "mean": mean}


def plot_curves(results: list[SeedResult], path: str | Path, title: str) -> Path:
    """Learning curves: training reward (smoothed) and validation paired accuracy / SPL, one line per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for i, r in enumerate(results):
        colour = f"C{i}"
        ax1.plot(r.curve["train_timesteps"], r.curve["train_reward"], color=colour, label=f"seed {r.seed}")
        ax2.plot(r.curve["val_timesteps"], r.curve["val_paired_accuracy"], color=colour, marker="o",
                 label=f"paired acc, seed {r.seed}")
        ax2.plot(r.curve["val_timesteps"], r.curve["val_spl"], color=colour, marker="x", linestyle="--",
                 label=f"SPL, seed {r.seed}")
        ax2.plot(r.curve["val_timesteps"], r.curve["val_over_abstention_rate"], color=colour, marker=".",
                 linestyle=":", label=f"over-abstention, seed {r.seed}")
    ax1.set(xlabel="env steps", ylabel="episode reward (train, moving mean of 200)", title="training")
    ax2.set(xlabel="env steps", ylabel="validation split", ylim=(-0.02, 1.02),
            title="validation split (paired acc o, SPL x, over-abstention .)")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def existing_outputs(config: TrainConfig, *, plot: bool = True) -> list[Path]:
    """The files a run would write that already exist, so the CLI can refuse to overwrite them without --force."""
    out, tag = Path(config.out_dir), "" if config.family_features else "-generic"
    names = [f"{stop_id(config.env_id)}{tag}-report.json"]
    if plot:
        names.append(f"{stop_id(config.env_id)}{tag}-learning-curve.png")
    for seed in config.seeds:
        stem = f"{stop_id(config.env_id)}-ppo{tag}-seed{seed}"
        names += [f"{stem}.zip", f"{stem}.json"]
    return [out / name for name in names if (out / name).exists()]


def run(config: TrainConfig, *, log: Callable[[str], None] = print, plot: bool = True) -> dict[str, Any]:
    """Train every seed, evaluate on the test split, print and return the comparison (also written as JSON)."""
    from agentabstain_gym.agents.sb3 import SB3StoppingAgent

    out = Path(config.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    limit = None
    if config.calibrate:
        limit = float(baseline_summaries(config.env_id, config.curve_split, ("rules",))["rules"]
                      ["over_abstention_rate"] or 0.0)
    for seed in config.seeds:
        result = train_seed(config, seed, log=log, max_over_abstention=limit)
        agent = SB3StoppingAgent(result.path, config.env_id)
        spec = f"sb3:{result.path}"
        result.summary = summarize(evaluate_agent(agent, config.env_id, split=config.eval_split,
                                                  label=agent.name, spec=spec))
        results.append(result)
    baselines = baseline_summaries(config.env_id, config.eval_split, config.baselines)
    tag = "" if config.family_features else "-generic"
    table = format_table(baselines, results, label="PPO" + (" (generic features)" if tag else ""))
    judged = verdict(baselines["rules"], results)
    log(f"\n{config.env_id}, {config.eval_split} split ({config.timesteps} PPO steps per seed, "
        f"mean train time {np.mean([r.seconds for r in results]):.1f} s):\n{table}")
    log(f"learned policy beats rules (paired acc and SPL higher, over-abstention no higher): "
        f"{judged['mean_beats_rules']} (seeds beating: {judged['seeds_beating_rules']})")
    report = {"config": asdict(config), "baselines": baselines, "verdict": judged, "table": table,
              "seeds": [asdict(r) for r in results]}
    if plot:
        png = plot_curves(results, out / f"{stop_id(config.env_id)}{tag}-learning-curve.png",
                          f"PPO on {stop_id(config.env_id)} (train split), seeds {list(config.seeds)}")
        report["plot"] = str(png)
        log(f"learning curve: {png}")
    (out / f"{stop_id(config.env_id)}{tag}-report.json").write_text(json.dumps(report, indent=2, default=str) + "\n",
                                                               encoding="utf-8")
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``abstain-gym train`` and ``examples/train_stopping_policy.py``."""
    d = TrainConfig()
    parser.add_argument("--env", default=d.env_id, help="family id whose *-Stop-v* form is trained (default %(default)s)")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(d.seeds), help="training seeds (default 0 1 2)")
    parser.add_argument("--timesteps", type=int, default=d.timesteps, help="PPO env steps per seed (%(default)s)")
    parser.add_argument("--n-envs", type=int, default=d.n_envs, help="parallel envs per PPO rollout (%(default)s)")
    parser.add_argument("--subproc", action="store_true", help="SubprocVecEnv instead of DummyVecEnv")
    parser.add_argument("--out", default=d.out_dir, help="where policies, the report and the plot go (%(default)s)")
    parser.add_argument("--checkpoints", type=int, default=d.checkpoints,
                        help="validation-split evaluations during training, for the curve (%(default)s)")
    parser.add_argument("--generic-features", action="store_true",
                        help="train on the family-agnostic features only (no family hook; an ablation)")
    for key in ("justified", "premature", "missed", "over_abstain", "step_cost"):
        parser.add_argument(f"--{key.replace('_', '-')}", type=float, default=DEFAULT_REWARD[key],
                            help=f"AbstentionReward coefficient {key} (%(default)s)")
    parser.add_argument("--no-calibrate", action="store_true",
                        help="act on the policy's most likely action instead of a threshold chosen on the val split")
    parser.add_argument("--no-plot", action="store_true", help="skip the learning-curve PNG (no matplotlib)")
    parser.add_argument("--force", action="store_true", help="overwrite policies, report and plot already in --out")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """A :class:`TrainConfig` from the parsed ``abstain-gym train`` arguments."""
    reward = dict(DEFAULT_REWARD)
    reward.update({k: getattr(args, k) for k in ("justified", "premature", "missed", "over_abstain", "step_cost")})
    return TrainConfig(env_id=args.env, seeds=tuple(args.seeds), timesteps=args.timesteps, n_envs=args.n_envs,
                       subproc=args.subproc, reward=reward, checkpoints=args.checkpoints, out_dir=args.out,
                       family_features=not args.generic_features, calibrate=not args.no_calibrate)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the example script (``abstain-gym train`` calls :func:`config_from_args` and :func:`run`)."""
    parser = argparse.ArgumentParser(description="Train PPO stopping policies and compare them with the baselines.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    report = run(config_from_args(args), plot=not args.no_plot)
    return 0 if report["seeds"] else 1
