"""AbstainWebShop-v1: a WebShop-style store generated from a seed, its 1,000 abstention tasks, solver and oracle."""
