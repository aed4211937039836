"""``abstain-gym mcp``: one episode at a time as MCP tools, so any MCP-capable harness is scored like ``eval``.

A harness (Claude Agent SDK, OpenAI Agents SDK, Codex, ...) connects over stdio or streamable HTTP and sees the
family's actions as tools: for a tool sandbox the task's own tools plus ``respond`` and ``abstain``; for web, QA and
terminal the schemas the LLM agent uses (``data/llm/tools.json``), turned into env actions by the same
:class:`~agentabstain_gym.agents.llm.Tool` code. ``reset`` (or the ``task`` prompt) hands out the task; each other
tool call is one ``env.step``. Decisions worth knowing:

* **Tasks**: the first task is chosen at launch (``--task-id``, ``--index``, else the first task of the split in
  the seeded order that ``--out`` does not yet hold for this agent), so ``tools/list`` is right from the start and
  a harness that starts one server per task walks through the split. Seeds are ``eval``'s per-episode seeds.
* **Records**: the end-of-episode ``info["abstention"]``, with ``agent`` set to ``--agent-name``, is appended to
  ``--out`` under a short ``flock`` (several servers may share a file; ``eval`` holding it blocks them). The
  sidecar manifest is the one ``eval`` would write for this env, agent, split and seed over the whole split, so
  ``eval`` never resumes into it by mistake and a different run is refused at launch.
* **Honesty**: nothing before the end says whether the task should be abstained on; the end says only that the
  episode is over. ``reset`` refuses while an episode that the agent has seen (or whose own tools it listed) is
  running, so tasks cannot be skipped, and refuses a task already recorded, so none is played twice; a seen episode
  left unfinished when the session closes is recorded as an agent error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

TRANSPORTS = ("stdio", "http")
RESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task_id": {"type": "string", "description": "A task id (optional; default: the next task)."}},
    "required": [],
}
_ENDED = "The episode is over. Call reset to start the next task."
_LOCK_WAIT = 10.0  # seconds a record waits for the run file's lock (another server appending, or an `eval` run)


class SessionError(Exception):
    """A launch option that cannot be used: one line for the user."""


class Session:
    """The episode state behind the MCP handlers: synchronous, one env, one episode at a time, thread-safe."""

    def __init__(self, env_id: str, *, split: str = "test", seed: int = 0, agent: str = "mcp",
                 out: str | None = None, task_id: str | None = None, index: int | None = None,
                 env_kwargs: dict[str, Any] | None = None, harness: str = "mcp") -> None:
        import gymnasium as gym
        import numpy as np

        from agentabstain_gym.agents.llm import Tool, family_table
        from agentabstain_gym.core.task import SPLITS
        from agentabstain_gym.runner import check_env_id, episode_seed

        try:
            check_env_id(env_id)
        except KeyError as exc:
            raise SessionError(str(exc.args[0])) from None
        if split not in SPLITS:
            raise SessionError(f"unknown split {split!r}; valid splits: {', '.join(SPLITS)}")
        self.env_id, self.split, self.seed, self.agent, self.out = env_id, split, seed, agent, out
        self._lock = threading.Lock()
        try:
            self.env_kwargs = dict(env_kwargs or {})
            self.harness = harness
            self.env = gym.make(env_id, **self.env_kwargs)
            tasks = self.env.unwrapped.tasks(split=split)
        except Exception as exc:  # noqa: BLE001 - e.g. no terminal sandbox here: one line, not a traceback
            raise SessionError(f"cannot start {env_id}: {type(exc).__name__}: {exc}") from None
        self.family: str = self.env.unwrapped.family
        self.max_turns: int = self.env.unwrapped.max_turns
        table = family_table(self.family)
        self.guide: str = table["guide"]
        self.builtin = [Tool(t["name"], t["description"], t["parameters"], t["action"]) for t in table["tools"]]
        ids = [t.task_id for t in tasks]
        self.order = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]
        self._seed_of = {tid: episode_seed(seed, env_id, tid) for tid in ids}
        self.done_ids: set[str] = set()  # tasks recorded in --out for this agent, or played in this session
        self.pending: list[dict[str, Any]] = []  # records not yet written (the run file was busy)
        if out is not None:
            self._adopt_run_file()
        self.tools: list[Any] = list(self.builtin)
        self.task_id: str | None = None
        self.info: dict[str, Any] = {}
        self.observation = ""
        self.last_record: dict[str, Any] | None = None  # the record of the episode that ended last
        self.running = self.seen = False
        self.peeked = False  # the client listed this task's own tools (a tool sandbox's): it has looked at the task
        if index is not None and index >= len(ids):
            raise SessionError(f"--index {index} is out of range: split {split} of {env_id} has {len(ids)} tasks")
        first = task_id if task_id is not None else (self.order[index] if index is not None else None)
        problem = self._start(first)
        if problem is not None and first is not None:
            raise SessionError(problem)

    # ----- run file ---------------------------------------------------------------------------------------------------
    def _adopt_run_file(self) -> None:
        """Check ``--out`` belongs to this run (writing the manifest ``eval`` would) and read what it holds."""
        from agentabstain_gym.core.record import iter_records
        from agentabstain_gym.runfile import RunFileError, adopt, build_manifest, data_fingerprint, locked

        assert self.out is not None
        tasks = self.env.unwrapped.tasks(split=self.split)
        manifest = build_manifest(env_ids=[self.env_id], agents=[self.agent], split=self.split, seed=self.seed,
                                  episodes=None, env_kwargs=self.env_kwargs, fingerprints={self.env_id: data_fingerprint(tasks)})
        planned = {(self.env_id, self.agent, tid, s) for tid, s in self._seed_of.items()}
        try:
            with locked(self.out) as handle:
                adopt(self.out, handle, manifest, planned)
        except RunFileError as exc:
            raise SessionError(str(exc).replace("--force-new", "delete it")) from None
        for rec in iter_records(self.out, warn=False):
            if (rec.get("env_id"), rec.get("agent"), rec.get("seed")) == (
                    self.env_id, self.agent, self._seed_of.get(str(rec.get("task_id")))):
                self.done_ids.add(str(rec["task_id"]))

    def _write(self, record: dict[str, Any]) -> str:
        """Append ``record`` (and any earlier one left pending); a note for the agent's harness if it failed."""
        self.pending.append(record)
        if self.out is None:
            self.pending.clear()
            return ""
        from agentabstain_gym.core.record import append_records
        from agentabstain_gym.runfile import RunFileError, locked

        deadline = time.monotonic() + _LOCK_WAIT
        while True:
            try:
                with locked(self.out):
                    append_records(self.out, self.pending)
                self.pending.clear()
                return ""
            except RunFileError as exc:
                if "in use" not in str(exc) or time.monotonic() > deadline:
                    print(f"abstain-gym mcp: record not written yet: {exc}", file=sys.stderr)
                    return f"\n(The server could not write the episode record yet: {exc}.)"
                time.sleep(0.05)
            except OSError as exc:
                print(f"abstain-gym mcp: record not written yet: {exc}", file=sys.stderr)
                return f"\n(The server could not write the episode record yet: {exc.strerror or exc}.)"

    def _finish(self, record: dict[str, Any]) -> str:
        record = dict(record)
        self.last_record = record
        record["agent"] = self.agent
        record["extras"] = {**(record.get("extras") or {}), "harness": self.harness}
        self.running = False
        assert self.task_id is not None
        self.done_ids.add(self.task_id)
        return self._write(record)

    # ----- episodes ---------------------------------------------------------------------------------------------------
    def _start(self, task_id: str | None) -> str | None:
        """Reset the env on ``task_id`` (default: the next task not done); a message when that is impossible."""
        if task_id is None:
            task_id = next((t for t in self.order if t not in self.done_ids), None)
            if task_id is None:
                return (f"Every task of split {self.split} of {self.env_id} is recorded for agent {self.agent}"
                        + (f" in {self.out}." if self.out else "."))
        elif task_id not in self._seed_of:
            return f"Unknown task id {task_id!r} for {self.env_id}, split {self.split}."
        elif task_id in self.done_ids:
            # a second episode of a task would be a second record of it (a retry after seeing how the first ended)
            return (f"Task {task_id} is already recorded for agent {self.agent}"
                    + (f" in {self.out}" if self.out else " in this session") + "; each task is played once.")
        from agentabstain_gym.agents.llm import Tool

        try:
            self.observation, self.info = self.env.reset(seed=self._seed_of[task_id], options={"task_id": task_id})
        except Exception as exc:  # noqa: BLE001 - the suite's failure: recorded as an env error, as `eval` does
            error = f"{type(exc).__name__}: {exc}"
            self.task_id = task_id
            note = self._finish(self.env.unwrapped.failure_record(error, kind="env", task_id=task_id,
                                                                   seed=self._seed_of[task_id]))
            self._rebuild()
            return (f"The environment failed to start task {task_id} ({error}); it is recorded as an environment "
                    f"error. Call reset for the next task.{note}")
        self.task_id, self.running, self.seen, self.peeked = task_id, True, False, False
        self.max_turns = int(self.info.get("max_turns", self.max_turns))  # an outer step limit may be shorter
        names = {t.name for t in self.builtin}
        own = []
        for item in self.info.get("tools") or []:
            fn = item.get("function", item)
            if fn["name"] not in names:
                own.append(Tool(fn["name"], str(fn.get("description", "")),
                                fn.get("parameters") or {"type": "object", "properties": {}}, None))
        self.tools = own + self.builtin
        return None

    def _rebuild(self) -> None:
        """A fresh env after an env error (as ``eval`` does): the old one may be half-way through a step."""
        import gymnasium as gym

        with contextlib.suppress(Exception):
            self.env.close()
        self.env = gym.make(self.env_id, **self.env_kwargs)

    def _text(self, observation: str, *, first: bool = False) -> str:
        """What the agent reads: the observation, the instruction on the first turn, a web page's clickables."""
        text = observation
        instruction = str(self.info.get("instruction") or "")
        if first:
            if instruction and instruction not in observation:
                text = f"Instruction: {instruction}\n\n{observation}"
            text = (f"Task {self.task_id} ({self.max_turns} turns: each call of another tool is one turn).\n\n"
                    + text)
        available = self.info.get("available_actions")
        if isinstance(available, dict) and available.get("clickables"):
            text += "\n\nClickable: " + ", ".join(map(str, available["clickables"]))
        return text

    def _state(self, *, ended: bool = False) -> dict[str, Any]:
        """What an agent of the family may know besides the text (never a label)."""
        state: dict[str, Any] = {"task_id": self.task_id, "turn": self.info.get("turn", 0),
                                 "max_turns": self.max_turns, "episode_ended": ended}
        if not ended and isinstance(self.info.get("available_actions"), dict):
            state["available_actions"] = self.info["available_actions"]
        return state

    def reset(self, task_id: str | None = None) -> tuple[str, dict[str, Any] | None, bool]:
        """The ``reset`` tool: (text, structured state, is_error)."""
        with self._lock:
            if task_id is not None and not isinstance(task_id, str):
                return "reset: task_id must be a string.", None, True
            if self.running:
                fresh = self.info.get("turn", 0) == 0
                if fresh and task_id in (None, self.task_id):
                    self.seen = True
                    return self._text(self.observation, first=True), self._state(), False
                if self.seen or self.peeked or not fresh:
                    return (f"Task {self.task_id} is still running (turn {self.info.get('turn', 0)} of "
                            f"{self.max_turns}): end it with abstain or the action that completes it first.",
                            None, True)
            problem = self._start(task_id)
            if problem is not None:
                return problem, None, True
            self.seen = True
            return self._text(self.observation, first=True), self._state(), False

    def listed(self) -> list[Any]:
        """The tools ``tools/list`` shows. A tool sandbox's own tools are part of its task (one missing is what an
        insufficient-tools task looks like), so listing them counts as looking at the task: ``reset`` may then not
        switch to another one (skipping a task after a look). Nothing is recorded for it if the session ends."""
        with self._lock:
            if self.running and len(self.tools) > len(self.builtin):
                self.peeked = True
            return list(self.tools)

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None, bool]:
        """A family tool: one ``env.step``; (observation text, structured state, is_error)."""
        with self._lock:
            if not self.running:
                return (_ENDED if self.task_id is not None else "No task is running: call reset."), None, True
            tool = next((t for t in self.tools if t.name == name), None)
            if tool is None:
                return (f"Unknown tool {name!r}; this task's tools: {', '.join(t.name for t in self.tools)}, "
                        "reset."), None, True
            if arguments is not None and not isinstance(arguments, dict):
                return f"{name}: arguments must be a JSON object.", None, True
            args = arguments or {}
            try:
                action = tool.to_action(args)
            except TypeError:  # e.g. an argument name that is not an identifier
                action = None
            # as in the LLM agent, a call it cannot turn into an action goes to the env as it is and costs the turn
            malformed = action is None
            if action is None:
                action = f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
            self.seen = True
            try:
                observation, _reward, terminated, truncated, self.info = self.env.step(action)
                self.observation = observation
            except Exception as exc:  # noqa: BLE001 - the suite's failure, recorded as an env error
                note = self._finish(self.env.unwrapped.abort(f"{type(exc).__name__}: {exc}", kind="env"))
                self._rebuild()
                return (f"The environment failed ({type(exc).__name__}); the episode is recorded as an "
                        f"environment error. {_ENDED}{note}"), self._state(ended=True), True
            if terminated or truncated:
                note = self._finish(self.info["abstention"])
                return f"{observation}\n\n{_ENDED}{note}", self._state(ended=True), malformed
            return self._text(observation), self._state(), malformed

    def close(self) -> None:
        """Record a seen episode the session left unfinished (an agent error), write what is pending, close."""
        with self._lock:
            if self.running and self.seen:
                turn = self.info.get("turn", 0)
                self._finish(self.env.unwrapped.abort(
                    f"the MCP session ended before the episode did (turn {turn} of {self.max_turns})", kind="agent"))
            elif self.pending:  # written with it
                self._write(self.pending.pop())
            self.running = False
            self.env.close()

    def instructions(self) -> str:
        """The server's instructions (harnesses put them in the system prompt)."""
        ending = ", ".join(t.name for t in self.builtin if "ends the episode" in t.description) or "abstain"
        return (f"{self.guide}\n\nThis server runs {self.env_id}. Call reset first: it returns your task (the "
                f"instruction and what you see). Every other tool call is one turn (at most {self.max_turns}); "
                f"the episode ends with {ending}" + (" or buying a product" if self.family == "web" else "")
                + ", or when the turns are spent. Then call reset for the next task.")


