"""Train a stopping policy with PPO and compare it with the baselines on held-out tasks.

The family's heuristic solver (abstention switched off) proposes every action; PPO learns when to send ABSTAIN
instead, from features an agent can see (``AbstainQA-Stop-v0``). Training uses the train split, the learning curve
the validation split, and the table the test split, for each seed::

    pip install torch==2.13.0 && pip install -e ".[rl,plot]"   # from a clone of the repository
    python examples/train_stopping_policy.py --env AbstainQA-v0 --seeds 0 1 2 --timesteps 30000

It prints the table (AbsRec@1, AbsRec@5, SPL, over-abstention, paired accuracy, success rate) against
never-abstain, always-abstain and rules, saves ``runs/rl/AbstainQA-Stop-v0-ppo-seed<k>.zip`` (+ ``.json``) and the
curve ``runs/rl/AbstainQA-Stop-v0-learning-curve.png``. A saved policy is an agent of the runner::

    abstain-gym eval AbstainQA-v0 --agent sb3:runs/rl/AbstainQA-Stop-v0-ppo-seed0.zip

The same loop in your own code: ``from agentabstain_gym.rl.train import TrainConfig, run``.
"""

from __future__ import annotations

import sys

from agentabstain_gym.rl.train import main

if __name__ == "__main__":
    sys.exit(main())
