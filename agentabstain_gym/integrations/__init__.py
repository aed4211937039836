"""Integrations with evaluation and training frameworks: Inspect tasks (``inspect_tasks``) and verifiers
environments (``verifiers_env``). Each imports its framework only when used; ``episode`` holds the shared code that
turns tool calls into env steps."""
