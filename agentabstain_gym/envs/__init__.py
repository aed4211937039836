"""One sub-package per environment family."""
