"""Path Emanator benchmarks: how faithfully a policy lives each Path, task by task, with confidence intervals."""
