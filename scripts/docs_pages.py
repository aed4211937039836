"""MkDocs hook: the pages that are generated from the package rather than written by hand.

* ``envs/<name>.md``: one page per class a registered id points to, from the class docstring (rendered by
  mkdocstrings), headed by the table of the ids that use it with their registered arguments and horizon. A new family
  gets its page as soon as it is registered.
* ``guides/terminal-tasks.md`` and ``guides/tool-sandboxes.md``: the authoring guides shipped beside the data.
* ``api/<module>.md``: the API reference, one page per public module.

``mkdocs.yml`` names this file under ``hooks``; the navigation of the generated pages is added in :func:`on_config`.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "agentabstain_gym"
#: Authoring guides kept beside their data, shown in the site: source file -> page.
SHIPPED_GUIDES = {
    "agentabstain_gym/data/terminal/README.md": ("guides/terminal-tasks.md", "Writing terminal tasks"),
    "agentabstain_gym/data/tools/AUTHORING.md": ("guides/tool-sandboxes.md", "Writing tool sandboxes"),
}
#: Modules left out of the API reference: entry points that only parse arguments.
SKIPPED_MODULES = ("agentabstain_gym.__main__",)


def _env_classes() -> dict[str, list[str]]:
    """Entry point ("module:Class") -> the registered ids that use it, in registration order."""
    import gymnasium as gym

    import agentabstain_gym

    classes: dict[str, list[str]] = {}
    for env_id in agentabstain_gym.ENV_IDS + agentabstain_gym.SB3_ENV_IDS:
        classes.setdefault(str(gym.spec(env_id).entry_point), []).append(env_id)
    return classes


def _env_slug(entry_point: str) -> str:
    module, cls = entry_point.split(":")
    parts = module.split(".")
    if parts[1] == "envs":
        return parts[2]
    return {"StoppingPolicyEnv": "stopping-policy", "DiscreteActionEnv": "discrete-actions"}.get(cls, cls.lower())


def _env_page(entry_point: str, ids: list[str]) -> str:
    import gymnasium as gym

    module, cls = entry_point.split(":")
    rows = []
    for env_id in ids:
        spec = gym.spec(env_id)
        kwargs = ", ".join(f"`{k}={v!r}`" for k, v in spec.kwargs.items()) or "-"
        rows.append(f"| `{env_id}` | {kwargs} | {spec.max_episode_steps} | {'yes' if spec.nondeterministic else 'no'} |")
    title = ids[0] if len(ids) == 1 else f"{cls}"
    return "\n".join([
        f"# {title}", "",
        f"`gym.make(id)` builds `{module}.{cls}`. Its fingerprint is printed by `abstain-gym list` (see the design "
        "document, section 9).", "",
        "| id | registered arguments | max_episode_steps | nondeterministic |", "| --- | --- | --- | --- |", *rows, "",
        f"::: {module}.{cls}",
        "    options:",
        "      show_root_heading: false",
        "      members: false",
        "      heading_level: 2",
        "",
    ])


def _modules() -> list[str]:
    """Every public module of the package (no ``_private`` part), sorted; data folders hold no modules."""
    import agentabstain_gym

    names = [PACKAGE]
    for info in pkgutil.walk_packages(agentabstain_gym.__path__, prefix=PACKAGE + "."):
        if not any(part.startswith("_") for part in info.name.split(".")) and info.name not in SKIPPED_MODULES:
            names.append(info.name)
    return sorted(names)


def _api_page(module: str) -> str:
    return f"# `{module}`\n\n::: {module}\n    options:\n      show_root_heading: false\n      heading_level: 2\n"


def on_config(config: Any) -> Any:
    """Add the generated pages to the navigation (the hand-written part stays in ``mkdocs.yml``)."""
    envs = [{ids[0] if len(ids) == 1 else entry.split(":")[1]: f"envs/{_env_slug(entry)}.md"}
            for entry, ids in _env_classes().items()]
    guides = [{title: page} for page, title in SHIPPED_GUIDES.values()]
    api = [{module: f"api/{module}.md"} for module in _modules()]
    nav = list(config["nav"] or [])
    for item in nav:
        if isinstance(item, dict) and "Family guides" in item:
            item["Family guides"] = list(item["Family guides"]) + guides
    config["nav"] = nav + [{"Environments": envs}, {"API reference": api}]
    return config


def on_files(files: Files, config: Any) -> Files:
    """Generate the environment, guide and API pages in memory (nothing is written into ``docs/``)."""
    for entry, ids in _env_classes().items():
        files.append(File.generated(config, f"envs/{_env_slug(entry)}.md", content=_env_page(entry, ids)))
    for source, (page, _title) in SHIPPED_GUIDES.items():
        files.append(File.generated(config, page, content=(ROOT / source).read_text(encoding="utf-8")))
    for module in _modules():
        files.append(File.generated(config, f"api/{module}.md", content=_api_page(module)))
    return files
