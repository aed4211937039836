"""WorkforceHr logic the generic operations cannot express.

- working days: a date range minus weekends and the bank holidays on file, the unit every leave figure uses;
- leave balance: entitlement + carried over - approved annual leave already taken - approved leave still to come,
  with pending requests shown apart, all counted in working days from the requests (never a stored total);
- payslip: UK 2025/26 fortnightly PAYE from gross pay - pension (net-pay arrangement) before tax; tax-free
  allowance from the tax code, 20 / 40 / 45 % bands; employee National Insurance 8 % between 484 and 1,934 and 2 %
  above; student loan 9 % above the plan threshold, rounded down to whole pounds;
- shift coverage: open shifts and people rostered while on approved leave or on two overlapping shifts;
- submitting a leave request, which counts its working days and refuses overlaps with the employee's own requests.
"""

from __future__ import annotations

import math
import re
from datetime import date, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_PERIODS = 26  # fortnightly payroll
_BASIC_BAND = 37700.0
_HIGHER_LIMIT = 125140.0 - 12570.0
_NI_PT, _NI_UEL = 484.0, 1934.0
_LOAN_THRESHOLDS = {"plan1": 26065.0, "plan2": 28470.0}
_LIVE = ("pending", "approved")


def _employee(ctx: Any, employee_id: str) -> dict[str, Any]:
    emp = ctx.record("employees", employee_id, f"No employee with employee_id {employee_id!r}.")
    return emp


def _holidays(ctx: Any) -> dict[str, str]:
    return {str(h["date"]): str(h["name"]) for _, h in ctx.state.records("public_holidays").items()}


def _working_days(start: date, end: date, holidays: dict[str, str]) -> int:
    days, d = 0, start
    while d <= end:
        if d.weekday() < 5 and d.isoformat() not in holidays:
            days += 1
        d += timedelta(days=1)
    return days


def _range(args: dict[str, Any]) -> tuple[date, date]:
    start, end = date.fromisoformat(args["start_date"]), date.fromisoformat(args["end_date"])
    if end < start:
        raise ToolError("invalid_request", "end_date must be on or after start_date.")
    if (end - start).days > 366:
        raise ToolError("invalid_request", "A leave range can span at most one year.")
    return start, end


def _overlapping(ctx: Any, employee_id: str, start: date, end: date) -> list[dict[str, Any]]:
    return [{k: r.get(k) for k in ("request_id", "leave_type", "start_date", "end_date", "status")}
            for _, r in sorted(ctx.state.records("leave_requests").items())
            if r.get("employee_id") == employee_id and r.get("status") in _LIVE
            and str(r["start_date"]) <= end.isoformat() and str(r["end_date"]) >= start.isoformat()]


