"""Flight & Travel logic the generic operations cannot express: pricing and booking itineraries (seats come off each
flight), moving a booking to another flight, and quoting what a cancellation gives back."""

from __future__ import annotations

import datetime as dt
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_FARE_FACTOR = {"basic": 0.8, "main": 1.0, "flexible": 1.35}


def _flight(ctx: Any, flight_id: str) -> dict[str, Any]:
    flight = ctx.record("flights", flight_id, f"No flight with flight_id {flight_id!r}.")
    return flight


def _bookable(ctx: Any, flight: dict[str, Any], cabin: str, travellers: int) -> None:
    if flight.get("status") == "cancelled":
        raise ToolError("conflict", f"{flight['flight_number']} on {flight['depart'][:10]} is cancelled.")
    if str(flight["depart"]) <= str(ctx.now):
        raise ToolError("conflict", f"{flight['flight_number']} on {flight['depart'][:10]} has already left.")
    left = int(flight.get(f"seats_{cabin}", 0))
    if left < travellers:
        raise ToolError("conflict", f"{flight['flight_number']} on {flight['depart'][:10]} has {left} {cabin} "
                                    f"seat(s) left; {travellers} needed.")


def _booking(ctx: Any, ref: str) -> dict[str, Any]:
    booking = ctx.record("bookings", ref, f"No booking with confirmation code {ref!r}.")
    return booking


