"""What every family shares: tasks, the action grammar, the base env, episode records, metrics."""

from agentabstain_gym.core.actions import ABSTAIN, abstain, parse_action, tool_call
from agentabstain_gym.core.base_env import AbstainEnv, StepResult
from agentabstain_gym.core.record import EpisodeRecord, append_records, iter_records, read_records
from agentabstain_gym.core.task import Task

__all__ = [
    "ABSTAIN", "AbstainEnv", "EpisodeRecord", "StepResult", "Task", "abstain", "append_records", "iter_records",
    "parse_action", "read_records", "tool_call",
]
