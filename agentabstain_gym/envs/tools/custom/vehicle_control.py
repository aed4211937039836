"""VehicleControl logic the generic operations cannot express: figures computed from the records.

- Range: usable battery energy (battery_pct x battery_kwh) times the car's recent efficiency, which is the
  distance-weighted efficiency of its trips over the 30 days before now (total miles / total kWh, where a trip's
  kWh is its distance / its mi/kWh), falling back to the rated efficiency when it has no recent trips; a plug-in
  hybrid adds fuel range (fuel_pct x tank x mpg).
- Trip summaries: trips, miles, kWh, efficiency and cost at the home electricity rate over a date range.
- Charging sessions: cost (energy x price + idle fee), duration and average power per session.
- Service bookings: opening hours per weekday, the service being offered and slots already full.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_FMT = "%Y-%m-%dT%H:%M"
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_SERVICE_MINUTES = {"brake_inspection": 60, "tire_rotation": 45, "battery_check": 30, "software_update": 30,
                    "general_service": 120, "collision_repair": 240}
_STATUS_FIELDS = ("vehicle_id", "nickname", "model", "powertrain", "battery_pct", "charge_limit_pct",
                  "charging_state", "fuel_pct", "locked", "doors_open", "windows_open", "trunk_open", "climate_on",
                  "cabin_temp_f", "climate_target_f", "odometer_mi", "location_label", "location_address",
                  "parked_since", "last_driver", "active_profile_id", "valet_mode", "connectivity",
                  "software_version", "advisory")


def _vehicle(ctx: Any, vehicle_id: str) -> dict[str, Any]:
    vehicle = ctx.record("vehicles", vehicle_id, f"No vehicle with vehicle_id {vehicle_id!r}.")
    return vehicle


def _trips(ctx: Any, vehicle_id: str, first: str, last: str) -> list[dict[str, Any]]:
    """Trips of a car starting between two datetimes (inclusive, as text), oldest first."""
    return sorted((t for _, t in sorted(ctx.state.records("trips").items())
                   if t.get("vehicle_id") == vehicle_id and first <= str(t.get("start", "")) <= last),
                  key=lambda t: (t["start"], t["trip_id"]))


def _kwh(trip: dict[str, Any]) -> float:
    return float(trip["distance_mi"]) / float(trip["efficiency_mi_kwh"])


def recent_efficiency(ctx: Any, vehicle: dict[str, Any]) -> tuple[float, int]:
    """Distance-weighted mi/kWh over the 30 days before now, and how many trips it rests on."""
    now = datetime.strptime(ctx.now, _FMT)
    trips = _trips(ctx, vehicle["vehicle_id"], (now - timedelta(days=30)).strftime(_FMT), ctx.now)
    energy = sum(_kwh(t) for t in trips)
    if not trips or energy <= 0:
        return float(vehicle["rated_efficiency_mi_kwh"]), 0
    return sum(float(t["distance_mi"]) for t in trips) / energy, len(trips)


def ranges(ctx: Any, vehicle: dict[str, Any]) -> dict[str, Any]:
    """Electric and total range of a vehicle from its charge, fuel and recent efficiency."""
    efficiency, based_on = recent_efficiency(ctx, vehicle)
    usable = float(vehicle["battery_kwh"]) * int(vehicle["battery_pct"]) / 100
    electric = usable * efficiency
    out: dict[str, Any] = {"efficiency_mi_kwh": round(efficiency, 2), "efficiency_trips": based_on,
                           "electric_range_mi": round(electric)}
    fuel = 0.0
    if vehicle.get("powertrain") == "phev":
        fuel = float(vehicle.get("tank_gal", 0)) * int(vehicle.get("fuel_pct", 0)) / 100 * float(vehicle.get("mpg", 0))
        out["fuel_range_mi"] = round(fuel)
    out["total_range_mi"] = round(electric + fuel)
    return out


@custom_tool("vehicle_control.get_vehicle_status")
def get_vehicle_status(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The car's reported state plus ranges estimated from its recent driving."""
    vehicle = _vehicle(ctx, args["vehicle_id"])
    out = {f: vehicle[f] for f in _STATUS_FIELDS if f in vehicle}
    out["range"] = ranges(ctx, vehicle)
    out["as_of"] = ctx.now
    return out


