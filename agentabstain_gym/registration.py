"""The one place where environment ids are registered. Ids are public API: never rename one once released."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

from agentabstain_gym.envs.tools.catalog import sandbox_names as tool_sandbox_names

#: id -> (entry point, default kwargs). Entry points are "module:Class" strings so ``spec.to_json()`` works.
_ENVS: dict[str, tuple[str, dict]] = {
    "AbstainQA-v0": ("agentabstain_gym.envs.qa.env:AbstainQAEnv", {}),
    "AbstainQA-Stop-v0": ("agentabstain_gym.wrappers.rl.stopping_env:StoppingPolicyEnv", {"env_id": "AbstainQA-v0"}),
    "AbstainWebShop-v1": ("agentabstain_gym.envs.web.env:AbstainWebShopEnv", {}),
    "AbstainWebShop-Stop-v1": ("agentabstain_gym.wrappers.rl.stopping_env:StoppingPolicyEnv", {"env_id": "AbstainWebShop-v1"}),
    "AbstainWebShop-Discrete-v1": ("agentabstain_gym.wrappers.rl.discrete:DiscreteActionEnv", {"env_id": "AbstainWebShop-v1"}),
    "AbstainTerminal-v1": ("agentabstain_gym.envs.terminal.env:AbstainTerminalEnv", {}),
    "AbstainTerminal-Stop-v1": ("agentabstain_gym.wrappers.rl.stopping_env:StoppingPolicyEnv",
                                {"env_id": "AbstainTerminal-v1"}),
    "AbstainTools-v0": ("agentabstain_gym.envs.tools.env:AbstainToolsEnv", {}),
    "AbstainTools-Stop-v0": ("agentabstain_gym.wrappers.rl.stopping_env:StoppingPolicyEnv", {"env_id": "AbstainTools-v0"}),
}
#: One id per tool sandbox, AbstainTools/<Name>-v0, from the sandbox files (a directory listing, no parsing).
_ENVS.update({f"AbstainTools/{name}-v0": ("agentabstain_gym.envs.tools.env:AbstainToolsEnv", {"sandbox": name})
              for name in tool_sandbox_names()})

#: The horizon registered as ``max_episode_steps``: the longest episode the family's default tasks allow (its
#: ``max_turns_bound``, which a test keeps equal: the default ``max_turns``, or for the terminal the largest budget a
#: shipped task sets), a Stop or Discrete form inheriting its family's. The env's own budget stays authoritative:
#: :class:`~agentabstain_gym.wrappers.KeepRecordOnTimeLimit` keeps this limit from cutting an episode that
#: ``max_turns=`` or a task's own budget allows to run longer.
FAMILY_MAX_TURNS: dict[str, int] = {"AbstainQA-v0": 10, "AbstainWebShop-v1": 10, "AbstainTerminal-v1": 30,
                                    "AbstainTools-v0": 30}
#: Ids whose episodes depend on more than the seed and the actions: the terminal runs real commands in a sandbox
#: (``date``, ``$RANDOM`` and process ids differ between runs), so Gymnasium's ``nondeterministic`` flag is set.
NONDETERMINISTIC_FAMILIES = frozenset({"AbstainTerminal-v1"})


def family_id(env_id: str) -> str:
    """The family id behind ``env_id``: itself for a family id, the wrapped id for a Stop or Discrete form, and
    ``AbstainTools-v0`` for a single sandbox's id."""
    entry_point, kwargs = _ENVS[env_id]
    if "env_id" in kwargs:
        return str(kwargs["env_id"])
    return "AbstainTools-v0" if env_id.startswith("AbstainTools/") else env_id


#: Family ids (text spaces; what agents are evaluated on) and SB3-ready forms (numeric spaces); all are registered.
ENV_IDS: tuple[str, ...] = tuple(e for e in _ENVS if not _ENVS[e][0].startswith("agentabstain_gym.wrappers."))
SB3_ENV_IDS: tuple[str, ...] = tuple(e for e in _ENVS if e not in ENV_IDS)


#: Applied by ``gym.make`` outside its ``TimeLimit``, so ``max_episode_steps=k`` below ``max_turns`` keeps the episode
#: record (see :mod:`agentabstain_gym.wrappers.time_limit`). Gymnasium 1.x's unwrapped spec never holds the limit.
KEEP_RECORD = WrapperSpec(name="KeepRecordOnTimeLimit",
                          entry_point="agentabstain_gym.wrappers.time_limit:KeepRecordOnTimeLimit", kwargs={})


def register_envs() -> None:
    """Register every id once (importing the package calls this).

    No id registers a ``vector_entry_point`` or default ``vector_kwargs``: Gymnasium 1.4's ``make_vec`` refuses a
    vector entry point together with ``additional_wrappers`` (and then also refuses ``wrappers=``), and registered
    ``vector_kwargs`` override the caller's and reach ``SyncVectorEnv``, which has no ``shared_memory``. So Text ids
    need ``vector_kwargs={"shared_memory": False}`` in ``gym.make_vec(..., vectorization_mode="async")``;
    :func:`agentabstain_gym.rl.vector.make_vector_env` sets it by itself.
    """
    for env_id, (entry_point, kwargs) in _ENVS.items():
        if env_id not in gym.registry:
            family = family_id(env_id)
            gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs), additional_wrappers=(KEEP_RECORD,),
                         max_episode_steps=FAMILY_MAX_TURNS[family],
                         nondeterministic=family in NONDETERMINISTIC_FAMILIES)
