"""The terminal sandbox is tested like a sandbox: escapes, floods, bombs, leftovers, and a parent killed with -9.

Every security test runs on bwrap and docker (and on the unshare fallback where util-linux can build it). Missing
components skip locally and fail under ABSTAIN_GYM_REQUIRE_ALL=1 (CI), so docker is tested for real there.
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import require_backend

import agentabstain_gym
from agentabstain_gym.envs.terminal.sandbox import (
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    make_sandbox,
    procs,
    resolve_backend,
)
from agentabstain_gym.envs.terminal.sandbox.base import ansi_c_lines

BACKENDS = ["bwrap", "unshare", "docker"]
HEAVY = ["bwrap", "docker"]  # the slow tests run on the two backends the issue names
PACKAGE_DIR = Path(agentabstain_gym.__file__).resolve().parent
FAST = {"command_timeout": 10, "interrupt_grace": 1.0}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return request.param


@pytest.fixture()
def box(backend: str):
    sandbox = make_sandbox(backend, limits=FAST, hidden_paths=[PACKAGE_DIR])
    sandbox.start()
    yield sandbox
    sandbox.close()


def _docker_leftovers(owner_pid: int | None = None) -> list[str]:
    """Our labelled containers owned by ``owner_pid`` (default: this process)."""
    from agentabstain_gym.envs.terminal.sandbox.docker import LABEL, OWNER_LABEL, client

    prefix = f"{socket.gethostname()}:{owner_pid or os.getpid()}:"
    c = client()
    try:
        return [x.id for x in c.containers.list(all=True, filters={"label": LABEL})
                if x.labels.get(OWNER_LABEL, "").startswith(prefix)]
    finally:
        c.close()


def _processes_with(text: str) -> list[int]:
    found = []
    for pid in procs._all_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read().replace(b"\0", b" "):
                    found.append(pid)
        except OSError:
            continue
    return found


# ----- the protocol -------------------------------------------------------------------------------------------------
def test_commands_are_sent_as_printable_ascii_whatever_they_contain() -> None:
    lines = ansi_c_lines("a'b\\c\x03\x04\n\u00e9" + "x" * 3000, "v")
    assert all(line.isascii() and line.isprintable() and len(line) < 1000 for line in lines)
    assert lines[0].startswith("v=$'") and all(line.startswith("v+=$'") for line in lines[1:])


def test_round_trip_exit_status_and_persistent_shell(box: Sandbox) -> None:
    assert box.run("echo hello").output == "hello\n"
    assert box.run("false").exit_status == 1
    assert box.run("exit_code() { return 7; }; exit_code").exit_status == 7
    box.run("cd /tmp && export GREETING=hi")
    result = box.run('pwd; echo "$GREETING"; printf "no newline"')
    assert result.output == "/tmp\nhi\nno newline" and result.exit_status == 0
    weird = box.run("printf '%s' 'quote'\"'\"' and \\\\ and \x03 and é' | od -An -c | tr -s ' '")
    assert "003" in weird.output and "'" in weird.output
    assert box.run("cat <<'EOF'\nline one\nline two\nEOF").output == "line one\nline two\n"
    assert box.run("read -r x; echo got:$x").output == "got:\n"  # stdin is /dev/null, never our terminal
    broken = box.run("search[")  # a parse error inside eval: bash then reprints a stale prompt
    assert broken.exit_status == 2 and "unexpected EOF" in broken.output and not broken.timed_out
    assert box.run("echo after").output == "after\n"


def test_output_is_capped_with_a_note(backend: str) -> None:
    with make_sandbox(backend, limits={**FAST, "output_cap": 2048}) as sandbox:
        result = sandbox.run("seq 1 100000")
        assert result.truncated and result.exit_status == 0
        assert len(result.output) < 2048 + 200
        assert result.output.startswith("1\n2\n3\n") and result.output.endswith("99999\n100000\n")
        assert "bytes cut here: output is capped at 2048 bytes" in result.output
        assert not sandbox.run("echo short").truncated


def test_timeout_interrupts_and_leaves_the_shell_usable(backend: str) -> None:
    with make_sandbox(backend, limits={"command_timeout": 1, "interrupt_grace": 1.0}) as sandbox:
        sandbox.run("cd /tmp")
        slow = sandbox.run("sleep 30")
        assert slow.timed_out and slow.exit_status == 130 and "interrupted" in slow.output
        assert sandbox.run("pwd").output == "/tmp\n"  # same shell: the directory is kept
        loop = sandbox.run("while :; do :; done")  # a loop inside the shell itself
        assert loop.timed_out and not loop.shell_restarted
        stubborn = sandbox.run("python3 -c 'import signal, time; signal.signal(2, signal.SIG_IGN); time.sleep(60)'")
        assert stubborn.timed_out and stubborn.exit_status == 137  # Ctrl-C ignored: its group got SIGKILL
        assert sandbox.run("echo ok").output == "ok\n"


def test_an_exiting_shell_is_replaced_and_files_are_kept(box: Sandbox) -> None:
    box.run("echo kept > /workspace/file")
    result = box.run("exit 4")
    assert result.shell_restarted and result.exit_status == 4 and "new shell" in result.output
    assert box.run("cat /workspace/file").output == "kept\n"



_RAW_TERMINAL = ("python3 -c \"import termios; fd = open('/dev/tty'); a = termios.tcgetattr(fd); "
                 "a[3] &= ~(termios.ICANON | termios.ECHO); a[6][termios.VMIN] = 0; a[6][termios.VTIME] = 0; "
                 "termios.tcsetattr(fd, termios.TCSANOW, a)\"")


def test_a_program_that_leaves_the_terminal_raw_does_not_kill_the_shell(box: Sandbox) -> None:
    """What vim, less or a curses program may do on the way out: raw mode with VMIN=0, which bash read as end of
    input on the next line, so the shell died and the agent lost its directory, its variables and its next command."""
    box.run("cd /tmp; KEPT=yes")
    broken = box.run(_RAW_TERMINAL + "; echo $?")
    assert broken.output == "0\n" and broken.exit_status == 0
    after = box.run("echo $KEPT; pwd")
    assert after.output == "yes\n/tmp\n" and not after.shell_restarted
    assert box.run("(exit 5)").exit_status == 5  # statuses still pass through the terminal reset

# ----- security ---------------------------------------------------------------------------------------------------
def test_writes_outside_the_workspace_fail_and_never_reach_the_host(box: Sandbox) -> None:
    home = Path(os.path.expanduser("~"))
    targets = ["/etc/agx-escape", "/usr/agx-escape", "/agx-escape", str(home / "agx-escape"),
               str(PACKAGE_DIR / "agx-escape"), str(PACKAGE_DIR / "__init__.py")]
    before = (PACKAGE_DIR / "__init__.py").read_bytes()
    for target in targets:
        box.run(f"echo pwned > {target}; touch {target}")
    box.run("mount -o remount,rw,bind /etc; mount -o remount,rw /; echo pwned > /etc/agx-escape")
    for target in targets[:-1]:
        assert not Path(target).exists(), target
    assert (PACKAGE_DIR / "__init__.py").read_bytes() == before
    assert box.run("echo fine > /workspace/ok && cat /workspace/ok").output == "fine\n"
    caps = box.run("grep CapEff /proc/self/status").output
    assert caps.split()[-1] == "0000000000000000"


def test_the_package_and_its_task_files_are_not_visible(box: Sandbox) -> None:
    listing = box.run(f"ls -A {PACKAGE_DIR} 2>&1 | head -5").output
    assert "registration.py" not in listing and "envs" not in listing
    found = box.run("find / -xdev \\( -name check.sh -o -name solution.sh -o -name task.json \\) 2>/dev/null "
                    "| head -5; ls /home /work 2>&1 | head -3")
    assert "check.sh" not in found.output and "solution.sh" not in found.output and "task.json" not in found.output


@pytest.mark.parametrize("backend", ["bwrap", "unshare"], indirect=True)
def test_hidden_paths_under_the_system_tree_are_masked(backend: str) -> None:
    hidden = Path("/usr/share/doc")
    assert any(hidden.iterdir())
    with make_sandbox(backend, limits=FAST, hidden_paths=[hidden]) as sandbox:
        assert sandbox.run(f"ls -A {hidden} | wc -l").output.strip() == "0"
        assert sandbox.run(f"touch {hidden}/x").exit_status != 0
        assert sandbox.run(f"test -d {hidden} && ls /usr/share | wc -l").output.strip() != "0"


def test_scripts_leave_no_trace_for_the_agent(box: Sandbox) -> None:
    result = box.run_script('echo "secret-$1" > /dev/null; touch made-by-script; echo done', ["label-7f3a"])
    assert result.output == "done\n" and result.exit_status == 0
    assert box.run("ls made-by-script").exit_status == 0  # cwd was /workspace
    pattern = "'label-7f3[a]'"  # matches the label, not this command's own text
    trace = box.run(f"grep -rl {pattern} /workspace /tmp /root 2>/dev/null; set | grep -c {pattern}; "
                    f"cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr '\\0' ' ' | grep -c {pattern}")
    assert trace.output.split() == ["0", "0"]


def test_no_network_but_loopback(box: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        probe = ("import socket, sys\n"
                 f"for host, port in (('1.1.1.1', 53), ('8.8.8.8', 443), ('127.0.0.1', {port})):\n"
                 "    try:\n"
                 "        socket.create_connection((host, port), timeout=2).close(); print('open', host)\n"
                 "    except OSError as e:\n"
                 "        print('blocked', host)\n")
        result = box.run(f"python3 - <<'EOF'\n{probe}EOF")
        assert result.output.split("\n")[:3] == ["blocked 1.1.1.1", "blocked 8.8.8.8", "blocked 127.0.0.1"]
        own = box.run("python3 -m http.server 18555 --bind 127.0.0.1 >/dev/null 2>&1 & sleep 0.5; "
                      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18555/")
        assert own.output.split()[-1] == "200"  # the sandbox's own loopback works (task services)
    finally:
        server.close()


def _process_count(sandbox: Sandbox) -> int:
    """How many processes the sandbox has, counted from outside."""
    if sandbox.name == "docker":
        return len(sandbox._container.top()["Processes"])
    return len(procs.descendants(sandbox._child.pid))


@pytest.mark.parametrize("backend", HEAVY, indirect=True)
def test_a_fork_bomb_is_contained(backend: str) -> None:
    limits = {"command_timeout": 2, "max_processes": 64, "interrupt_grace": 1.0}
    sandbox = make_sandbox(backend, limits=limits)
    with sandbox:
        sandbox.run("bomb() { bomb | bomb & }; bomb")
        time.sleep(1.0)
        assert _process_count(sandbox) <= 64 + 8
        assert "still here" in sandbox.run("echo still here").output  # a builtin: the shell still answers
        tree = [] if backend == "docker" else [sandbox._child.pid, *procs.descendants(sandbox._child.pid)]
    assert not any(procs.alive(pid) for pid in tree)
    if backend == "docker":
        assert _docker_leftovers() == []


@pytest.mark.parametrize("backend", HEAVY, indirect=True)
def test_an_output_flood_costs_time_not_memory(backend: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with make_sandbox(backend, limits={"command_timeout": 3, "interrupt_grace": 1.0}) as sandbox:
        result = sandbox.run("head -c 1000000000 /dev/zero | tr '\\0' y")
        assert result.truncated and len(result.output) < 16384 + 300
        assert sandbox.run("echo ok").output == "ok\n"
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 64


def test_background_processes_die_with_the_sandbox(backend: str) -> None:
    sandbox = make_sandbox(backend, limits=FAST)
    sandbox.start()
    sandbox.run("sleep 7777 & setsid nohup sleep 7778 >/dev/null 2>&1 & disown -a; sleep 0.3")
    if backend == "docker":
        assert len(_docker_leftovers()) >= 1
    else:
        assert _processes_with("sleep 7777") and _processes_with("sleep 7778")
    sandbox.close()
    sandbox.close()  # idempotent
    if backend == "docker":
        assert _docker_leftovers() == []
    else:
        assert _processes_with("sleep 7777") == [] and _processes_with("sleep 7778") == []
    with pytest.raises(SandboxError):
        sandbox.run("echo closed")


def test_a_forgotten_sandbox_is_stopped_when_collected() -> None:
    require_backend("bwrap")
    sandbox = make_sandbox("bwrap", limits=FAST).start()
    tree = [sandbox._child.pid, *procs.descendants(sandbox._child.pid)]
    del sandbox
    gc.collect()
    assert not any(procs.alive(pid) for pid in tree)


_CHILD = textwrap.dedent("""
    import sys, time
    from agentabstain_gym.envs.terminal.sandbox import make_sandbox
    sandbox = make_sandbox(sys.argv[1])
    sandbox.start()
    sandbox.run("sleep 8888 & setsid nohup sleep 8889 >/dev/null 2>&1 & sleep 0.3")
    print("ready", flush=True)
    time.sleep(120)
