"""A saved Stable-Baselines3 stopping policy as a runner agent: ``abstain-gym eval --agent sb3:PATH``.

The policy was trained on a ``*-Stop-v*`` env, where the family's never-abstaining solver proposes every action and
the policy decides continue or ABSTAIN from :class:`~agentabstain_gym.wrappers.rl.features.StoppingFeatures`. This
agent replays exactly that loop on the family's text env, with the same feature code, so its records are the
policy's results on any split. It reads only observations and ``info``, like every agent.

``PATH`` is the ``.zip`` SB3 wrote (the ``.zip`` may be left off); a sidecar ``<PATH>.json`` written by
:func:`agentabstain_gym.rl.train.save_policy` records the algorithm, the env id and the feature names, which must
match the features this version computes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator

from agentabstain_gym.core.actions import ABSTAIN

SB3_PREFIX = "sb3:"
ALGORITHMS = ("PPO", "A2C", "DQN")


def policy_paths(path: str | Path) -> tuple[Path, Path]:
    """The model zip and its JSON sidecar for ``path`` (with or without ``.zip``)."""
    path = Path(path)
    model = path if path.suffix == ".zip" else path.with_name(path.name + ".zip")
    return model, model.with_suffix(".json")


def load_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata saved beside a policy (algorithm, env id, family, feature names, reward coefficients...)."""
    _, meta = policy_paths(path)
    if not meta.exists():
        raise FileNotFoundError(f"{meta} is missing: save policies with agentabstain_gym.rl.train.save_policy")
    return json.loads(meta.read_text(encoding="utf-8"))


class SB3StoppingAgent:
    """The family's solver (abstention off) with a learned continue/ABSTAIN policy on top.

    ``deterministic`` picks the policy's most likely action (the default for evaluation). ``threshold`` (default:
    the sidecar's ``abstain_threshold``, else None) abstains only when the policy gives ABSTAIN at least that
    probability; training calibrates it on the validation split to hold over-abstention down.
    """

    def __init__(self, path: str | Path, env_id: str | None = None, *, deterministic: bool = True,
                 threshold: float | None = None) -> None:
        import stable_baselines3

        model_path, _ = policy_paths(path)
        meta = load_metadata(path)
        if meta.get("algorithm") not in ALGORITHMS:
            raise ValueError(f"{model_path}: algorithm {meta.get('algorithm')!r} is not one of {ALGORITHMS}")
        model = getattr(stable_baselines3, meta["algorithm"]).load(str(model_path), device="cpu")
        self._setup(model, env_id or meta["env_id"], meta, deterministic, str(meta.get("name") or
                                                                                  f"sb3:{model_path.stem}"))
        self.threshold = threshold if threshold is not None else meta.get("abstain_threshold")

    @classmethod
    def from_model(cls, model: Any, env_id: str, meta: dict[str, Any], *, deterministic: bool = True,
                   name: str = "sb3") -> SB3StoppingAgent:
        """An agent around an in-memory model (e.g. for validation curves during training)."""
        agent = cls.__new__(cls)
        agent._setup(model, env_id, meta, deterministic, name)
        agent.threshold = meta.get("abstain_threshold")
        return agent

    def _setup(self, model: Any, env_id: str, meta: dict[str, Any], deterministic: bool, name: str) -> None:
        from agentabstain_gym.agents import env_family, make_agent
        from agentabstain_gym.wrappers.rl.features import StoppingFeatures

        family = env_family(env_id)
        if family != meta.get("family"):
            raise ValueError(f"the policy was trained on the {meta.get('family')!r} family, not {family!r} "
                             f"({env_id})")
        self.solver = make_agent("never-abstain", env_id)
        verbs = load_env_creator(str(gym.spec(env_id).entry_point)).verbs  # the family env class's grammar
        self.features = StoppingFeatures(family, verbs, max_retries=int(meta.get("max_retries", 3)),
                                         seconds_per_turn=float(meta.get("seconds_per_turn", 0.0)),
                                         hook="auto" if meta.get("family_features", True) else None)
        if list(self.features.names) != list(meta["feature_names"]):
            raise ValueError("the policy was trained on other features than this version computes; retrain it "
                             f"(missing: {sorted(set(meta['feature_names']) - set(self.features.names))}, new: "
                             f"{sorted(set(self.features.names) - set(meta['feature_names']))})")
        self.model = model
        self._meta = dict(meta)
        self.threshold: float | None = None
        self.deterministic = deterministic
        self.name = name
        self._last: str | None = None

    def features_meta(self) -> dict[str, Any]:
        """The sidecar keys this agent's features were built from (to build agents around other thresholds)."""
        return dict(self._meta)

    def reset(self) -> None:
        """Reset the solver and the features for a new episode."""
        self.solver.reset()
        self._last = None

    def abstain_probability(self, features: np.ndarray) -> float:
        """The policy's probability of ABSTAIN for one feature vector."""
        import torch

        obs, _ = self.model.policy.obs_to_tensor(features)
        with torch.no_grad():
            return float(self.model.policy.get_distribution(obs).distribution.probs[0, 1].item())

    def decide(self, features: np.ndarray) -> bool:
        """True to abstain, from one feature vector."""
        if self.threshold is not None:
            return self.abstain_probability(features) >= self.threshold
        action, _ = self.model.predict(features, deterministic=self.deterministic)
        return int(np.asarray(action).item()) == 1

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The solver's proposal, or ABSTAIN when the policy chooses to stop on the features so far."""
        if self._last is None:
            self.features.reset(observation, info)
        else:
            self.features.observe(self._last, observation, info)
        proposal = self.solver.act(observation, info)
        stop = self.decide(self.features.vector(observation, info, proposal))
        self._last = ABSTAIN if stop else proposal
        return self._last


def from_spec(spec: str, env_id: str) -> SB3StoppingAgent:
    """The agent of a runner spec ``sb3:PATH``."""
    if not spec.startswith(SB3_PREFIX):
        raise ValueError(f"not an sb3 agent spec: {spec!r} (expected sb3:PATH)")
    return SB3StoppingAgent(spec[len(SB3_PREFIX):], env_id)
