"""AstrologyCharts logic: natal chart positions computed from a client's birth data, and saving a chart.

A simple periodic model, deterministic and good to about a degree for the Sun and Moon: days d since J2000.0 (UT);
the Sun from its mean longitude with the equation of centre; the Moon from its mean longitude with the largest
periodic term; the planets from circular heliocentric orbits (mean longitude at J2000 + mean motion x d, radius a)
seen from the Earth's circular orbit. The Ascendant and Midheaven come from local sidereal time, the birth latitude
and the obliquity of the ecliptic. Houses are whole-sign (default) or equal from the Ascendant.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

SIGNS = ("Aries", "Taurus", "Gemini", "Cancer", "Leo", "Virgo", "Libra", "Scorpio", "Sagittarius", "Capricorn",
         "Aquarius", "Pisces")
# mean longitude at J2000 (deg), mean motion (deg/day), orbit radius (AU)
_ORBITS = {
    "Mercury": (252.251, 4.0923344, 0.387),
    "Venus": (181.980, 1.6021302, 0.723),
    "Mars": (355.433, 0.5240208, 1.524),
    "Jupiter": (34.351, 0.0830853, 5.203),
    "Saturn": (50.077, 0.0334442, 9.537),
}
_EARTH = (100.464, 0.9856091, 1.0)
_J2000 = datetime(2000, 1, 1, 12, 0)
_OBLIQUITY = 23.4393


def _norm(deg: float) -> float:
    return deg % 360.0


def _sin(deg: float) -> float:
    return math.sin(math.radians(deg))


def _cos(deg: float) -> float:
    return math.cos(math.radians(deg))


def _position(lon: float) -> dict[str, Any]:
    lon = _norm(lon)
    within = lon % 30
    return {"longitude": round(lon, 2), "sign": SIGNS[int(lon // 30)],
            "degree": f"{int(within)}\u00b0{int(round((within % 1) * 60)) % 60:02d}'"}


def _helio(orbit: tuple[float, float, float], d: float) -> tuple[float, float]:
    l0, n, a = orbit
    lon = _norm(l0 + n * d)
    return a * _cos(lon), a * _sin(lon)


def positions(d: float) -> dict[str, float]:
    """Ecliptic longitudes (degrees) of the Sun, the Moon and the planets ``d`` days after J2000, by low-
    precision formulas.
    """
    g = _norm(357.529 + 0.98560028 * d)
    sun = 280.459 + 0.98564736 * d + 1.915 * _sin(g) + 0.020 * _sin(2 * g)
    moon = 218.316 + 13.176396 * d + 6.289 * _sin(134.963 + 13.064993 * d)
    ex, ey = _helio(_EARTH, d)
    out = {"Sun": _norm(sun), "Moon": _norm(moon)}
    for name, orbit in _ORBITS.items():
        x, y = _helio(orbit, d)
        out[name] = _norm(math.degrees(math.atan2(y - ey, x - ex)))
    return out


def angles(d: float, lat: float, lon_east: float) -> tuple[float, float]:
    """Ascendant and midheaven (degrees) for ``d`` days after J2000 at a latitude and east longitude."""
    ramc = _norm(280.46061837 + 360.98564736629 * d + lon_east)
    asc = math.degrees(math.atan2(-_cos(ramc), _sin(ramc) * _cos(_OBLIQUITY) + math.tan(math.radians(lat))
                                  * _sin(_OBLIQUITY))) + 180.0
    mc = math.degrees(math.atan2(_sin(ramc), _cos(ramc) * _cos(_OBLIQUITY)))
    return _norm(asc), _norm(mc)


def natal_chart(ctx: Any, client_id: str, house_system: str) -> dict[str, Any]:
    """The natal_chart tool: the bodies' signs (and, with a birth time, houses and angles) of a client's chart."""
    client = ctx.record("clients", client_id, f"No client with client_id {client_id!r}.")
    place = ctx.state.get("places", client.get("birth_place_id", ""))
    if place is None:
        raise ToolError("invalid_request", f"{client['name']} has no birth place on file; add one first.")
    time = client.get("birth_time")
    local = datetime.fromisoformat(f"{client['birth_date']}T{time or '12:00'}")
    ut = local - timedelta(hours=float(client.get("utc_offset", 0)))
    d = (ut - _J2000).total_seconds() / 86400.0
    bodies = {name: _position(lon) for name, lon in positions(d).items()}
    out: dict[str, Any] = {"client_id": client_id, "name": client["name"],
                           "born": f"{client['birth_date']} {time or 'time unknown'}, {place['name']}",
                           "universal_time": ut.strftime("%Y-%m-%dT%H:%M"), "house_system": house_system}
    if time:
        asc, mc = angles(d, float(place["lat"]), float(place["lon"]))
        out["ascendant"] = _position(asc)
        out["midheaven"] = _position(mc)
        for body in bodies.values():
            if house_system == "equal":
                body["house"] = int(_norm(body["longitude"] - asc) // 30) + 1
            else:
                body["house"] = (int(body["longitude"] // 30) - int(asc // 30)) % 12 + 1
    else:
        out["warning"] = "No birth time on file: a noon chart without Ascendant, Midheaven or houses."
    out["bodies"] = bodies
    return out


@custom_tool("astrology_charts.calculate_chart")
def calculate_chart(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Positions of the Sun, Moon and planets, Ascendant, Midheaven and houses for a client's birth data."""
    return natal_chart(ctx, args["client_id"], args.get("house_system", "whole_sign"))


@custom_tool("astrology_charts.save_chart")
def save_chart(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Compute a client's natal chart and store it, privately in the client file or in the public gallery."""
    chart = natal_chart(ctx, args["client_id"], args.get("house_system", "whole_sign"))
    chart_id = ctx.new_id("charts")
    record = {"chart_id": chart_id, "client_id": args["client_id"], "kind": "natal",
              "house_system": chart["house_system"], "visibility": args.get("visibility", "private"),
              "created_at": ctx.now, "sun_sign": chart["bodies"]["Sun"]["sign"],
              "moon_sign": chart["bodies"]["Moon"]["sign"]}
    if "ascendant" in chart:
        record["rising_sign"] = chart["ascendant"]["sign"]
    if args.get("title"):
        record["title"] = args["title"]
    ctx.state.put("charts", chart_id, record)
    return {"created": record}