# ----- MCP binding ------------------------------------------------------------------------------------------------------
def build_server(session: Session) -> Any:
    """The low-level MCP server whose handlers drive ``session`` (the env runs on a worker thread)."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server

    def result(text: str, state: dict[str, Any] | None, is_error: bool) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=state,
                                    is_error=is_error)

    async def list_tools(ctx: Any, params: Any) -> Any:
        tools = [types.Tool(name="reset", input_schema=RESET_SCHEMA,
                            description="Start the next task (or the task with this id) and return its instruction "
                                        "and first observation. Not a turn.")]
        tools += [types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                  for t in await anyio.to_thread.run_sync(session.listed)]  # the lock may wait for a step
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        try:
            if params.name == "reset":
                text, state, err = await anyio.to_thread.run_sync(
                    lambda: session.reset((params.arguments or {}).get("task_id")))
                if session.family == "tools":  # a task's tools: notified on every reset, so the notice says nothing
                    with contextlib.suppress(Exception):  # a client without notifications lists tools again
                        await ctx.session.send_tool_list_changed()
                return result(text, state, err)
            text, state, err = await anyio.to_thread.run_sync(
                lambda: session.call(params.name, params.arguments))
            return result(text, state, err)
        except Exception as exc:  # noqa: BLE001 - never a traceback to the client, never a dead server
            return result(f"{params.name}: failed: {type(exc).__name__}: {exc}", None, True)

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name="task", description="The current task as a user message (starts it, as the reset tool does)")])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != "task":
            raise ValueError(f"unknown prompt {params.name!r}; the prompt is 'task'")
        text, _state, err = await anyio.to_thread.run_sync(session.reset)
        body = text if err else f"{text}\n\nUse the tools to act; one tool call is one turn."
        return types.GetPromptResult(description=f"{session.env_id} task", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=body))])

    import agentabstain_gym

    return Server("abstain-gym", version=agentabstain_gym.__version__, instructions=session.instructions(),
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                  on_get_prompt=get_prompt)


def _serve(server: Any, args: argparse.Namespace) -> None:
    if args.transport == "stdio":
        import anyio
        from mcp.server.lowlevel.server import NotificationOptions

        from agentabstain_gym.mcp_wire import sane_stdio

        async def main() -> None:
            async with sane_stdio() as (read, write):  # every request answered, even one the SDK cannot parse
                options = server.create_initialization_options(NotificationOptions(tools_changed=True))
                await server.run(read, write, options)

        anyio.run(main)
    else:
        import uvicorn

        print(f"abstain-gym mcp: serving {args.env} on http://{args.host}:{args.port}/mcp", file=sys.stderr)
        uvicorn.run(server.streamable_http_app(host=args.host), host=args.host, port=args.port, log_level="warning")


def _port(text: str) -> int:
    from agentabstain_gym.cli import nonnegative_int

    value = nonnegative_int(text)
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"must be a port number (1-65535), not {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``abstain-gym mcp``."""
    from agentabstain_gym.cli import nonnegative_int

    parser.add_argument("env", help="the env id to serve, e.g. AbstainQA-v0 or AbstainTools/RetailOrders-v0")
    parser.add_argument("--task-id", default=None, help="the first task (default: the next task of the split)")
    parser.add_argument("--index", type=nonnegative_int, default=None,
                        help="the first task is the N-th (from 0) of the split in the seeded order")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="task order and episode seeds (as eval)")
    parser.add_argument("--split", default="test", help="train | val | test (default test)")
    parser.add_argument("--out", default=None, help="run file: each finished episode's record is appended")
    parser.add_argument("--agent-name", default="mcp", help="the agent name written into records (default mcp)")
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="stdio (default) or streamable http")
    parser.add_argument("--host", default="127.0.0.1", help="with --transport http (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8765, help="with --transport http (default 8765)")


def run(args: argparse.Namespace) -> int:
    """Serve until the client (stdio) or a signal (http) ends it; the last episode is recorded on the way out.

    Usage errors are printed here as one line (exit 2) rather than raised: under ``python -m
    agentabstain_gym.cli`` the CLI's own exception class is another object than the one this module could import.
    """
    try:
        session = _session(args)
    except SessionError as exc:
        print(f"abstain-gym: error: {exc}", file=sys.stderr)
        return 2

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if args.transport == "stdio":
        signal.signal(signal.SIGTERM, stop)  # a harness ending the server: record the unfinished episode first
    interrupted = False
    try:
        _serve(build_server(session), args)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        session.close()
    if interrupted and args.transport == "stdio":
        # the transport's reader thread is still blocked on stdin, which would keep the process alive; the
        # record is fsynced and the env closed, so leave now
        sys.stderr.flush()
        os._exit(0)
    return 0


def _session(args: argparse.Namespace) -> Session:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise SessionError("abstain-gym mcp needs the MCP SDK: pip install 'mcp>=2.3' (the [mcp] extra)") from None
    if args.task_id is not None and args.index is not None:
        raise SessionError("give --task-id or --index, not both")
    if not args.agent_name.strip():
        raise SessionError("--agent-name must not be empty")
    if args.out is not None and Path(args.out).is_dir():
        raise SessionError(f"--out {args.out} is a directory; give a file name")
    return Session(args.env, split=args.split, seed=args.seed, agent=args.agent_name, out=args.out,
                   task_id=args.task_id, index=args.index)
