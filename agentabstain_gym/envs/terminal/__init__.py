"""AbstainTerminal-v0: real shell tasks in a sandbox, with abstention variants."""
