"""Terminal-Bench task folders, run natively: both layouts, their Dockerfiles, tests and overlays."""
