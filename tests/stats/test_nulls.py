"""Tests of lwsim/stats/nulls.py (laid out like the code: docs/testing.md).

The two detection nulls and the author's floors (docs/statistics.md §3.3, docs/fidelity.md), the
nested exponential test (§3.4), and the findings' per-null views, on hand-computed cases."""


from lwsim.figures import training
from lwsim.stats.nulls import NULLS, NULL_NAMES, get_null


# ---- the declarations (lwsim/stats/nulls.py)
def test_the_null_declarations():
    assert NULL_NAMES == ("lag", "full", "snr", "ecf", "floors", "f32", "author")
    assert [(n.noise, n.float32, n.floors) for n in NULLS.values()] == [
        ("lag", False, ()), ("full", False, ()), ("lag", False, ("snr",)), ("lag", False, ("ecf",)),
        ("lag", False, ("snr", "ecf")), ("lag", True, ()), ("lag", True, ("snr", "ecf"))]
    assert get_null("author") is NULLS["author"] and "§3.3.2" in NULLS["author"].section
    # the figures' ablations are these declarations, in this order
    assert training.FLOOR_ABLATIONS == {n: (NULLS[n].float32, NULLS[n].floors)
                                      for n in ("snr", "ecf", "floors", "f32", "author")}
