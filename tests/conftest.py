"""Suite-wide reporting: numba's compilation time (compiling kernels, or loading them from numba's
on-disk cache), printed at the end of every run, so a cold-cache CI run reports what compiling
the kernels costs (lwsim/figures/timing.py). Runs in spawned worker processes are not counted."""
from lwsim.figures.timing import compile_clock

_CLOCK = compile_clock()          # installed before any test compiles anything


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"numba compilation in this process: {_CLOCK.cpu:.1f} s CPU, {_CLOCK.total:.1f} s wall, "
        f"{_CLOCK.count} compilations or cache loads")
