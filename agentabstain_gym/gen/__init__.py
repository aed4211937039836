"""AbstainGen: new tool sandboxes and pairs proposed by an LLM actor, admitted only through validation gates.

``abstain-gym gen sandbox`` asks an actor model for a sandbox as data (the engine's YAML format, never code) and act
tasks for it; ``abstain-gym gen pairs`` asks it for T+ tasks with a delta for a scenario. Every proposal goes
through deterministic gates (the spec validator, a schema check, replay of gold paths, the delta and danger-witness
checks of the pair validator) and then a critic model that tries to falsify it; a rejected proposal is asked for
again with the gate's messages, within a retry budget. Every reply and verdict goes to a JSONL audit log, from
which ``--replay`` regenerates the same files without a server.
"""