""")


def _mounts() -> int:
    with open("/proc/self/mountinfo") as handle:
        return len(handle.readlines())


def _temp_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").iterdir() if p.name.startswith("abstain-gym")}


def test_kill_9_of_the_parent_leaves_nothing_behind(backend: str) -> None:
    mounts, temps = _mounts(), _temp_dirs()
    child = subprocess.Popen([sys.executable, "-c", _CHILD, backend], stdout=subprocess.PIPE, text=True)
    ready = threading.Timer(60, child.kill)
    ready.start()
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    finally:
        ready.cancel()
    if backend == "docker":
        assert len(_docker_leftovers(child.pid)) == 1
    else:
        assert _processes_with("sleep 8888") and _processes_with("sleep 8889")
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = _docker_leftovers(child.pid) if backend == "docker" else _processes_with("sleep 888")
        if not left:
            break
        time.sleep(0.2)
    assert left == []
    assert _mounts() == mounts and _temp_dirs() <= temps


def test_docker_sweep_removes_containers_of_dead_owners() -> None:
    require_backend("docker")
    from agentabstain_gym.envs.terminal.image import image_name
    from agentabstain_gym.envs.terminal.sandbox.docker import LABEL, OWNER_LABEL, client, sweep

    c = client()
    try:
        dead = c.containers.create(image_name(), ["sleep", "600"], labels={LABEL: "1", OWNER_LABEL:
                                   f"{socket.gethostname()}:999999999:0"}, network_mode="none")
        alive = c.containers.create(image_name(), ["sleep", "600"], labels={LABEL: "1", OWNER_LABEL:
                                    "another-host:1:0"}, network_mode="none")
        try:
            removed = sweep(c)
            assert dead.id in removed and alive.id not in removed
        finally:
            alive.remove(force=True)
    finally:
        c.close()


# ----- choosing a backend -------------------------------------------------------------------------------------------
def test_local_needs_an_explicit_unsafe_flag() -> None:
    with pytest.raises(SandboxUnavailable, match="unsafe=True"):
        resolve_backend("local")
    with pytest.raises(ValueError, match="valid backends"):
        resolve_backend("chroot")
    with make_sandbox("local", unsafe=True, limits=FAST) as sandbox:
        assert sandbox.run("echo local").output == "local\n"
        workspace = Path(sandbox.workspace_path)
        assert workspace.is_dir()
    assert not workspace.exists()


def test_no_backend_means_a_message_that_says_how_to_install_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentabstain_gym.envs.terminal.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "why_unavailable", lambda name: f"{name} is missing")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap") as caught:
        resolve_backend(None)
    assert "build-image" in str(caught.value) and "docker" in str(caught.value)
