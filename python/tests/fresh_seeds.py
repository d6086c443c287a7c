"""The seeds of the tests' random inputs: fresh in every run, so that each
run checks inputs no run checked before, and named on stderr so that a
failing run can be repeated: SCATTERPTX_TEST_SEED=<base> runs it again."""

import os
import random
import sys

BASE = int(os.environ.get("SCATTERPTX_TEST_SEED") or random.SystemRandom().randrange(2**32))
print(f"random inputs from SCATTERPTX_TEST_SEED={BASE}", file=sys.stderr)


def seed(offset=0):
    """The run's seed for a test's `offset`: equal offsets give equal inputs
    within a run, different ones different inputs."""
    return (BASE + offset) % 2**63
