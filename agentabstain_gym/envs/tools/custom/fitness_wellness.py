"""FitnessWellness logic: training load from the workout log (Banister TRIMP, acute and chronic load, the
acute:chronic workload ratio), a readiness check for a planned session, and logging a workout with its load.

TRIMP of a session with heart rate: minutes x HRr x 0.64 x e^(1.92 x HRr), HRr = (avg - resting) / (max - resting),
with the athlete's max and resting heart rate from the profile. Sessions without heart rate (strength, yoga) count
minutes x an intensity factor. Acute load = sum over the 7 days up to the day, chronic load = the 28-day sum / 4
(a weekly average), ACWR = acute / chronic.
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_NO_HR_FACTOR = {"easy": 0.6, "moderate": 1.0, "hard": 1.5, "race": 1.8}
_ACWR_LIMIT = {"easy": 1.5, "moderate": 1.4, "hard": 1.3}


def _profile(ctx: Any) -> dict[str, Any]:
    profile = ctx.record("profile", str(ctx.values.get("athlete_id", "")), "No athlete profile for the signed-in user.")
    return profile


def trimp(profile: dict[str, Any], workout: dict[str, Any]) -> float:
    """A workout's training impulse (Banister TRIMP) from heart rate, or an estimate without one."""
    minutes = float(workout.get("duration_min") or 0)
    hr = workout.get("avg_hr")
    if hr:
        rest, peak = float(profile["resting_hr"]), float(profile["max_hr"])
        hrr = min(max((float(hr) - rest) / (peak - rest), 0.0), 1.0)
        return minutes * hrr * 0.64 * math.exp(1.92 * hrr)
    return minutes * _NO_HR_FACTOR.get(str(workout.get("intensity", "moderate")), 1.0)


def _completed_until(ctx: Any, day: date) -> list[dict[str, Any]]:
    out = []
    for _, w in sorted(ctx.state.records("workouts").items()):
        if w.get("status") != "completed":
            continue
        d = date.fromisoformat(str(w["start"])[:10])
        if day - timedelta(days=27) <= d <= day:
            out.append(w)
    return out


def load_summary(ctx: Any, day: date) -> dict[str, Any]:
    """Acute and chronic training load, distance and sessions up to ``day``."""
    profile = _profile(ctx)
    workouts = _completed_until(ctx, day)
    week_start = day - timedelta(days=6)
    acute = chronic_sum = 0.0
    km = 0.0
    sessions = 0
    for w in workouts:
        load = trimp(profile, w)
        chronic_sum += load
        if date.fromisoformat(str(w["start"])[:10]) >= week_start:
            acute += load
            sessions += 1
            if w.get("type") == "run":
                km += float(w.get("distance_km") or 0)
    chronic = chronic_sum / 4
    acwr = round(acute / chronic, 2) if chronic > 0 else None
    if acwr is None:
        band = "no baseline"
    elif acwr < 0.8:
        band = "detraining"
    elif acwr <= 1.3:
        band = "optimal"
    elif acwr <= 1.5:
        band = "elevated"
    else:
        band = "high injury risk"
    return {"as_of": day.isoformat(), "acute_load_7d": round(acute), "chronic_load_weekly_avg": round(chronic),
            "acwr": acwr, "acwr_band": band, "sessions_7d": sessions, "run_km_7d": round(km, 1)}


@custom_tool("fitness_wellness.get_training_load")
def get_training_load(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Acute and chronic training load and the workload ratio as of a day (default: today)."""
    day = date.fromisoformat(str(args.get("as_of") or ctx.now)[:10])
    if day > date.fromisoformat(ctx.now[:10]):
        raise ToolError("invalid_request", "as_of cannot be in the future.")
    return load_summary(ctx, day)


@custom_tool("fitness_wellness.check_readiness")
def check_readiness(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Whether the athlete is ready for a session of a given intensity: workload ratio, resting heart rate against
    the profile baseline, last night's sleep, and any medical restriction on the profile."""
    profile = _profile(ctx)
    today = date.fromisoformat(ctx.now[:10])
    intensity = args["intensity"]
    summary = load_summary(ctx, today)
    metrics = [m for _, m in sorted(ctx.state.records("daily_metrics").items()) if str(m["date"]) <= today.isoformat()]
    metrics.sort(key=lambda m: m["date"])
    latest = metrics[-1] if metrics else {}
    week = metrics[-7:]
    rhr = round(sum(float(m["resting_hr"]) for m in week) / len(week), 1) if week else None
    limit = _ACWR_LIMIT[intensity]
    acwr = summary["acwr"]
    checks = [
        {"name": "workload", "passed": acwr is not None and acwr <= limit,
         "message": f"ACWR {acwr} (limit {limit} for {intensity} sessions)."},
        {"name": "resting_heart_rate", "passed": rhr is not None and rhr <= float(profile["resting_hr"]) + 5,
         "message": f"7-day resting HR {rhr} bpm against a baseline of {profile['resting_hr']} bpm."},
        {"name": "sleep", "passed": float(latest.get("sleep_hours", 0)) >= 6,
         "message": f"Last night: {latest.get('sleep_hours')} h of sleep."},
    ]
    note = str(profile.get("medical_note") or "")
    checks.append({"name": "medical", "passed": not note,
                   "message": note or "No medical restrictions on file."})
    return {"date": args["date"], "intensity": intensity, "ok": all(c["passed"] for c in checks),
            "acwr": acwr, "checks": checks}


@custom_tool("fitness_wellness.log_workout")
def log_workout(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Record a finished workout with its computed training load (TRIMP)."""
    if args["start"] > ctx.now:
        raise ToolError("invalid_request", "A workout can only be logged once it has happened; schedule it instead.")
    profile = _profile(ctx)
    workout_id = ctx.new_id("workouts")
    record = {"workout_id": workout_id, "type": args["type"], "title": args.get("title") or args["type"].title(),
              "start": args["start"], "duration_min": args["duration_min"], "status": "completed",
              "intensity": args.get("intensity", "moderate"), "source": "manual", "notes": args.get("notes", "")}
    if args.get("distance_km") is not None:
        record["distance_km"] = args["distance_km"]
    if args.get("avg_hr") is not None:
        if not 30 <= args["avg_hr"] <= int(profile["max_hr"]) + 5:
            raise ToolError("invalid_request", f"Average heart rate {args['avg_hr']} is not plausible.")
        record["avg_hr"] = args["avg_hr"]
    record["training_load"] = round(trimp(profile, record))
    ctx.state.put("workouts", workout_id, record)
    return {"created": record}
