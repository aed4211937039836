"""AbstainTools: executable tool sandboxes as data, a generic engine, delta operators and replay-validated pairs.

Public helpers (imported lazily, so that registering the ids stays a directory listing):
``tool_schemas(sandbox)``, ``tool_kinds(sandbox)``, ``sandbox_names()``, ``load_sandbox(name)``, ``AbstainToolsEnv``.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "tool_schemas": "agentabstain_gym.envs.tools.schemas",
    "tool_kinds": "agentabstain_gym.envs.tools.schemas",
    "sandbox_names": "agentabstain_gym.envs.tools.catalog",
    "load_sandbox": "agentabstain_gym.envs.tools.spec",
    "AbstainToolsEnv": "agentabstain_gym.envs.tools.env",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
