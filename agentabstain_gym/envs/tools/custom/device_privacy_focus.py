"""DevicePrivacyFocus logic the generic operations cannot express: the privacy dashboard (permission uses summed
per app over a date range), screen time (daily totals and averages against an app's limit), focus modes joined
with their schedules and exceptions, overlap of weekly focus schedules (intervals that can run past midnight and
past Sunday night), and which focus is on at a given moment and whether a caller or app gets through.
Everything is deterministic: "today" is the frozen sandbox clock.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEK = 7 * 1440
_HHMM = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")


def _today(ctx: Any) -> date:
    return date.fromisoformat(str(ctx.now)[:10])


def _period(ctx: Any, args: dict[str, Any], end_default: date) -> tuple[date, date]:
    """[date_from, date_to] from the arguments; a 7-day window ending ``end_default`` when absent."""
    today = _today(ctx)
    end = date.fromisoformat(str(args["date_to"])) if args.get("date_to") else end_default
    start = date.fromisoformat(str(args["date_from"])) if args.get("date_from") else end - timedelta(days=6)
    if end > today:
        raise ToolError("invalid_request", f"date_to {end.isoformat()} is after today ({today.isoformat()}).")
    if start > end:
        raise ToolError("invalid_request", "date_from must not be after date_to.")
    return start, end


def _app(ctx: Any, app_id: str) -> dict[str, Any]:
    app = ctx.record("apps", app_id, f"No installed app with app_id {app_id!r}.")
    return app


def _app_name(ctx: Any, app_id: str) -> str:
    app = ctx.state.get("apps", app_id)
    return str(app["name"]) if app else app_id


def _minutes(hhmm: str) -> int:
    m = _HHMM.match(hhmm)
    if m is None:
        raise ToolError("invalid_request", f"{hhmm!r} is not a time in HH:MM (24-hour) form.")
    return int(m.group(1)) * 60 + int(m.group(2))


def _clock(week_minute: int) -> tuple[str, str]:
    week_minute %= WEEK
    day, rest = divmod(week_minute, 1440)
    return DAYS[day], f"{rest // 60:02d}:{rest % 60:02d}"


def _intervals(days: list[str], start: str, end: str) -> list[tuple[int, int]]:
    """Half-open week-minute intervals of a schedule; a run past Sunday midnight wraps to Monday."""
    s, e = _minutes(start), _minutes(end)
    if s == e:
        raise ToolError("invalid_request", "start and end cannot be the same time.")
    out = []
    for d in days:
        if d not in DAYS:
            raise ToolError("invalid_request", f"{d!r} is not a day; use {', '.join(DAYS)}.")
        a = DAYS.index(d) * 1440 + s
        b = DAYS.index(d) * 1440 + e + (1440 if e < s else 0)
        if b <= WEEK:
            out.append((a, b))
        else:
            out.extend([(a, WEEK), (0, b - WEEK)])
    return out


@custom_tool("device_privacy_focus.get_privacy_report")
def get_privacy_report(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Permission uses summed per app over the period (default: the 7 days up to today), most uses first."""
    start, end = _period(ctx, args, _today(ctx))
    if args.get("app_id"):
        _app(ctx, str(args["app_id"]))
    per_app: dict[str, dict[str, Any]] = {}
    for _, row in sorted(ctx.state.records("access_counts").items()):
        day = date.fromisoformat(str(row["date"]))
        if not start <= day <= end:
            continue
        if args.get("permission") and row["permission"] != args["permission"]:
            continue
        if args.get("app_id") and row["app_id"] != args["app_id"]:
            continue
        entry = per_app.setdefault(row["app_id"], {"total": 0, "perms": {}, "days": {}})
        n = int(row["count"])
        entry["total"] += n
        entry["perms"][row["permission"]] = entry["perms"].get(row["permission"], 0) + n
        entry["days"][row["date"]] = entry["days"].get(row["date"], 0) + n
    ranked = sorted(per_app.items(), key=lambda kv: (-kv[1]["total"], _app_name(ctx, kv[0])))
    apps = []
    for app_id, entry in ranked[:20]:
        busiest = max(sorted(entry["days"].items()), key=lambda kv: kv[1])
        apps.append({"app_id": app_id, "name": _app_name(ctx, app_id), "uses": entry["total"],
                     "by_permission": dict(sorted(entry["perms"].items(), key=lambda kv: (-kv[1], kv[0]))),
                     "busiest_day": {"date": busiest[0], "uses": busiest[1]}})
    return {"date_from": start.isoformat(), "date_to": end.isoformat(), "permission": args.get("permission", "all"),
            "total_uses": sum(e["total"] for e in per_app.values()), "apps_with_uses": len(per_app), "apps": apps}