@custom_tool("vehicle_control.summarize_trips")
def summarize_trips(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Trip totals over [date_from, date_to] for one car."""
    vehicle = _vehicle(ctx, args["vehicle_id"])
    first, last = args["date_from"], args["date_to"]
    if last < first:
        raise ToolError("invalid_request", "date_to must not be before date_from.")
    trips = _trips(ctx, vehicle["vehicle_id"], f"{first}T00:00", f"{last}T23:59")
    miles = sum(float(t["distance_mi"]) for t in trips)
    energy = sum(_kwh(t) for t in trips)
    rate = float(ctx.values.get("home_rate_per_kwh", 0.13))
    per_day: dict[str, float] = {}
    day = date.fromisoformat(first)
    while day <= date.fromisoformat(last) and len(per_day) < 92:
        per_day[day.isoformat()] = 0.0
        day += timedelta(days=1)
    for t in trips:
        key = t["start"][:10]
        if key in per_day:
            per_day[key] += float(t["distance_mi"])
    longest = max(trips, key=lambda t: float(t["distance_mi"]), default=None)
    return {"vehicle_id": vehicle["vehicle_id"], "nickname": vehicle["nickname"], "date_from": first,
            "date_to": last, "trips": len(trips), "total_miles": round(miles, 1), "energy_kwh": round(energy, 1),
            "efficiency_mi_kwh": round(miles / energy, 2) if energy else None,
            "energy_cost_at_home_rate_usd": round(energy * rate, 2),
            "longest_trip": ({"trip_id": longest["trip_id"], "start": longest["start"],
                              "destination": longest["destination"], "distance_mi": longest["distance_mi"]}
                             if longest else None),
            "miles_per_day": [{"date": d, "miles": round(m, 1)} for d, m in per_day.items()]}


@custom_tool("vehicle_control.list_charging_sessions")
def list_charging_sessions(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Charging sessions of a car, newest first, with cost, duration and average power."""
    vehicle = _vehicle(ctx, args["vehicle_id"])
    first, last = args.get("date_from", "0000-01-01"), args.get("date_to", "9999-12-31")
    rows = []
    for _, s in sorted(ctx.state.records("charging_sessions").items()):
        if s.get("vehicle_id") != vehicle["vehicle_id"] or not first <= str(s["start"])[:10] <= last:
            continue
        minutes = (datetime.strptime(s["end"], _FMT) - datetime.strptime(s["start"], _FMT)).total_seconds() / 60
        energy = float(s["energy_kwh"])
        cost = energy * float(s["price_per_kwh"]) + float(s.get("idle_fee", 0))
        rows.append({"session_id": s["session_id"], "station": s["station"], "charger_type": s["charger_type"],
                     "start": s["start"], "end": s["end"], "duration_min": round(minutes),
                     "energy_kwh": energy, "price_per_kwh": s["price_per_kwh"],
                     "idle_fee": s.get("idle_fee", 0), "cost_usd": round(cost, 2),
                     "avg_power_kw": round(energy / (minutes / 60), 1) if minutes > 0 else None,
                     "start_pct": s.get("start_pct"), "end_pct": s.get("end_pct")})
    rows.sort(key=lambda r: (r["start"], r["session_id"]), reverse=True)
    return {"vehicle_id": vehicle["vehicle_id"], "count": len(rows),
            "total_energy_kwh": round(sum(r["energy_kwh"] for r in rows), 1),
            "total_cost_usd": round(sum(r["cost_usd"] for r in rows), 2), "sessions": rows[:40]}


@custom_tool("vehicle_control.check_trip_range")
def check_trip_range(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Can the car cover the drive keeping a 10 % battery reserve (plus fuel for a hybrid)?"""
    vehicle = _vehicle(ctx, args["vehicle_id"])
    distance = float(args["distance_mi"]) * (2 if args.get("round_trip") else 1)
    r = ranges(ctx, vehicle)
    efficiency = r["efficiency_mi_kwh"]
    capacity = float(vehicle["battery_kwh"])
    reserve_kwh = capacity * 0.10
    usable_kwh = capacity * int(vehicle["battery_pct"]) / 100 - reserve_kwh
    electric_ok_mi = max(0.0, usable_kwh * efficiency)
    fuel_mi = float(r.get("fuel_range_mi", 0))
    enough = electric_ok_mi + fuel_mi >= distance
    need_kwh = max(0.0, distance / efficiency - usable_kwh) if vehicle.get("powertrain") == "ev" else 0.0
    arrive_pct = (usable_kwh + reserve_kwh - min(distance, electric_ok_mi) / efficiency) / capacity * 100
    return {"vehicle_id": vehicle["vehicle_id"], "distance_mi": round(distance, 1), "enough": enough,
            "range_with_reserve_mi": round(electric_ok_mi + fuel_mi), "efficiency_mi_kwh": efficiency,
            "arrival_battery_pct": round(arrive_pct), "charge_needed_kwh": round(need_kwh, 1),
            "home_charging_minutes_needed": round(need_kwh / 11.0 * 60) if need_kwh else 0}


def _availability(ctx: Any, args: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    center = ctx.record("service_centers", args["center_id"], f"No service centre with center_id {args['center_id']!r}.")
    start = datetime.strptime(args["start"], _FMT)
    end = start + timedelta(minutes=_SERVICE_MINUTES[args["service"]])
    problems = []
    if args["start"] <= ctx.now:
        problems.append("The drop-off time is in the past.")
    if args["service"] not in center.get("services", []):
        problems.append(f"{center['name']} does not offer {args['service'].replace('_', ' ')}.")
    hours = str(center.get("hours", {}).get(_DAYS[start.weekday()], "closed"))
    if hours == "closed":
        problems.append(f"{center['name']} is closed on {start.strftime('%A')}s.")
    else:
        opens, closes = hours.split("-")
        if start.strftime("%H:%M") < opens or end.strftime("%H:%M") > closes:
            problems.append(f"{center['name']} is open {hours} that day; the visit would run to {end:%H:%M}.")
    if args["start"] in center.get("full_slots", []):
        problems.append(f"{center['name']} has no free bay at {args['start']}.")
    return center, problems, end.strftime(_FMT)


@custom_tool("vehicle_control.check_service_availability")
def check_service_availability(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Whether the centre can take the service at that time, and why not otherwise."""
    center, problems, end = _availability(ctx, args)
    return {"center_id": center["center_id"], "name": center["name"], "service": args["service"],
            "start": args["start"], "end": end, "available": not problems, "problems": problems}


@custom_tool("vehicle_control.book_service_appointment")
def book_service_appointment(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Book the visit if the centre can take it."""
    vehicle = _vehicle(ctx, args["vehicle_id"])
    center, problems, end = _availability(ctx, args)
    if problems:
        raise ToolError("conflict", " ".join(problems))
    for _, a in sorted(ctx.state.records("service_appointments").items()):
        if a.get("vehicle_id") == vehicle["vehicle_id"] and a.get("status") == "booked" \
                and a["start"] < end and a["end"] > args["start"]:
            raise ToolError("conflict", f"{vehicle['nickname']} is already booked in at that time "
                                        f"({a['appointment_id']}).")
    appointment_id = ctx.new_id("service_appointments")
    record = {"appointment_id": appointment_id, "vehicle_id": vehicle["vehicle_id"],
              "center_id": center["center_id"], "service": args["service"], "start": args["start"], "end": end,
              "status": "booked", "notes": args.get("notes", "")}
    ctx.state.put("service_appointments", appointment_id, record)
    return {"created": record}
