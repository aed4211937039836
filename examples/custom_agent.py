"""Evaluate your own agent on AbstainQA-v0 and compare it with the heuristic baseline.

Run: ``python examples/custom_agent.py``. The same class works from the command line:
``abstain-gym eval AbstainQA-v0 --agent examples/custom_agent.py:SearchOnceThenDecide``.
"""

from __future__ import annotations

from typing import Any

from agentabstain_gym.core.metrics import report
from agentabstain_gym.runner import EvalConfig, evaluate


class SearchOnceThenDecide:
    """Searches the question once; answers with the first number it reads, else abstains."""

    name = "search-once"

    def reset(self) -> None:
        self.searched = False

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not self.searched:
            self.searched = True
            return f"search[{info['instruction']}]"
        numbers = [w.strip(".,") for w in observation.split() if w.strip(".,").isdigit()]
        return f"answer[{numbers[0]}]" if numbers else "abstain[the passages do not say]"


if __name__ == "__main__":
    config = EvalConfig(env_ids=["AbstainQA-v0"], agents=["examples/custom_agent.py:SearchOnceThenDecide",
                                                          "heuristic"], split="test")
    by_agent = report(evaluate(config), bootstrap=0)["by_agent"]
    for agent, m in by_agent.items():
        print(f"{agent:14s} AbsRec@1 {m['absrec@1']:.2f}  SPL {m['spl']:.2f}  over-abstention "
              f"{m['over_abstention_rate']:.2f}  success {m['success_rate']:.2f}  paired acc {m['paired_accuracy']:.2f}")
