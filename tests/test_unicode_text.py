"""Non-ASCII text reaches agents as it is, in every family; only unprintable characters are removed.

Observations used to be squeezed into printable ASCII, so ``café ✓`` reached the agent as ``caf? ?``.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from conftest import require_backend
from gymnasium.utils.env_checker import check_env

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.core.spaces import PrintableText, printable, text_space

TEXT = "Zürich café ✓ 日本語 naïve €5"


@pytest.mark.parametrize(("env_id", "options", "action"), [
    ("AbstainQA-v0", None, f"search[{TEXT}]"),
    ("AbstainWebShop-v1", {"instruction": f"I want a mug printed with {TEXT}", "should_abstain": False}, "search[mug]"),
    ("AbstainTools-v0", None, f"{TEXT} is no action"),
])
def test_non_ascii_text_reaches_the_agent_intact(env_id: str, options: dict | None, action: str) -> None:
    env = gym.make(env_id)
    first, _ = env.reset(seed=0, options=options)
    observation, *_ = env.step(action)
    assert TEXT in first + observation
    assert env.observation_space.contains(first) and env.observation_space.contains(observation)


def test_terminal_output_keeps_unicode_and_drops_control_characters() -> None:
    require_backend("bwrap")
    env = gym.make("AbstainTerminal-v1", backend="bwrap")
    try:
        env.reset(seed=0)
        observation, *_ = env.step(f"echo '{TEXT}'; printf 'a\\000b\\033[31mred\\r\\n'; "
                                   "python3 -c \"print('na\\u00efve \\u2713')\"")
    finally:
        env.close()
    assert TEXT in observation and "naïve ✓" in observation
    assert "a?b?[31mred\n" in observation  # NUL and ESC shown as ?, CR LF as a newline
    assert env.observation_space.contains(observation)


def test_printable_removes_what_cannot_be_shown_or_written() -> None:
    assert printable("a\x00b\x1b") == "a?b?"
    assert printable("\ud800x") == "?x"  # a lone surrogate cannot be written as UTF-8
    assert printable("\u202eevil\u200b") == "evil"  # bidi overrides and zero-width characters are invisible: dropped
    assert printable("a\u00a0b\u2028c\r\nd\te") == "a b\nc\nd\te"
    assert printable(TEXT) == TEXT
    cut = printable("é" * 100, max_chars=60)
    assert len(cut) == 60 and cut.startswith("é") and "more characters" in cut


def test_space_accepts_printable_unicode_only() -> None:
    space = text_space(50)
    assert space.contains(TEXT) and space.contains("line one\n\tline two")
    assert not space.contains("a\x00") and not space.contains("\ud800") and not space.contains("x" * 51)
    assert not space.contains(b"bytes")
    assert all(space.contains(space.sample()) for _ in range(20))
    assert space == PrintableText(50) and space != PrintableText(51)


def test_check_env_passes_with_unicode_spaces() -> None:
    env = gym.make("AbstainQA-v0")
    check_env(env.unwrapped, skip_render_check=True)
