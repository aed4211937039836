"""AbstainTerminal-v1: real shell tasks in a sandbox, with abstention variants."""
