"""Custom tool functions: real logic that the generic operations cannot express (free/busy, routing, ...).

A sandbox spec names one with ``custom: <name>``; the function is registered here with :func:`custom_tool`. Every
module in this package is imported on first use, so adding ``custom/<sandbox>.py`` is all an author does. A custom
function is ``fn(ctx, args, config) -> result``: it reads ``ctx.state``, writes only through ``ctx.state.put`` /
``remove`` (commit tools only; the engine undoes writes by any other kind), raises
:class:`~agentabstain_gym.envs.tools.errors.ToolError` for failures, and returns JSON values in a fixed order.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

CustomFn = Callable[[Any, dict[str, Any], dict[str, Any]], Any]
_REGISTRY: dict[str, CustomFn] = {}
_loaded = False


def custom_tool(name: str) -> Callable[[CustomFn], CustomFn]:
    """Register ``fn`` under ``name`` (conventionally ``<sandbox_module>.<tool>``)."""

    def register(fn: CustomFn) -> CustomFn:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"custom tool {name!r} is registered twice")
        _REGISTRY[name] = fn
        return fn

    return register


def custom_functions() -> dict[str, CustomFn]:
    """Every registered custom function (importing this package's modules the first time)."""
    global _loaded
    if not _loaded:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True
    return _REGISTRY
