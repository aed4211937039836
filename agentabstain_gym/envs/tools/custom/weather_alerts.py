"""WeatherAlerts logic: daily forecasts and observed summaries computed from stored hourly data, and which alerts
cover a set of forecast zones.

The sandbox stores one block of 24 hourly values per station and day (temperature, dew point, precipitation,
wind, gusts): observed blocks before today, model blocks (a blended model run) from today. A daily summary is the
high and low temperature, the precipitation total and rainy hours, the peak heat index and its hour, the lowest
wind chill, and the strongest wind and gust. Relative humidity comes from temperature and dew point (Magnus
formula); the heat index is the NWS Rothfusz regression with its low-humidity and high-humidity adjustments (the
simple Steadman form below 80 degF); wind chill is the NWS 2001 formula (only at or below 50 degF with wind of at
least 3 mph). Alert coverage keeps the alerts of each zone that are in effect at the clock (or start within the
next hours asked for) and are not cancellations or tests.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_CATEGORIES = ((125.0, "extreme danger"), (103.0, "danger"), (90.0, "extreme caution"), (80.0, "caution"))


def relative_humidity(temp_f: float, dewpoint_f: float) -> float:
    """Relative humidity (%) from temperature and dew point (Magnus-Tetens, Alduchov-Eskridge constants)."""
    t, td = (temp_f - 32) / 1.8, (min(dewpoint_f, temp_f) - 32) / 1.8
    return 100.0 * math.exp(17.625 * td / (243.04 + td)) / math.exp(17.625 * t / (243.04 + t))


def heat_index(temp_f: float, rh: float) -> float:
    """NWS heat index (degF)."""
    simple = 0.5 * (temp_f + 61.0 + (temp_f - 68.0) * 1.2 + rh * 0.094)
    if (simple + temp_f) / 2 < 80:
        return simple
    t = temp_f
    hi = (-42.379 + 2.04901523 * t + 10.14333127 * rh - 0.22475541 * t * rh - 0.00683783 * t * t
          - 0.05481717 * rh * rh + 0.00122874 * t * t * rh + 0.00085282 * t * rh * rh - 0.00000199 * t * t * rh * rh)
    if rh < 13 and 80 <= t <= 112:
        hi -= ((13 - rh) / 4) * math.sqrt((17 - abs(t - 95)) / 17)
    elif rh > 85 and 80 <= t <= 87:
        hi += ((rh - 85) / 10) * ((87 - t) / 5)
    return hi


def wind_chill(temp_f: float, wind_mph: float) -> float | None:
    """NWS wind chill (degF), None outside its domain."""
    if temp_f > 50 or wind_mph < 3:
        return None
    v = wind_mph ** 0.16
    return 35.74 + 0.6215 * temp_f - 35.75 * v + 0.4275 * temp_f * v


def _category(hi: float) -> str:
    return next((name for floor, name in _CATEGORIES if hi >= floor), "none")


def summarise(block: dict[str, Any]) -> dict[str, Any]:
    """The daily summary of one 24-hour block."""
    temps = [float(v) for v in block["temp_f"]]
    dews = [float(v) for v in block["dewpoint_f"]]
    rain = [float(v) for v in block["precip_in"]]
    wind = [float(v) for v in block["wind_mph"]]
    gust = [float(v) for v in block.get("gust_mph") or wind]
    n = min(len(temps), len(dews), len(rain), len(wind), len(gust))
    if n == 0:
        raise ToolError("unavailable", f"Block {block.get('block_id')} has no hourly values.")
    his = [heat_index(temps[h], relative_humidity(temps[h], dews[h])) for h in range(n)]
    peak = max(range(n), key=lambda h: (his[h], -h))
    chills = [c for c in (wind_chill(temps[h], wind[h]) for h in range(n)) if c is not None]
    return {"date": block["date"], "source": block["source"], "high_f": round(max(temps[:n])),
            "low_f": round(min(temps[:n])), "precip_in": round(sum(rain[:n]), 2),
            "rain_hours": sum(1 for r in rain[:n] if r >= 0.01),
            "peak_heat_index_f": round(his[peak]), "peak_heat_index_hour": f"{peak:02d}:00",
            "heat_risk": _category(his[peak]),
            "min_wind_chill_f": round(min(chills)) if chills else None,
            "max_wind_mph": round(max(wind[:n])), "max_gust_mph": round(max(gust[:n])),
            "mean_dewpoint_f": round(sum(dews[:n]) / n, 1)}


def _station(ctx: Any, station_id: str) -> dict[str, Any]:
    station = ctx.state.get("wx_stations", station_id)
    if station is None:
        station = ctx.state.get("wx_stations", station_id.upper())
    if station is None:
        raise ToolError("not_found", f"No station with station_id {station_id!r}.")
    return station


def _blocks(ctx: Any, station_id: str, source: str) -> dict[str, dict[str, Any]]:
    return {b["date"]: b for _, b in sorted(ctx.state.records("wx_hourly").items())
            if b.get("station_id") == station_id and b.get("source") == source}


@custom_tool("weather_alerts.get_daily_forecast")
def get_daily_forecast(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Daily forecast summaries for a station from the latest model run, today onwards."""
    station = _station(ctx, args["station_id"])
    today = ctx.now[:10]
    first = args.get("date_from", today)
    if first < today:
        raise ToolError("invalid_request", f"{first} is in the past; use get_observed_summary for observed days.")
    days = int(args.get("days", 5))
    blocks = _blocks(ctx, station["station_id"], "model")
    start = date.fromisoformat(first)
    wanted = [(start + timedelta(days=i)).isoformat() for i in range(days)]
    out = [summarise(blocks[d]) for d in wanted if d in blocks]
    if not out:
        last = max(blocks) if blocks else "none"
        raise ToolError("not_found", f"No model data for {station['station_id']} from {first} (model data runs to {last}).")
    for day in out:
        day["weekday"] = date.fromisoformat(day["date"]).strftime("%A")
    runs = sorted({blocks[d].get("run", "") for d in wanted if d in blocks})
    return {"station_id": station["station_id"], "station": station["name"], "zone_id": station["zone_id"],
            "model_run": runs[-1] if runs else None, "days": out}


