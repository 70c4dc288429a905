"""Suite-wide reporting: numba's compilation time (compiling kernels, or loading them from numba's
on-disk cache), printed at the end of every run, so a cold-cache CI run reports what compiling
the kernels costs (lwsim/figures/timing.py). Runs in spawned worker processes are not counted.
Also: every test's pyplot figures are closed after it."""
import os
import sys

import pytest

from lwsim.figures.timing import compile_clock

# main([...]) in a test runs in this process on the native platform (as --native) rather than in a
# pinned child whose output capsys cannot see; tests of the pinned mode start their own processes
# with LWSIM_PLATFORM removed (tests/test_platform.py).
os.environ.setdefault("LWSIM_PLATFORM", "native")

_CLOCK = compile_clock()          # installed before any test compiles anything


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"numba compilation in this process: {_CLOCK.cpu:.1f} s CPU, {_CLOCK.total:.1f} s wall, "
        f"{_CLOCK.count} compilations or cache loads")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the pyplot figures a test leaves open (drawing tests share a file since the relayout;
    matplotlib warns past 20 open figures). Only when matplotlib was imported at all."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
