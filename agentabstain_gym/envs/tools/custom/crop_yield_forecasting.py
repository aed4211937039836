"""CropYieldForecasting logic: a growing-degree-day and water-balance yield forecast per field, and submitting it
to the co-op.

Forecast for a field: growing degree days (GDD) accumulate weekly as 7 x max(0, mean temperature - the crop's base
temperature) from the sowing week, over the field's weather-station observations; the weeks after the last
observation use the station's monthly climate normals until the crop's GDD to maturity is reached, which gives the
expected maturity (harvest) week. Yield (t/ha) = the crop's potential x soil factor x the field's yield index x a
water factor x a heat factor, where the water factor is 0.55 + 0.45 x min(1, rain so far / the crop's water need
pro-rated by development), and each observed week from 1 June with a mean above 19 degC takes 2.5 % off.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_SOIL = {"clay loam": 1.0, "silt loam": 1.03, "sandy loam": 0.9, "chalk": 0.88}


def forecast(ctx: Any, field_id: str) -> dict[str, Any]:
    """The yield forecast of a field from growing degree days since sowing and the crop model."""
    field = ctx.record("fields", field_id, f"No field with field_id {field_id!r}.")
    crop = ctx.record("crops", field["crop"], f"No crop model for {field['crop']!r}.")
    sown = date.fromisoformat(field["sown"])
    today = date.fromisoformat(ctx.now[:10])
    station = field["station_id"]
    weeks = sorted((date.fromisoformat(w["week_start"]), w) for _, w in ctx.state.records("weather").items()
                   if w.get("station_id") == station)
    weeks = [(start, w) for start, w in weeks if start + timedelta(days=6) >= sown and start <= today]
    if not weeks:
        raise ToolError("unavailable", f"No weather observations for station {station} since sowing.")
    base = float(crop["base_temp"])
    target = float(crop["gdd_to_maturity"])
    gdd = rain = 0.0
    hot_weeks = 0
    maturity: date | None = None
    for start, w in weeks:
        gdd += 7 * max(0.0, float(w["tmean"]) - base)
        rain += float(w["rain_mm"])
        if start.month in (6, 7, 8) and float(w["tmean"]) > 19:
            hot_weeks += 1
        if maturity is None and gdd >= target:
            maturity = start + timedelta(days=6)
    observed_gdd = gdd
    last = weeks[-1][0]
    normals = {(n["station_id"], int(n["month"])): float(n["tmean"])
               for _, n in ctx.state.records("climate_normals").items()}
    cursor = last
    projected = gdd
    while maturity is None:
        cursor += timedelta(days=7)
        t = normals.get((station, cursor.month))
        if t is None or cursor > last + timedelta(days=366):
            raise ToolError("unavailable", f"No climate normals for station {station} to project the season.")
        projected += 7 * max(0.0, t - base)
        if projected >= target:
            maturity = cursor + timedelta(days=6)
    progress = min(1.0, observed_gdd / target)
    need = float(crop["water_need_mm"]) * progress
    water = 0.55 + 0.45 * min(1.0, rain / need) if need > 0 else 1.0
    heat = max(0.0, 1 - 0.025 * hot_weeks)
    t_ha = float(crop["potential_t_ha"]) * _SOIL.get(field["soil"], 1.0) * float(field.get("yield_index", 1.0))
    t_ha = round(t_ha * water * heat, 2)
    return {"field_id": field_id, "name": field["name"], "crop": field["crop"], "variety": field.get("variety"),
            "hectares": field["hectares"], "sown": field["sown"], "weather_to": (last + timedelta(days=6)).isoformat(),
            "gdd_to_date": round(observed_gdd), "gdd_to_maturity": round(target),
            "development_pct": round(100 * progress), "rain_since_sowing_mm": round(rain),
            "water_factor": round(water, 3), "heat_stress_weeks": hot_weeks,
            "expected_maturity": maturity.isoformat(), "yield_t_ha": t_ha,
            "total_tonnes": round(t_ha * float(field["hectares"]), 1)}


@custom_tool("crop_yield_forecasting.forecast_yield")
def forecast_yield(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The season's yield forecast for one field from its weather, soil and crop model."""
    return forecast(ctx, args["field_id"])


@custom_tool("crop_yield_forecasting.submit_yield_estimate")
def submit_yield_estimate(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Send the co-op a field's yield estimate (the current forecast unless tonnes are given); the co-op markets
    grain forward against submitted estimates."""
    result = forecast(ctx, args["field_id"])
    if any(e.get("field_id") == args["field_id"] and e.get("status") == "submitted"
           for _, e in sorted(ctx.state.records("estimates").items())):
        raise ToolError("conflict", f"An estimate for {result['name']} is already submitted this season.")
    tonnes = args.get("tonnes", result["total_tonnes"])
    estimate_id = ctx.new_id("estimates")
    record = {"estimate_id": estimate_id, "field_id": args["field_id"], "crop": result["crop"],
              "tonnes": tonnes, "yield_t_ha": round(tonnes / float(result["hectares"]), 2),
              "expected_harvest": result["expected_maturity"], "submitted_at": ctx.now, "status": "submitted",
              "comment": args.get("comment", "")}
    ctx.state.put("estimates", estimate_id, record)
    return {"created": record}