@custom_tool("weather_alerts.get_observed_summary")
def get_observed_summary(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """What a station observed on one past day."""
    station = _station(ctx, args["station_id"])
    day = args["date"]
    if day >= ctx.now[:10]:
        raise ToolError("invalid_request", f"{day} is not a completed day yet; use get_daily_forecast.")
    block = _blocks(ctx, station["station_id"], "observed").get(day)
    if block is None:
        raise ToolError("not_found", f"No observations from {station['station_id']} on {day}.")
    summary = summarise(block)
    summary["weekday"] = date.fromisoformat(day).strftime("%A")
    return {"station_id": station["station_id"], "station": station["name"], "zone_id": station["zone_id"],
            **summary}


def _in_effect(alert: dict[str, Any], now: str, until: str) -> bool:
    if alert.get("status", "actual") != "actual" or alert.get("message_type") == "cancel":
        return False
    onset = alert.get("onset") or alert.get("issued", "")
    return onset < until and alert.get("expires", "") > now and alert.get("issued", "") <= now


@custom_tool("weather_alerts.check_zone_alerts")
def check_zone_alerts(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Alerts in effect (or starting within ``hours_ahead``) for each zone, and whether all zones are clear."""
    now = ctx.now
    hours = int(args.get("hours_ahead", 0))
    until = (datetime.fromisoformat(now) + timedelta(hours=hours, minutes=1)).strftime("%Y-%m-%dT%H:%M")
    alerts = [a for _, a in sorted(ctx.state.records("wx_alerts").items()) if _in_effect(a, now, until)]
    zones = []
    for zone_id in dict.fromkeys(str(z).upper() for z in args["zone_ids"]):
        zone = ctx.record("wx_zones", zone_id, f"No forecast zone {zone_id!r}.")
        found = [{"alert_id": a["alert_id"], "event": a["event"], "severity": a.get("severity"),
                  "onset": a.get("onset"), "expires": a.get("expires"), "headline": a.get("headline", "")}
                 for a in alerts if zone_id in a.get("zones", [])]
        zones.append({"zone_id": zone_id, "name": zone["name"], "alerts": found})
    events = [a["event"] for z in zones for a in z["alerts"]]
    return {"checked_at": now, "window_hours": hours, "zones": zones,
            "warnings": sum(1 for e in events if e.endswith("Warning")),
            "watches": sum(1 for e in events if e.endswith("Watch")),
            "advisories_and_statements": sum(1 for e in events if not e.endswith(("Warning", "Watch"))),
            "clear": not events}
