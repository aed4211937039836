"""MetricsSpreadsheets logic: statistics, pivots, growth rates and formula cells over long-format sheet data.

Sheets are stored the way a metrics warehouse stores them: one datapoint per (sheet, period, segment, column). The
generic operations can list and filter those rows but cannot compute over them, so the numeric tools live here:
column statistics (count, sum, mean, median, min, max, standard deviation), pivots of a column by segment or period,
period-over-period growth with the compound per-period rate, and formula cells. Formulas use a small grammar parsed
by a recursive-descent parser (never ``eval``):

    expr   := term (('+' | '-') term)*
    term   := factor (('*' | '/') factor)*
    factor := '-' factor | number | column | FUNC '(' column ')' | '(' expr ')'

A bare column is its total over all segments in the evaluation period (the sheet's latest period unless one is
given); ``SUM AVG MEDIAN MIN MAX COUNT FIRST LAST`` aggregate the column's per-period totals across the whole sheet.
Periods are ``YYYY-MM`` or ``YYYY-Qn`` strings, which sort in time order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_BLOCKED = ("retracted", "locked")
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _num(x: float) -> float | int:
    """A JSON-friendly number: integral values as int, others to 2 decimals (4 for small ratios)."""
    if isinstance(x, int) or (math.isfinite(x) and float(x).is_integer()):
        return int(x)
    return round(x, 4) if abs(x) < 10 else round(x, 2)


def _sheet(ctx: Any, sheet_id: str) -> dict[str, Any]:
    sheet = ctx.record("sheets", sheet_id, f"No sheet with sheet_id {sheet_id!r}.")
    return sheet


def _check_column(sheet: dict[str, Any], column: str) -> None:
    if column not in sheet.get("columns", []):
        raise ToolError("invalid_request", f"Sheet {sheet['sheet_id']} has no column {column!r}; its columns are "
                                           f"{', '.join(sheet.get('columns', []))}.")


def _check_segment(sheet: dict[str, Any], segment: str | None) -> str | None:
    if segment is None:
        return None
    for s in sheet.get("segments", []):
        if s.casefold() == segment.casefold():
            return s
    label = sheet.get("segment_label", "segment")
    raise ToolError("not_found", f"Sheet {sheet['sheet_id']} ({sheet['name']}) has no {label} {segment!r}; it covers "
                                 f"{', '.join(sheet.get('segments', []))}.")


def _points(ctx: Any, sheet: dict[str, Any], column: str, segment: str | None = None,
            period_from: str | None = None, period_to: str | None = None) -> list[dict[str, Any]]:
    """The sheet's datapoints of one column, filtered, in (period, segment) order."""
    _check_column(sheet, column)
    seg = _check_segment(sheet, segment)
    out = []
    for _, p in sorted(ctx.state.records("datapoints").items()):
        if p.get("sheet_id") != sheet["sheet_id"] or p.get("column") != column:
            continue
        if seg is not None and p.get("segment") != seg:
            continue
        period = str(p.get("period", ""))
        if (period_from and period < period_from) or (period_to and period > period_to):
            continue
        out.append(p)
    out.sort(key=lambda p: (str(p.get("period")), str(p.get("segment"))))
    return out


def _stats(values: list[float]) -> dict[str, Any]:
    n = len(values)
    s = sorted(values)
    mid = n // 2
    median = s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2
    mean = sum(values) / n
    stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "sum": _num(sum(values)), "mean": _num(mean), "median": _num(median),
            "min": _num(s[0]), "max": _num(s[-1]), "stdev": _num(stdev)}