@custom_tool("workforce_hr.get_leave_balance")
def get_leave_balance(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Annual leave in working days for one leave year, counted from the requests on file."""
    emp = _employee(ctx, args["employee_id"])
    year = int(args.get("year") or int(ctx.now[:4]))
    balance = next((b for _, b in sorted(ctx.state.records("leave_balances").items())
                    if b.get("employee_id") == emp["employee_id"] and int(b.get("year", 0)) == year), None)
    if balance is None:
        raise ToolError("not_found", f"No {year} leave entitlement on file for {emp['name']}.")
    holidays = _holidays(ctx)
    today = ctx.now[:10]
    first, last = date(year, 1, 1), date(year, 12, 31)
    taken = booked = pending = 0
    for _, r in sorted(ctx.state.records("leave_requests").items()):
        if r.get("employee_id") != emp["employee_id"] or r.get("leave_type") != "annual":
            continue
        start = max(date.fromisoformat(str(r["start_date"])), first)
        end = min(date.fromisoformat(str(r["end_date"])), last)
        if end < start:
            continue
        days = _working_days(start, end, holidays)
        if r.get("status") == "pending":
            pending += days
        elif r.get("status") == "approved":
            if str(r["start_date"]) <= today:
                taken += days
            else:
                booked += days
    entitlement = float(balance["entitlement_days"])
    carried = float(balance.get("carried_over_days") or 0)
    remaining = entitlement + carried - taken - booked
    return {
        "employee_id": emp["employee_id"],
        "name": emp["name"],
        "year": year,
        "entitlement_days": entitlement,
        "carried_over_days": carried,
        "taken_days": taken,
        "booked_days": booked,
        "remaining_days": remaining,
        "pending_days": pending,
        "remaining_if_pending_approved": remaining - pending,
    }


@custom_tool("workforce_hr.check_leave_dates")
def check_leave_dates(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Working days of a proposed range, the bank holidays in it, the employee's own overlapping requests and the
    people in the same department already off (approved or pending) on any of those days."""
    emp = _employee(ctx, args["employee_id"])
    start, end = _range(args)
    holidays = _holidays(ctx)
    in_range = [{"date": d, "name": n} for d, n in sorted(holidays.items()) if start.isoformat() <= d <= end.isoformat()]
    team = {k for k, e in ctx.state.records("employees").items()
            if e.get("department_id") == emp.get("department_id") and k != emp["employee_id"]}
    off = []
    for _, r in sorted(ctx.state.records("leave_requests").items()):
        if r.get("employee_id") in team and r.get("status") in _LIVE \
                and str(r["start_date"]) <= end.isoformat() and str(r["end_date"]) >= start.isoformat():
            other = ctx.state.get("employees", r["employee_id"]) or {}
            off.append({"employee_id": r["employee_id"], "name": other.get("name"), "start_date": r["start_date"],
                        "end_date": r["end_date"], "status": r["status"]})
    return {
        "employee_id": emp["employee_id"],
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "working_days": _working_days(start, end, holidays),
        "bank_holidays": in_range,
        "own_overlapping_requests": _overlapping(ctx, emp["employee_id"], start, end),
        "teammates_off": off[:15],
    }


def _allowance(tax_code: str) -> float | None:
    """Annual tax-free allowance of a code like 1257L; None for BR (all at basic rate); 0 for 0T."""
    code = tax_code.strip().upper()
    if code == "BR":
        return None
    m = re.fullmatch(r"(\d+)[LMNT]", code)
    return float(m.group(1)) * 10 if m else 12570.0


@custom_tool("workforce_hr.get_payslip")
def get_payslip(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """One fortnightly payslip with PAYE, National Insurance, pension and student loan worked out from gross pay."""
    slip = ctx.record("payroll_records", args["payslip_id"], f"No payslip with payslip_id {args['payslip_id']!r}.")
    emp = ctx.state.get("employees", slip["employee_id"]) or {}
    gross = float(slip["gross_pay"])
    pension = round(gross * float(slip.get("pension_pct") or 0) / 100, 2)
    allowance = _allowance(str(slip.get("tax_code") or "1257L"))
    if allowance is None:
        tax = 0.2 * max(0.0, gross - pension)
    else:
        taxable = max(0.0, gross - pension - allowance / _PERIODS)
        basic, higher = _BASIC_BAND / _PERIODS, _HIGHER_LIMIT / _PERIODS
        tax = 0.2 * min(taxable, basic) + 0.4 * max(0.0, min(taxable, higher) - basic) \
            + 0.45 * max(0.0, taxable - higher)
    tax = round(tax, 2)
    ni = round(0.08 * max(0.0, min(gross, _NI_UEL) - _NI_PT) + 0.02 * max(0.0, gross - _NI_UEL), 2)
    plan = str(slip.get("student_loan_plan") or "none")
    loan = float(math.floor(0.09 * max(0.0, gross - _LOAN_THRESHOLDS[plan] / _PERIODS))) \
        if plan in _LOAN_THRESHOLDS else 0.0
    net = round(gross - pension - tax - ni - loan, 2)
    return {
        "payslip_id": slip["payslip_id"],
        "employee_id": slip["employee_id"],
        "name": emp.get("name"),
        "period_start": slip["period_start"],
        "period_end": slip["period_end"],
        "pay_date": slip["pay_date"],
        "tax_code": slip.get("tax_code") or "1257L",
        "gross_pay": round(gross, 2),
        "overtime_hours": slip.get("overtime_hours", 0),
        "deductions": {"pension": pension, "income_tax": tax, "national_insurance": ni, "student_loan": loan},
        "total_deductions": round(pension + tax + ni + loan, 2),
        "net_pay": net,
    }


@custom_tool("workforce_hr.check_shift_coverage")
def check_shift_coverage(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Shifts of a site starting on a day, flagging open ones and assignees on approved leave or double-booked."""
    day = args["date"]
    site = str(args["location"]).strip().casefold()
    shifts = sorted((s for _, s in ctx.state.records("shifts").items()
                     if str(s.get("location", "")).casefold() == site and str(s["start"])[:10] == day
                     and s.get("status") != "cancelled"), key=lambda s: (str(s["start"]), str(s["shift_id"])))
    all_shifts = [s for _, s in sorted(ctx.state.records("shifts").items()) if s.get("status") != "cancelled"]
    if not any(str(s.get("location", "")).casefold() == site for s in all_shifts):
        raise ToolError("not_found", f"No shifts are rostered at a site called {args['location']!r}.")
    rows = []
    for s in shifts:
        who = s.get("employee_id")
        problems = []
        if not who:
            problems.append("open")
        else:
            on_leave = [r["request_id"] for _, r in sorted(ctx.state.records("leave_requests").items())
                        if r.get("employee_id") == who and r.get("status") == "approved"
                        and str(r["start_date"]) <= day <= str(r["end_date"])]
            if on_leave:
                problems.append("on approved leave (" + ", ".join(on_leave) + ")")
            clash = [o["shift_id"] for o in all_shifts if o["shift_id"] != s["shift_id"] and o.get("employee_id") == who
                     and str(o["start"]) < str(s["end"]) and str(o["end"]) > str(s["start"])]
            if clash:
                problems.append("double-booked with " + ", ".join(clash))
        emp = ctx.state.get("employees", who) if who else None
        rows.append({"shift_id": s["shift_id"], "role": s["role"], "start": s["start"], "end": s["end"],
                     "employee_id": who, "name": emp.get("name") if emp else None, "problems": problems})
    return {"location": args["location"], "date": day, "shifts": rows,
            "open_shifts": sum(1 for r in rows if "open" in r["problems"]),
            "covered": all(not r["problems"] for r in rows)}


@custom_tool("workforce_hr.submit_leave_request")
def submit_leave_request(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Create a pending request with its working days; refuse one overlapping the employee's own live requests."""
    emp = _employee(ctx, args["employee_id"])
    if emp.get("status") not in ("active", "on_leave"):
        raise ToolError("conflict", f"{emp['name']} is {emp.get('status')}; leave cannot be requested.")
    start, end = _range(args)
    days = _working_days(start, end, _holidays(ctx))
    if days == 0:
        raise ToolError("invalid_request", "That range has no working days.")
    clash = _overlapping(ctx, emp["employee_id"], start, end)
    if clash:
        raise ToolError("conflict", f"Overlaps {clash[0]['request_id']} ({clash[0]['start_date']} to "
                                    f"{clash[0]['end_date']}, {clash[0]['status']}).")
    key = ctx.new_id("leave_requests")
    created = {"request_id": key, "employee_id": emp["employee_id"], "leave_type": args["leave_type"],
               "start_date": start.isoformat(), "end_date": end.isoformat(), "working_days": days,
               "status": "pending", "submitted_at": ctx.now, "note": args.get("note") or ""}
    ctx.state.put("leave_requests", key, created)
    return {"created": created}
