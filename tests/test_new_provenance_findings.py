"""Provenance of FINDINGS.md's headline (lwsim/figures/findings.py, issue 41 item 6): each row's
verdict is its own finding's, from its own figure's data.

Hand-built rendered data give findings 4, 6 and 7 three different verdicts (and finding 9/10 none);
the headline rows must carry them in the right places.

Planted wrong-variable bug (seen failing, then restored):
  P1 write_findings: every headline row reads the first computed finding (rows[min(rows)])
     → test_headline_rows_carry_their_own_findings_verdict
"""


from lwsim.figures import findings as fa
from lwsim.figures.presets import A_CELLS


def test_headline_rows_carry_their_own_findings_verdict(tmp_path):
    a6 = {c: {"mean": 1.9 if c in ("constgate", "sharedgate") else 1.5, "fraction_below_1.9": 0.0,
              "mean_seeds": []} for c in A_CELLS}
    a11 = {"table": [{"cell": "gru", "optimizer": "adamw", "seed": 1, "spearman": 0.7, "pearson_log": 0.99,
                      "slope_ratio": 1.0, "offdiag_mean": 0.0}]}
    b7 = {"sharedgate": [{"slope": 5.0, "remainder": 2.0, "seed": 0}]}
    rendered = {"A6": a6, "A11": a11, "B7": b7}
    path = tmp_path / "FINDINGS.md"
    rows = fa.write_findings(rendered, "smoke", path)
    assert {k: v[1] for k, v in rows.items()} == {4: "reproduced", 6: "inconclusive", 7: "not reproduced"}
    head = {ln.split(" | ")[0].strip("| "): ln.split(" | ")[-1].strip(" |")
            for ln in path.read_text().splitlines() if ln.startswith("| ") and ln[2].isdigit()}
    assert (head["4"], head["6"], head["7"]) == ("reproduced", "inconclusive", "not reproduced")
    assert head["1"] == head["8"] == head["9"] == head["10"] == "not run"