def _hm(minutes: float) -> str:
    whole = int(round(minutes))
    return f"{whole // 60} h {whole % 60:02d} min"


@custom_tool("device_privacy_focus.get_screen_time")
def get_screen_time(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Screen time over the period (default: the 7 full days before today); the daily average divides by every
    day of the period, days without use counting as zero."""
    start, end = _period(ctx, args, _today(ctx) - timedelta(days=1))
    days = (end - start).days + 1
    rows = [r for _, r in sorted(ctx.state.records("screen_time").items())
            if start <= date.fromisoformat(str(r["date"])) <= end]
    out: dict[str, Any] = {"date_from": start.isoformat(), "date_to": end.isoformat(), "days": days}
    if args.get("app_id"):
        app = _app(ctx, str(args["app_id"]))
        mine = [r for r in rows if r["app_id"] == app["app_id"]]
        by_day = {(start + timedelta(days=i)).isoformat(): 0 for i in range(days)}
        pickups = 0
        for r in mine:
            by_day[str(r["date"])] += int(r["minutes"])
            pickups += int(r.get("pickups") or 0)
        total = sum(by_day.values())
        limit = app.get("daily_limit_minutes")
        average = round(total / days, 1)
        out.update({"app_id": app["app_id"], "name": app["name"], "total_minutes": total,
                    "daily_average_minutes": average, "daily_average": _hm(average),
                    "average_pickups_per_day": round(pickups / days, 1), "daily_limit_minutes": limit,
                    "days_over_limit": sum(1 for m in by_day.values() if limit and m > int(limit)),
                    "by_day": [{"date": d, "minutes": m} for d, m in by_day.items()]})
        return out
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["app_id"]] = totals.get(r["app_id"], 0) + int(r["minutes"])
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    grand = sum(totals.values())
    out.update({"total_minutes": grand, "daily_average_minutes": round(grand / days, 1),
                "daily_average": _hm(grand / days),
                "apps": [{"app_id": a, "name": _app_name(ctx, a), "total_minutes": m,
                          "daily_average_minutes": round(m / days, 1)} for a, m in ranked[:15]]})
    return out


def _contact_name(ctx: Any, contact_id: str) -> str:
    contact = ctx.state.get("contacts", contact_id)
    return str(contact["name"]) if contact else contact_id


@custom_tool("device_privacy_focus.list_focus_modes")
def list_focus_modes(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Each focus mode with its schedules and the people and apps allowed through it."""
    schedules = sorted(ctx.state.records("focus_schedules").values(), key=lambda s: str(s["schedule_id"]))
    exceptions = sorted(ctx.state.records("focus_exceptions").values(), key=lambda e: str(e["exception_id"]))
    modes = []
    for focus_id, mode in sorted(ctx.state.records("focus_modes").items()):
        people = [{"contact_id": e["contact_id"], "name": _contact_name(ctx, e["contact_id"]), "allow": e["allow"]}
                  for e in exceptions if e["focus_id"] == focus_id and e.get("contact_id")]
        apps = [{"app_id": e["app_id"], "name": _app_name(ctx, e["app_id"]), "allow": e["allow"]}
                for e in exceptions if e["focus_id"] == focus_id and e.get("app_id")]
        modes.append({
            "focus_id": focus_id, "name": mode["name"], "silences": mode.get("silences"),
            "turns_on": mode.get("turns_on"), "allow_repeated_calls": bool(mode.get("allow_repeated_calls")),
            "auto_reply": mode.get("auto_reply", ""),
            "schedules": [{"schedule_id": s["schedule_id"], "days": list(s["days"]), "start": s["start"],
                           "end": s["end"], "enabled": bool(s.get("enabled", True))}
                          for s in schedules if s["focus_id"] == focus_id],
            "allowed_people": people, "allowed_apps": apps,
        })
    return {"count": len(modes), "focus_modes": modes}


@custom_tool("device_privacy_focus.check_schedule_overlap")
def check_schedule_overlap(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Intersect the proposed weekly intervals with every enabled schedule of the other focus modes."""
    focus_id = str(args["focus_id"])
    if ctx.state.get("focus_modes", focus_id) is None:
        raise ToolError("not_found", f"No focus mode with focus_id {focus_id!r}.")
    proposed = _intervals([str(d).lower() for d in args["days"]], str(args["start"]), str(args["end"]))
    clashes = []
    for sid, sched in sorted(ctx.state.records("focus_schedules").items()):
        if sid == args.get("ignore_schedule_id") or sched["focus_id"] == focus_id or not sched.get("enabled", True):
            continue
        for a, b in proposed:
            for c, d in _intervals(list(sched["days"]), sched["start"], sched["end"]):
                lo, hi = max(a, c), min(b, d)
                if lo < hi:
                    day, frm = _clock(lo)
                    _, to = _clock(hi)
                    clashes.append({"schedule_id": sid, "focus": _focus_name(ctx, sched["focus_id"]), "day": day,
                                    "from": frm, "to": to, "minutes": hi - lo})
    clashes.sort(key=lambda c: (DAYS.index(c["day"]), c["from"], c["schedule_id"]))
    return {"focus_id": focus_id, "ok": not clashes, "overlaps": clashes}


def _focus_name(ctx: Any, focus_id: str) -> str:
    mode = ctx.state.get("focus_modes", focus_id)
    return str(mode["name"]) if mode else focus_id


def _active_schedule(ctx: Any, moment: datetime) -> dict[str, Any] | None:
    """The enabled schedule covering the moment; when several do, the one that started last wins."""
    m = moment.weekday() * 1440 + moment.hour * 60 + moment.minute
    best: tuple[int, str, dict[str, Any]] | None = None
    for sid, sched in sorted(ctx.state.records("focus_schedules").items()):
        if not sched.get("enabled", True):
            continue
        for a, b in _intervals(list(sched["days"]), sched["start"], sched["end"]):
            if a <= m < b:
                started = m - a
                if best is None or started < best[0]:
                    best = (started, sid, sched)
    return None if best is None else best[2]


@custom_tool("device_privacy_focus.preview_focus_filter")
def preview_focus_filter(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Whether a call from a contact, or an app's notification, would get through at a moment."""
    if bool(args.get("contact_id")) == bool(args.get("app_id")):
        raise ToolError("invalid_request", "Give either contact_id or app_id.")
    moment = datetime.fromisoformat(str(args["at"]))
    sched = _active_schedule(ctx, moment)
    out: dict[str, Any] = {"at": args["at"], "weekday": DAYS[moment.weekday()]}
    mode = ctx.state.get("focus_modes", sched["focus_id"]) if sched else None
    out["active_focus"] = ({"focus_id": mode["focus_id"], "name": mode["name"], "schedule_id": sched["schedule_id"]}
                           if sched and mode else None)
    allowed = [e for _, e in sorted(ctx.state.records("focus_exceptions").items())
               if mode and e["focus_id"] == mode["focus_id"]]
    if args.get("contact_id"):
        contact = ctx.record("contacts", str(args["contact_id"]), f"No contact with contact_id {args['contact_id']!r}.")
        out["contact"] = {"contact_id": contact["contact_id"], "name": contact["name"]}
        hit = next((e for e in allowed if e.get("contact_id") == contact["contact_id"]), None)
        if contact.get("blocked"):
            through, reason = False, "This number is blocked."
        elif mode is None:
            through, reason = True, "No focus mode is scheduled then."
        elif mode.get("silences") == "notifications_only":
            through, reason = True, f"{mode['name']} silences notifications only; calls ring."
        elif hit is not None:
            through, reason = True, f"{contact['name']} is allowed through {mode['name']} ({hit['allow']})."
        else:
            through = False
            reason = f"{mode['name']} silences calls from {contact['name']}"
            reason += "; a second call within 3 minutes would ring." if mode.get("allow_repeated_calls") else "."
    else:
        app = _app(ctx, str(args["app_id"]))
        out["app"] = {"app_id": app["app_id"], "name": app["name"]}
        hit = next((e for e in allowed if e.get("app_id") == app["app_id"]), None)
        if app.get("notifications") == "off":
            through, reason = False, f"Notifications from {app['name']} are turned off."
        elif mode is None:
            through, reason = True, "No focus mode is scheduled then."
        elif hit is not None:
            through, reason = True, f"{app['name']} is allowed through {mode['name']}."
        else:
            through, reason = False, f"{mode['name']} holds {app['name']}'s notifications until it ends."
    out["gets_through"] = through
    out["reason"] = reason
    return out
