"""ScienceData logic: the statistics a research data platform computes over stored measurements.

The generic operations can list and count records but cannot do arithmetic across them, so these tools are custom:
descriptive statistics with a Student-t confidence interval (optionally per sample or per site, in a requested unit),
Grubbs' two-sided outlier test, an ordinary least-squares calibration line with detection limits and back-calculated
concentrations, and unit conversion between compatible units (mass and molar concentration given a molar mass).
The t-distribution quantiles come from the regularised incomplete beta function (continued fraction) inverted by
bisection, so the module needs no third-party packages and gives the same numbers on every machine.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

# ----- units ----------------------------------------------------------------------------------------------------------
#: unit -> (dimension, factor to the dimension's base unit). Temperatures are handled apart (they have offsets).
_UNITS: dict[str, tuple[str, float]] = {
    "g/L": ("mass concentration", 1000.0), "mg/L": ("mass concentration", 1.0),
    "ug/L": ("mass concentration", 1e-3), "\u00b5g/L": ("mass concentration", 1e-3),
    "ng/L": ("mass concentration", 1e-6), "mg/mL": ("mass concentration", 1000.0),
    "mol/L": ("amount concentration", 1000.0), "mmol/L": ("amount concentration", 1.0),
    "umol/L": ("amount concentration", 1e-3), "\u00b5mol/L": ("amount concentration", 1e-3),
    "g/kg": ("mass fraction", 1000.0), "mg/kg": ("mass fraction", 1.0), "ug/g": ("mass fraction", 1.0),
    "\u00b5g/g": ("mass fraction", 1.0), "ng/g": ("mass fraction", 1e-3), "ug/kg": ("mass fraction", 1e-3),
    "\u00b5g/kg": ("mass fraction", 1e-3), "ppm": ("mass fraction", 1.0), "ppb": ("mass fraction", 1e-3),
    "%": ("mass fraction", 1e4),
    "Pa": ("pressure", 1e-3), "kPa": ("pressure", 1.0), "MPa": ("pressure", 1000.0), "bar": ("pressure", 100.0),
    "mbar": ("pressure", 0.1), "atm": ("pressure", 101.325), "psi": ("pressure", 6.894757),
    "mmHg": ("pressure", 0.1333224),
    "m": ("length", 1.0), "cm": ("length", 0.01), "mm": ("length", 1e-3), "um": ("length", 1e-6),
    "km": ("length", 1000.0),
}
_TEMPERATURE = {"degC": "degC", "\u00b0C": "degC", "C": "degC", "degF": "degF", "\u00b0F": "degF", "F": "degF",
                "K": "K"}


def _to_kelvin(value: float, unit: str) -> float:
    if unit == "degC":
        return value + 273.15
    if unit == "degF":
        return (value - 32.0) * 5.0 / 9.0 + 273.15
    return value


def _from_kelvin(value: float, unit: str) -> float:
    if unit == "degC":
        return value - 273.15
    if unit == "degF":
        return (value - 273.15) * 9.0 / 5.0 + 32.0
    return value


def convert(value: float, from_unit: str, to_unit: str, molar_mass: float | None = None) -> float:
    """``value`` in ``from_unit`` expressed in ``to_unit``; raises ``invalid_request`` for incompatible units."""
    if from_unit == to_unit:
        return value
    if from_unit in _TEMPERATURE or to_unit in _TEMPERATURE:
        if from_unit not in _TEMPERATURE or to_unit not in _TEMPERATURE:
            raise ToolError("invalid_request", f"Cannot convert {from_unit} to {to_unit}: not both temperatures.")
        return _from_kelvin(_to_kelvin(value, _TEMPERATURE[from_unit]), _TEMPERATURE[to_unit])
    for unit in (from_unit, to_unit):
        if unit not in _UNITS:
            known = ", ".join(sorted({*_UNITS, *_TEMPERATURE}))
            raise ToolError("invalid_request", f"Unknown unit {unit!r}. Known units: {known}.")
    (dim_a, fa), (dim_b, fb) = _UNITS[from_unit], _UNITS[to_unit]
    if dim_a == dim_b:
        return value * fa / fb
    if {dim_a, dim_b} == {"mass concentration", "amount concentration"}:
        if not molar_mass:
            raise ToolError("invalid_request", f"Converting {from_unit} to {to_unit} needs the molar mass (g/mol).")
        base = value * fa  # mg/L or mmol/L
        base = base / molar_mass if dim_a == "mass concentration" else base * molar_mass
        return base / fb
    raise ToolError("invalid_request", f"Cannot convert {from_unit} ({dim_a}) to {to_unit} ({dim_b}).")


def _sig(x: float, digits: int = 4) -> float:
    """``x`` rounded to ``digits`` significant figures (at least to 3 decimal places for small numbers)."""
    if x == 0 or not math.isfinite(x):
        return 0.0 if x == 0 else x
    return round(x, max(0, digits - 1 - int(math.floor(math.log10(abs(x))))))


# ----- Student t --------------------------------------------------------------------------------------------------------
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=512)
def t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t, by bisection on the CDF (pure, so cached: the same few
    confidence levels and sample sizes come up again and again)."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(64):  # the bracket halves 64 times: below double precision
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


# ----- selecting measurements -------------------------------------------------------------------------------------------
def _measurements(ctx: Any, args: dict[str, Any], *, keep_excluded: bool = False) -> tuple[list[dict], dict, str]:
    """The measurements picked by the arguments (one quantity, one sample or a dataset, optional site / dates),
    with the samples they belong to and the unit they are in."""
    dataset_id, sample_id = args.get("dataset_id"), args.get("sample_id")
    if not dataset_id and not sample_id:
        raise ToolError("invalid_request", "Give a dataset_id or a sample_id.")
    if dataset_id and ctx.state.get("datasets", dataset_id) is None:
        raise ToolError("not_found", f"No dataset with dataset_id {dataset_id!r}.")
    if sample_id and ctx.state.get("samples", sample_id) is None:
        raise ToolError("not_found", f"No sample with sample_id {sample_id!r}.")
    site = str(args.get("site", "")).casefold()
    samples = dict(sorted((k, s) for k, s in ctx.state.records("samples").items()
                          if (not sample_id or k == sample_id) and (not dataset_id or s.get("dataset_id") == dataset_id)
                          and (not site or str(s.get("site", "")).casefold() == site)))
    quantity = str(args["quantity"]).casefold()
    date_from, date_to = args.get("date_from"), args.get("date_to")
    picked = []
    for key, m in ctx.state.records("measurements").items():  # filter first, then sort the few kept by key
        if m.get("sample_id") not in samples or str(m.get("quantity", "")).casefold() != quantity:
            continue
        day = str(m.get("measured_at", ""))[:10]
        if (date_from and day < date_from) or (date_to and day > date_to):
            continue
        if not keep_excluded and m.get("qc_flag") == "excluded":
            continue
        picked.append((key, m))
    rows = [m for _, m in sorted(picked, key=lambda km: km[0])]
    units = sorted({str(m.get("unit")) for m in rows})
    if len(units) > 1:
        raise ToolError("conflict", f"The selected measurements are in different units ({', '.join(units)}); "
                                    "narrow the selection to one sample or site.")
    return rows, samples, units[0] if units else ""


def _stats(values: list[float], confidence: float) -> dict[str, Any]:
    n = len(values)
    mean = sum(values) / n
    ordered = sorted(values)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    out: dict[str, Any] = {"n": n, "mean": _sig(mean), "median": _sig(median)}
    if n >= 2:
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
        sem = sd / math.sqrt(n)
        half = t_ppf(0.5 + confidence / 2.0, n - 1) * sem
        out.update({"std": _sig(sd), "sem": _sig(sem), "rsd_pct": _sig(100 * sd / mean, 3) if mean else None,
                    "ci_level": confidence, "ci_low": _sig(mean - half), "ci_high": _sig(mean + half),
                    "ci_half_width": _sig(half)})
    else:
        out.update({"std": None, "sem": None, "rsd_pct": None, "ci_level": confidence, "ci_low": None,
                    "ci_high": None, "ci_half_width": None})
    return out


def _extreme(rows: list[tuple[float, dict]], samples: dict, which: str) -> dict[str, Any]:
    value, m = (max if which == "max" else min)(rows, key=lambda r: (r[0], r[1]["meas_id"]))
    sample = samples[m["sample_id"]]
    return {"value": _sig(value), "meas_id": m["meas_id"], "sample_id": m["sample_id"], "label": sample.get("label")}


@custom_tool("science_data.summarize_measurements")
def summarize_measurements(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Descriptive statistics and a t-based confidence interval of one quantity, over a sample or a dataset."""
    rows, samples, unit = _measurements(ctx, args)
    if not rows:
        raise ToolError("not_found", f"No {args['quantity']!r} measurements match that selection.")
    target = args.get("unit", unit)
    molar_mass = args.get("molar_mass")
    values = [(convert(float(m["value"]), unit, target, molar_mass), m) for m in rows]
    confidence = float(args.get("confidence", 0.95))
    excluded = len(_measurements(ctx, args, keep_excluded=True)[0]) - len(rows)
    out: dict[str, Any] = {"quantity": rows[0]["quantity"], "unit": target}
    if args.get("dataset_id"):
        out["dataset_id"] = args["dataset_id"]
    if args.get("sample_id"):
        out["sample_id"] = args["sample_id"]
    out.update(_stats([v for v, _ in values], confidence))
    out["min"] = _extreme(values, samples, "min")
    out["max"] = _extreme(values, samples, "max")
    out["excluded_measurements"] = excluded
    out["instruments"] = sorted({str(m.get("instrument_id")) for m in rows})
    group_by = args.get("group_by")
    if group_by:
        groups: dict[str, list[float]] = {}
        labels: dict[str, str] = {}
        for v, m in values:
            s = samples[m["sample_id"]]
            key = m["sample_id"] if group_by == "sample" else str(s.get("site"))
            groups.setdefault(key, []).append(v)
            labels[key] = str(s.get("label")) if group_by == "sample" else key
        out["groups"] = [{group_by: k, "label": labels[k], **_stats(vs, confidence)} for k, vs in sorted(groups.items())]
    return out


