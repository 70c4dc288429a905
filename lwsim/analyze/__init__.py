"""The learnability window of a user's own trained GRU/LSTM (docs/analyze.md).

    from lwsim.analyze import analyze
    report = analyze(cell, params, x, y, rates=opt)    # x (T, B, D), y (T, B, n_out), time-major
    report.to_markdown(); report.to_json(); report.figures(); report.save("report/")

Command line: ``python -m lwsim.analyze --cell lstm --hidden 128 --weights model.safetensors
--optimizer-state opt.safetensors --optimizer adamw --lr 1e-3 --data diag.npz --out report/``.
Files are read by :mod:`lwsim.analyze.load` (safetensors or .npz, never pickle).
"""
from .core import analyze, default_lags, default_n_grid, resolve_rates
from .load import LoadError, load_data, load_optimizer, load_weights
from .report import Report

__all__ = ["analyze", "Report", "LoadError", "load_weights", "load_optimizer", "load_data",
           "default_lags", "default_n_grid", "resolve_rates"]