def _minus_hours(moment: str, hours: int) -> str:
    return (dt.datetime.fromisoformat(moment) - dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M")


def _seat_change(ctx: Any, flight: dict[str, Any], cabin: str, delta: int) -> None:
    field = f"seats_{cabin}"
    ctx.state.put("flights", flight["flight_id"], {**flight, field: int(flight.get(field, 0)) + delta})


@custom_tool("flight_travel.book_flight")
def book_flight(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Book connected flights for travellers: checks seats and connections, prices the fare, takes the seats."""
    cabin = args.get("cabin") or "economy"
    fare_type = args.get("fare_type") or "main"
    travellers = list(dict.fromkeys(args.get("traveler_ids") or [ctx.values.get("traveler_id")]))
    for tid in travellers:
        if ctx.state.get("travelers", tid) is None:
            raise ToolError("not_found", f"No traveller with traveler_id {tid!r} on this account.")
    if not args["flight_ids"]:
        raise ToolError("invalid_request", "Give at least one flight.")
    flights = [_flight(ctx, fid) for fid in args["flight_ids"]]
    if len({f["flight_id"] for f in flights}) != len(flights):
        raise ToolError("invalid_request", "The same flight is listed twice.")
    for flight in flights:
        _bookable(ctx, flight, cabin, len(travellers))
    for before, after in zip(flights, flights[1:], strict=False):
        if before["destination"] != after["origin"] or after["depart"] <= before["arrive"]:
            raise ToolError("invalid_request", f"{after['flight_number']} does not continue from "
                                               f"{before['flight_number']} (it must leave {before['destination']} "
                                               "after that flight lands).")
    fare_field = f"fare_{cabin}"
    if any(f.get(fare_field) is None for f in flights):
        raise ToolError("conflict", f"One of these flights has no {cabin} cabin.")
    per_person = sum(float(f[fare_field]) for f in flights) * _FARE_FACTOR[fare_type]
    total = round(per_person * len(travellers), 2)
    countries = set()
    for f in flights:
        for code in (f["origin"], f["destination"]):
            airport = ctx.state.get("airports", code)
            countries.add(airport.get("country") if airport else code)
    first, last = flights[0], flights[-1]
    ref = ctx.new_id("bookings")
    booking = {
        "booking_ref": ref, "status": "confirmed", "traveler_ids": travellers,
        "flight_ids": [f["flight_id"] for f in flights], "origin": first["origin"],
        "destination": first["destination"] if len(flights) == 1 or last["destination"] == first["origin"]
        else last["destination"],
        "depart": first["depart"],
    }
    if len(flights) > 1 and last["destination"] == first["origin"]:
        booking["return_depart"] = last["depart"]
    booking.update({
        "international": len(countries) > 1, "cabin": cabin, "fare_type": fare_type,
        "refundable": fare_type == "flexible", "fare_total": total, "seats": [],
        "baggage": "Carry-on only" if fare_type == "basic" else "1 checked bag",
        "check_in_opens": _minus_hours(first["depart"], 24), "booked_at": ctx.now, "notes": "",
    })
    ctx.state.put("bookings", ref, booking)
    for flight in flights:
        _seat_change(ctx, flight, cabin, -len(travellers))
    return {"booked": booking, "charged": total}


@custom_tool("flight_travel.change_flight")
def change_flight(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Swap one flight of a booking for another on the same route; charge any fare difference."""
    booking = _booking(ctx, args["booking_ref"])
    old_id, new_id = args["old_flight_id"], args["new_flight_id"]
    if booking.get("status") != "confirmed":
        raise ToolError("conflict", f"Booking {booking['booking_ref']} is {booking.get('status')}; only confirmed "
                                    "bookings can be changed.")
    if booking.get("fare_type") == "basic":
        raise ToolError("conflict", "Basic fares cannot be changed.")
    if old_id not in booking.get("flight_ids", []):
        raise ToolError("invalid_request", f"{old_id} is not on booking {booking['booking_ref']}.")
    if new_id in booking.get("flight_ids", []):
        raise ToolError("invalid_request", f"{new_id} is already on booking {booking['booking_ref']}.")
    old, new = _flight(ctx, old_id), _flight(ctx, new_id)
    if str(old["depart"]) <= str(ctx.now):
        raise ToolError("conflict", f"{old['flight_number']} has already left.")
    if (old["origin"], old["destination"]) != (new["origin"], new["destination"]):
        raise ToolError("invalid_request", f"{new['flight_number']} flies {new['origin']}-{new['destination']}, "
                                           f"not {old['origin']}-{old['destination']}.")
    cabin = booking.get("cabin", "economy")
    travellers = len(booking.get("traveler_ids", []))
    _bookable(ctx, new, cabin, travellers)
    index = booking["flight_ids"].index(old_id)
    flight_ids = list(booking["flight_ids"])
    flight_ids[index] = new_id
    legs = [_flight(ctx, fid) for fid in flight_ids]
    for before, after in zip(legs, legs[1:], strict=False):
        if after["depart"] <= before["arrive"]:
            raise ToolError("conflict", f"{after['flight_number']} would leave before {before['flight_number']} "
                                        "lands.")
    factor = _FARE_FACTOR.get(booking.get("fare_type", "main"), 1.0)
    fare_field = f"fare_{cabin}"
    difference = round((float(new.get(fare_field) or 0) - float(old.get(fare_field) or 0)) * factor * travellers, 2)
    charged = max(difference, 0.0)
    updated = {**booking, "flight_ids": flight_ids,
               "seats": [s for s in booking.get("seats", []) if not s.startswith(old["flight_number"] + " ")],
               "fare_total": round(float(booking.get("fare_total", 0)) + charged, 2)}
    if index == 0:
        updated["depart"] = new["depart"]
        updated["check_in_opens"] = _minus_hours(new["depart"], 24)
    if index == len(flight_ids) - 1 and "return_depart" in booking:
        updated["return_depart"] = new["depart"]
    ctx.state.put("bookings", booking["booking_ref"], updated)
    _seat_change(ctx, old, cabin, travellers)
    _seat_change(ctx, ctx.state.get("flights", new_id), cabin, -travellers)
    return {"updated": updated, "fare_difference": difference, "charged": charged,
            "note": f"Choose seats on {new['flight_number']} at check-in; they are not assigned yet."}


@custom_tool("flight_travel.quote_cancellation")
def quote_cancellation(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """What cancelling would give back: the fare to the card (refundable), travel credit (main) or nothing (basic)."""
    booking = _booking(ctx, args["booking_ref"])
    out: dict[str, Any] = {"booking_ref": booking["booking_ref"], "fare_type": booking.get("fare_type"),
                           "fare_total": booking.get("fare_total")}
    if booking.get("status") not in ("confirmed", "checked_in"):
        return {**out, "cancellable": False, "reason": f"The booking is {booking.get('status')}."}
    if str(booking["depart"]) <= str(ctx.now):
        return {**out, "cancellable": False, "reason": "The trip has already started."}
    total = float(booking.get("fare_total", 0))
    if booking.get("refundable"):
        return {**out, "cancellable": True, "refund_to_card": total, "travel_credit": 0.0, "fee": 0.0}
    if booking.get("fare_type") == "basic":
        return {**out, "cancellable": True, "refund_to_card": 0.0, "travel_credit": 0.0, "fee": 0.0,
                "reason": "Basic fares are not refundable and earn no credit."}
    credit_until = f"{int(str(ctx.now)[:4]) + 1}{str(ctx.now)[4:10]}"
    return {**out, "cancellable": True, "refund_to_card": 0.0, "travel_credit": round(total, 2), "fee": 0.0,
            "credit_valid_until": credit_until}