def _period_totals(points: list[dict[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for p in points:
        totals[str(p["period"])] = totals.get(str(p["period"]), 0.0) + float(p["value"])
    return dict(sorted(totals.items()))


def _scope(args: dict[str, Any]) -> dict[str, Any]:
    return {k: args[k] for k in ("segment", "period_from", "period_to") if k in args}


@custom_tool("metrics_spreadsheets.column_stats")
def column_stats(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Statistics of one column over the datapoints that match the filters (each datapoint counts once)."""
    sheet = _sheet(ctx, args["sheet_id"])
    points = _points(ctx, sheet, args["column"], args.get("segment"), args.get("period_from"), args.get("period_to"))
    if not points:
        raise ToolError("not_found", f"No {args['column']} datapoints on {sheet['sheet_id']} match those filters.")
    values = [float(p["value"]) for p in points]
    periods = sorted({str(p["period"]) for p in points})
    return {"sheet_id": sheet["sheet_id"], "sheet": sheet["name"], "column": args["column"], "unit": sheet.get("unit"),
            "filters": _scope(args), "periods": [periods[0], periods[-1]], **_stats(values)}


@custom_tool("metrics_spreadsheets.pivot_table")
def pivot_table(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A column aggregated by segment or by period (sum, mean, median, min, max or count), largest group first for
    segments and in time order for periods, with the grand total of the matching datapoints."""
    sheet = _sheet(ctx, args["sheet_id"])
    points = _points(ctx, sheet, args["column"], args.get("segment"), args.get("period_from"), args.get("period_to"))
    if not points:
        raise ToolError("not_found", f"No {args['column']} datapoints on {sheet['sheet_id']} match those filters.")
    by = args["group_by"]
    metric = args.get("metric", "sum")
    groups: dict[str, list[float]] = {}
    for p in points:
        groups.setdefault(str(p[by]), []).append(float(p["value"]))
    rows = [{by: g, "value": _stats(v)[metric], "datapoints": len(v)} for g, v in groups.items()]
    if by == "segment":
        rows.sort(key=lambda r: (-float(r["value"]), r[by]))
    else:
        rows.sort(key=lambda r: r[by])
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return {"sheet_id": sheet["sheet_id"], "sheet": sheet["name"], "column": args["column"], "unit": sheet.get("unit"),
            "group_by": by if by == "period" else sheet.get("segment_label", "segment"), "metric": metric,
            "filters": _scope(args), "groups": rows, "grand_total": _num(sum(float(p["value"]) for p in points))}


@custom_tool("metrics_spreadsheets.growth_rate")
def growth_rate(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Change of a column's total (over all segments, or one) between two periods: absolute, percent, and the
    compound rate per period ((end / start) ** (1 / periods) - 1)."""
    sheet = _sheet(ctx, args["sheet_id"])
    start, end = args["from_period"], args["to_period"]
    if end <= start:
        raise ToolError("invalid_request", "to_period must be after from_period.")
    totals = _period_totals(_points(ctx, sheet, args["column"], args.get("segment")))
    missing = [p for p in (start, end) if p not in totals]
    if missing:
        raise ToolError("not_found", f"Sheet {sheet['sheet_id']} has no {args['column']} data for "
                                     f"{', '.join(missing)}; it runs {sheet.get('first_period')} to "
                                     f"{sheet.get('last_period')}.")
    periods = list(totals)
    steps = periods.index(end) - periods.index(start)
    a, b = totals[start], totals[end]
    if a == 0:
        raise ToolError("invalid_request", f"The {args['column']} total for {start} is zero; growth is undefined.")
    pct = (b - a) / a * 100
    compound = ((b / a) ** (1 / steps) - 1) * 100 if a > 0 and b > 0 else None
    return {"sheet_id": sheet["sheet_id"], "sheet": sheet["name"], "column": args["column"],
            "segment": args.get("segment", "all"), "from_period": start, "to_period": end, "start_value": _num(a),
            "end_value": _num(b), "change": _num(b - a), "change_pct": round(pct, 2), "periods": steps,
            "compound_pct_per_period": None if compound is None else round(compound, 2)}


# ----- formulas ---------------------------------------------------------------------------------------------------
_FUNCS: dict[str, Callable[[list[float]], float]] = {
    "SUM": sum,
    "AVG": lambda v: sum(v) / len(v),
    "MEDIAN": lambda v: float(_stats(v)["median"]),
    "MIN": min,
    "MAX": max,
    "COUNT": lambda v: float(len(v)),
    "FIRST": lambda v: v[0],
    "LAST": lambda v: v[-1],
}


def _tokens(expression: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        number, name, other = m.groups()
        if number is not None:
            out.append(("num", number))
        elif name is not None:
            out.append(("name", name))
        elif other is not None and other.strip():
            if other not in "+-*/()":
                raise ToolError("invalid_request", f"Unexpected character {other!r} in the formula.")
            out.append(("op", other))
    return out


class _Parser:
    """Recursive descent over the token list; evaluates as it parses (the grammar has no side effects)."""

    def __init__(self, tokens: list[tuple[str, str]], column: Callable[[str], float],
                 series: Callable[[str], list[float]]) -> None:
        self.tokens = tokens
        self.i = 0
        self.column = column
        self.series = series
        self.refs: list[str] = []

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            want = f"{value!r}" if value else "a value"
            raise ToolError("invalid_request", f"Formula ends early or is malformed: expected {want}.")
        self.i += 1
        return tok

    def parse(self) -> float:
        value = self.expr()
        if self.peek() is not None:
            raise ToolError("invalid_request", f"Unexpected {self.peek()[1]!r} in the formula.")  # type: ignore[index]
        return value

    def expr(self) -> float:
        value = self.term()
        while (tok := self.peek()) is not None and tok[1] in "+-" and tok[0] == "op":
            self.i += 1
            right = self.term()
            value = value + right if tok[1] == "+" else value - right
        return value

    def term(self) -> float:
        value = self.factor()
        while (tok := self.peek()) is not None and tok[1] in "*/" and tok[0] == "op":
            self.i += 1
            right = self.factor()
            if tok[1] == "/":
                if right == 0:
                    raise ToolError("invalid_request", "The formula divides by zero.")
                value = value / right
            else:
                value = value * right
        return value

    def factor(self) -> float:
        kind, text = self.take()
        if kind == "op" and text == "-":
            return -self.factor()
        if kind == "op" and text == "(":
            value = self.expr()
            self.take(")")
            return value
        if kind == "num":
            return float(text)
        if kind == "name":
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                func = _FUNCS.get(text.upper())
                if func is None:
                    raise ToolError("invalid_request", f"Unknown function {text!r}; use one of {', '.join(_FUNCS)}.")
                self.take("(")
                kind2, col = self.take()
                if kind2 != "name":
                    raise ToolError("invalid_request", f"{text.upper()}() takes a column name.")
                self.take(")")
                self.refs.append(col)
                values = self.series(col)
                return float(func(values))
            self.refs.append(text)
            return self.column(text)
        raise ToolError("invalid_request", f"Unexpected {text!r} in the formula.")


def evaluate(ctx: Any, sheet: dict[str, Any], expression: str, period: str | None = None) -> dict[str, Any]:
    """The value of ``expression`` on ``sheet`` (ToolError on a parse or reference problem)."""
    period = period or sheet.get("last_period")
    cache: dict[str, dict[str, float]] = {}

    def totals(col: str) -> dict[str, float]:
        if col not in cache:
            cache[col] = _period_totals(_points(ctx, sheet, col))
        return cache[col]

    def column(col: str) -> float:
        t = totals(col)
        if period not in t:
            raise ToolError("not_found", f"Column {col!r} has no data for {period}.")
        return t[period]

    tokens = _tokens(expression)
    if not tokens:
        raise ToolError("invalid_request", "The formula is empty.")
    parser = _Parser(tokens, column, lambda col: list(totals(col).values()))
    value = parser.parse()
    return {"expression": expression, "period": period, "value": _num(value),
            "references": sorted(set(parser.refs))}


@custom_tool("metrics_spreadsheets.evaluate_formulas")
def evaluate_formulas(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate a new expression, one saved formula cell, or every saved cell of a sheet; problems are reported per
    formula instead of failing the whole call."""
    sheet = _sheet(ctx, args["sheet_id"])
    period = args.get("period")
    if "expression" in args:
        try:
            result = {"valid": True, **evaluate(ctx, sheet, args["expression"], period)}
        except ToolError as exc:
            result = {"valid": False, "expression": args["expression"], "problem": exc.message}
        return {"sheet_id": sheet["sheet_id"], "results": [result]}
    cells = [c for _, c in sorted(ctx.state.records("formula_cells").items()) if c.get("sheet_id") == sheet["sheet_id"]]
    if "cell_id" in args:
        cells = [c for c in cells if c.get("cell_id") == args["cell_id"]]
        if not cells:
            raise ToolError("not_found", f"No formula cell {args['cell_id']!r} on sheet {sheet['sheet_id']}.")
    out = []
    for cell in cells:
        try:
            result = {"valid": True, **evaluate(ctx, sheet, cell["expression"], period)}
        except ToolError as exc:
            result = {"valid": False, "expression": cell["expression"], "problem": exc.message}
        out.append({"cell_id": cell["cell_id"], "label": cell["label"], **result})
    return {"sheet_id": sheet["sheet_id"], "results": out}


@custom_tool("metrics_spreadsheets.save_formula_cell")
def save_formula_cell(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Add a named formula cell to a sheet after parsing and evaluating it; a sheet that is retracted or locked, or
    a label already used on the sheet, is refused."""
    sheet = _sheet(ctx, args["sheet_id"])
    if sheet.get("status") in _BLOCKED:
        raise ToolError("conflict", f"Sheet {sheet['sheet_id']} is {sheet['status']}; formula cells cannot be added.")
    label = " ".join(args["label"].split())
    for _, cell in sorted(ctx.state.records("formula_cells").items()):
        if cell.get("sheet_id") == sheet["sheet_id"] and str(cell.get("label", "")).casefold() == label.casefold():
            raise ToolError("conflict", f"Sheet {sheet['sheet_id']} already has a formula cell {label!r} "
                                        f"({cell['cell_id']}).")
    result = evaluate(ctx, sheet, args["expression"], args.get("period"))
    cell_id = ctx.new_id("formula_cells")
    record = {"cell_id": cell_id, "sheet_id": sheet["sheet_id"], "label": label, "expression": args["expression"],
              "period": args.get("period", ""), "created_by": ctx.values.get("user_email", ""),
              "created_at": ctx.now, "last_value": result["value"]}
    ctx.state.put("formula_cells", cell_id, record)
    return {"created": record}
