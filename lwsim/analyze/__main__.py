"""``python -m lwsim.analyze``: the learnability-window report of a trained model (docs/analyze.md)."""
from __future__ import annotations

import argparse
import sys
import warnings

import lwsim
from lwsim.stats.nulls import NULL_NAMES

from .._cli import ArgumentParser, backend_problem, folder_problem
from .core import analyze
from .load import LoadError, infer_model, load_data, load_optimizer, load_weights


def _int_list(text):
    vals = [int(v) for v in text.replace(" ", "").split(",") if v]
    if not vals:
        raise ValueError(text)
    return vals


def _name_list(text):
    vals = [v for v in text.replace(" ", "").split(",") if v]
    bad = [v for v in vals if v not in NULL_NAMES]
    if not vals or bad:
        raise argparse.ArgumentTypeError(f"{text!r}: give null names from {', '.join(NULL_NAMES)}")
    return vals


def _ints(text):
    vals = _int_list(text)
    return vals[0] if len(vals) == 1 else vals


def parser():
    p = ArgumentParser(prog="python -m lwsim.analyze", description=__doc__)
    p.add_argument("--cell", required=True, choices=list(lwsim.CELL_NAMES))
    p.add_argument("--hidden", type=int, required=True, help="hidden size H")
    p.add_argument("--weights", required=True, help=".safetensors or .npz (never .pt)")
    p.add_argument("--layout", choices=["torch", "lwsim"], default="torch",
                   help="key names: nn.GRU/nn.LSTM + readout.* (torch) or lwsim's parameter names")
    p.add_argument("--data", required=True, help=".npz with x (T, B, D) and y (T, B, n_out)")
    p.add_argument("--batch-first", action="store_true", help="x, y are (B, T, ·) as in PyTorch")
    p.add_argument("--out", required=True, help="output folder (report.md, report.json, PNGs)")
    g = p.add_argument_group("optimizer (rates λ)")
    g.add_argument("--optimizer-state", help="optimizer buffers, .safetensors or .npz")
    g.add_argument("--optimizer", choices=lwsim.optim.OPTIMIZERS)
    g.add_argument("--lr", type=float)
    g.add_argument("--betas", type=lambda t: tuple(float(v) for v in t.split(",")))
    g.add_argument("--opt-eps", type=float, help="the optimizer's eps (not the detection ε)")
    g.add_argument("--momentum", type=float)
    g.add_argument("--rms-alpha", type=float, help="RMSprop's alpha")
    g.add_argument("--centered", action="store_true", default=None)
    g.add_argument("--amsgrad", action="store_true", default=None)
    m = p.add_argument_group("model options")
    m.add_argument("--readout", choices=["every", "last"], default="every")
    m.add_argument("--layernorm", action="store_true", help="lwsim layout only")
    m.add_argument("--convention", choices=["cho", "torch"], help="gru, lwsim layout (default cho)")
    m.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    m.add_argument("--s", type=float, help="constgate: the constant gate s the model was trained with (required)")
    a = p.add_argument_group("analysis")
    a.add_argument("--lags", type=_ints, help="L (1 … L) or a comma list; default up to T/2")
    a.add_argument("--n-grid", type=_int_list, help="budgets N: one or a comma list; default up to B")
    a.add_argument("--K", type=int, default=1, help="random directions of the matched statistic")
    a.add_argument("--eps", type=float, default=20.0, help="detection threshold ε")
    a.add_argument("--statistic", help="matched-statistic variant (when this lwsim has it)")
    a.add_argument("--conventions", help="lwsim or author (docs/fidelity.md), when this lwsim has it")
    a.add_argument("--noise", choices=list(NULL_NAMES), default="lag",
                   help="detection null of the report (docs/statistics.md §3.3); lag and full are always reported")
    a.add_argument("--nulls", type=_name_list, default=None,
                   help="more nulls to report beside lag and full: a comma list of "
                        f"{', '.join(NULL_NAMES)} (the author's floors and float32 diagnostics)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                   help="exact envelope (default: only for small models)")
    a.add_argument("--backend", choices=list(lwsim.BACKENDS), default="numba")
    a.add_argument("--dpi", type=int, default=120, help="resolution of the PNGs (default: 120, 600×408 px)")
    a.add_argument("--no-progress", action="store_true", help="no progress bars (the console lines stay)")
    return p


def _positive(args, names):
    """The first of the integer options ``names`` below 1, as a one-line problem (None: all >= 1)."""
    bad = next((n for n in names if getattr(args, n) < 1), None)
    return None if bad is None else f"--{bad} must be >= 1, got {getattr(args, bad)}"


def _owners(option):
    """The cells whose kind owns the make_cell ``option`` (docs/cells.md §1.10)."""
    return " or ".join(n for n in lwsim.cells.cell_names() if option in lwsim.cells.kind(n).options)


def _cell_options(args):
    opts = {"readout": args.readout, "dtype": args.dtype}
    owned = lwsim.cells.kind(args.cell).options
    if args.layout == "torch":
        if args.layernorm:
            raise LoadError("--layernorm: nn.GRU/nn.LSTM have no LayerNorm (layout torch)")
        if "convention" in owned:
            opts["convention"] = "torch"
    else:
        opts["layernorm"] = args.layernorm
        if "convention" in owned and args.convention:
            opts["convention"] = args.convention
    if "s" in owned:
        if args.s is None:
            raise LoadError(f"--cell {args.cell} needs --s, the constant gate the model was trained with "
                            "(the weights do not store it)")
        opts["s"] = args.s
    elif args.s is not None:
        raise LoadError(f"--s applies to --cell {_owners('s')} only, got --cell {args.cell}")
    if args.convention and "convention" not in owned:
        raise LoadError(f"--convention applies to --cell {_owners('convention')} only, got --cell {args.cell}")
    if args.convention == "cho" and args.layout == "torch":
        raise LoadError("--convention cho: layout torch is nn.GRU, whose convention is 'torch'; "
                        "use --layout lwsim for a cho-convention GRU")
    return opts


def _hyper(args):
    h = {"lr": args.lr, "betas": args.betas, "eps": args.opt_eps, "momentum": args.momentum,
         "alpha": args.rms_alpha, "centered": args.centered, "amsgrad": args.amsgrad}
    return {k: v for k, v in h.items() if v is not None}


def run(args):
    opts = _cell_options(args)
    shape_opts = {k: v for k, v in opts.items() if k in ("layernorm", "convention")}
    D, n_out, bias = infer_model(args.weights, args.cell, args.hidden, args.layout, **shape_opts)
    cell = lwsim.make_cell(args.cell, D, args.hidden, n_out, bias=bias, **opts)
    params = load_weights(args.weights, cell, args.layout)
    x, y = load_data(args.data, D, n_out, batch_first=args.batch_first)
    print(f"read {args.weights} as layout {args.layout}: {args.cell}, D = {D}, H = {args.hidden}, "
          f"n_out = {n_out}, {'with' if bias else 'no'} bias")
    T, B = x.shape[:2]
    print(f"read {args.data}: T = {T} steps, B = {B} sequences, from "
          + ("batch-first (B, T, ·) arrays (--batch-first)" if args.batch_first else
             "time-major (T, B, ·) arrays (pass --batch-first if they are (B, T, ·))"))
    if args.optimizer_state:
        rates = load_optimizer(args.optimizer_state, cell, params, args.layout, args.optimizer, _hyper(args))
    elif args.optimizer:
        rates = (args.optimizer, _hyper(args))
    else:
        rates = None
        print("no optimizer given (--optimizer, --optimizer-state): assuming rates λ = 1 (unit SGD "
              "rate η = 1), so f(ℓ) is the gates' transport alone")
    sources = {"weights": args.weights, "layout": args.layout, "data": args.data}
    if args.optimizer_state:
        sources["optimizer state"] = args.optimizer_state
    rep = analyze(cell, params, x, y, rates=rates, lags=args.lags, n_grid=args.n_grid, K=args.K,
                  statistic=args.statistic, conventions=args.conventions, eps=args.eps, seed=args.seed, exact=args.exact,
                  backend=args.backend, progress=not args.no_progress, sources=sources, noise=args.noise,
                  nulls=None if args.nulls is None else (
                      ("lag", "full") if args.statistic in (None, "sequence") else ("lag",)) + tuple(args.nulls))
    return rep, rep.save(args.out, dpi=args.dpi)


def main(argv=None):
    import matplotlib
    matplotlib.use("Agg")
    args = parser().parse_args(argv)
    problem = (folder_problem(args.out, "--out") or backend_problem(args.backend)
               or _positive(args, ("hidden", "K", "dpi")))
    if problem:                                    # before the analysis, so no work is lost
        print(f"lwsim.analyze: error: {problem}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", UserWarning)       # every warning reaches the user
            rep, paths = run(args)
    except (LoadError, ValueError, TypeError, KeyError, OSError) as exc:
        print(f"lwsim.analyze: error: {exc}", file=sys.stderr)
        return 2
    h = rep.detection.h_n
    print(f"Ĥ_N = {h[-1]:g} lags at N = {int(rep.detection.n_grid[-1])}; wrote "
          + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