@custom_tool("science_data.test_outliers")
def test_outliers(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Grubbs' two-sided test for a single outlier among one quantity's measurements."""
    rows, _, unit = _measurements(ctx, args)
    n = len(rows)
    if n < 3:
        raise ToolError("invalid_request", f"Grubbs' test needs at least 3 measurements; {n} match.")
    alpha = float(args.get("alpha", 0.05))
    values = [float(m["value"]) for m in rows]
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    suspect = max(rows, key=lambda m: (abs(float(m["value"]) - mean), m["meas_id"]))
    g = abs(float(suspect["value"]) - mean) / sd if sd > 0 else 0.0
    t = t_ppf(1.0 - alpha / (2.0 * n), n - 2)
    g_crit = (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))
    return {"quantity": rows[0]["quantity"], "unit": unit, "n": n, "alpha": alpha, "mean": _sig(mean),
            "std": _sig(sd), "suspect": {"meas_id": suspect["meas_id"], "sample_id": suspect["sample_id"],
                                         "value": suspect["value"], "run": suspect.get("run")},
            "g": round(g, 3), "g_critical": round(g_crit, 3), "outlier": g > g_crit,
            "conclusion": (f"{suspect['meas_id']} ({suspect['value']} {unit}) is an outlier at alpha={alpha}."
                           if g > g_crit else f"No outlier at alpha={alpha}.")}


@custom_tool("science_data.fit_calibration")
def fit_calibration(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Least-squares calibration line of an instrument's latest standards run for an analyte (on or before a date),
    with R^2, the residual standard deviation, detection and quantification limits, and optionally the
    concentration a measured signal corresponds to."""
    instrument_id, analyte = args["instrument_id"], str(args["analyte"]).casefold()
    if ctx.state.get("instruments", instrument_id) is None:
        raise ToolError("not_found", f"No instrument with instrument_id {instrument_id!r}.")
    on = args.get("run_date") or ctx.now[:10]
    runs = [c for _, c in sorted(ctx.state.records("calibrations").items())
            if c.get("instrument_id") == instrument_id and str(c.get("analyte", "")).casefold() == analyte
            and str(c.get("run_date", "")) <= on]
    if not runs:
        raise ToolError("not_found", f"No {args['analyte']} calibration for {instrument_id} on or before {on}.")
    cal = max(runs, key=lambda c: (c["run_date"], c["cal_id"]))
    xs = [float(v) for v in cal.get("standards", [])]
    ys = [float(v) for v in cal.get("responses", [])]
    n = len(xs)
    if n < 3 or n != len(ys):
        raise ToolError("conflict", f"Calibration {cal['cal_id']} does not have 3 or more paired standards.")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = my - slope * mx
    sse = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    syy = sum((y - my) ** 2 for y in ys)
    r2 = 1.0 - sse / syy if syy > 0 else 1.0
    sd = math.sqrt(sse / (n - 2)) if n > 2 else 0.0
    out: dict[str, Any] = {
        "cal_id": cal["cal_id"], "instrument_id": instrument_id, "analyte": cal["analyte"], "run_date": cal["run_date"],
        "n_standards": n, "concentration_unit": cal.get("conc_unit"), "response_unit": cal.get("response_unit"),
        "slope": _sig(slope, 6), "intercept": _sig(intercept, 5), "r_squared": round(r2, 5),
        "residual_sd": _sig(sd), "lod": _sig(3.3 * sd / slope) if slope else None,
        "loq": _sig(10 * sd / slope) if slope else None, "result": cal.get("result"), "notes": cal.get("notes", ""),
    }
    if args.get("signal") is not None and slope:
        out["signal"] = args["signal"]
        out["concentration"] = _sig((float(args["signal"]) - intercept) / slope)
    return out


@custom_tool("science_data.convert_units")
def convert_units(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Convert a value between compatible units."""
    result = convert(float(args["value"]), args["from_unit"], args["to_unit"], args.get("molar_mass"))
    return {"value": args["value"], "from_unit": args["from_unit"], "to_unit": args["to_unit"],
            "result": _sig(result, 6)}
