"""DisasterRelief logic the generic operations cannot express.

Shelter capacity is arithmetic over the shelter record (free beds = capacity - occupancy, free pet spaces = pet
capacity - pets housed) with the shelter's status and accessibility. Dispatching supplies touches two collections
at once: it checks the stock record (no hold, enough on hand, depot operating), the receiving shelter and the
depot-to-shelter route (it must exist and not be closed), takes the quantity off the depot's stock and logs a
shipment whose ETA is the loading time plus the route's distance at the convoy speed allowed by the road status.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_LOADING_MINUTES = 30
_SPEED_MPH = {"open": 35.0, "restricted": 20.0}


def _shelter(ctx: Any, shelter_id: str) -> dict[str, Any]:
    shelter = ctx.record("shelters", shelter_id, f"No shelter with shelter_id {shelter_id!r}.")
    return shelter


@custom_tool("disaster_relief.check_shelter_capacity")
def check_shelter_capacity(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Whether a group fits a shelter now, with the free beds and pet spaces."""
    shelter = _shelter(ctx, args["shelter_id"])
    people, pets = int(args["people"]), int(args.get("pets", 0))
    free_beds = max(0, int(shelter["capacity"]) - int(shelter.get("occupancy", 0)))
    free_pets = max(0, int(shelter.get("pet_capacity", 0)) - int(shelter.get("pets_housed", 0)))
    checks = [
        {"name": "open", "passed": shelter.get("status") == "open", "detail": f"status is {shelter.get('status')}"},
        {"name": "beds", "passed": free_beds >= people, "detail": f"{free_beds} free beds for {people} people"},
    ]
    if pets:
        checks.append({"name": "pets", "passed": bool(shelter.get("pet_friendly")) and free_pets >= pets,
                       "detail": f"{free_pets} free pet spaces for {pets} pets" if shelter.get("pet_friendly")
                       else "does not take pets"})
    if args.get("needs_accessible"):
        checks.append({"name": "accessible", "passed": bool(shelter.get("ada_accessible", True)),
                       "detail": "ADA accessible" if shelter.get("ada_accessible", True) else "not ADA accessible"})
    return {"shelter_id": shelter["shelter_id"], "name": shelter["name"], "free_beds": free_beds,
            "free_pet_spaces": free_pets, "occupancy_pct": round(100 * int(shelter.get("occupancy", 0))
                                                                 / max(1, int(shelter["capacity"]))),
            "fits": all(c["passed"] for c in checks), "checks": checks}


@custom_tool("disaster_relief.dispatch_supplies")
def dispatch_supplies(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Send ``quantity`` units of a stock record to a shelter along the depot's route."""
    stock = ctx.record("stock", args["stock_id"], f"No stock record {args['stock_id']!r}.")
    if stock.get("hold"):
        raise ToolError("conflict", f"{stock['item']} (lot {stock.get('lot') or 'n/a'}) is on hold: {stock['hold']}")
    depot = ctx.state.get("depots", stock["depot_id"])
    if depot is None or depot.get("status") == "closed":
        raise ToolError("conflict", f"Depot {stock['depot_id']} is closed.")
    if int(depot.get("trucks_available", 0)) < 1:
        raise ToolError("conflict", f"{depot['name']} has no truck available.")
    shelter = _shelter(ctx, args["shelter_id"])
    if shelter.get("status") not in ("open", "full"):
        raise ToolError("conflict", f"{shelter['name']} is {shelter.get('status')}; it is not receiving supplies.")
    quantity = int(args["quantity"])
    if quantity > int(stock["on_hand"]):
        raise ToolError("conflict", f"Only {stock['on_hand']} {stock['unit']} of {stock['item']} on hand at "
                                    f"{depot['name']}.")
    routes = [r for _, r in sorted(ctx.state.records("routes").items())
              if r.get("depot_id") == stock["depot_id"] and r.get("shelter_id") == shelter["shelter_id"]]
    usable = [r for r in routes if r.get("road_status") in _SPEED_MPH]
    if not usable:
        why = "is closed" if routes else "is not mapped"
        raise ToolError("conflict", f"The route from {depot['name']} to {shelter['name']} {why}.")
    route = min(usable, key=lambda r: (float(r["distance_mi"]) / _SPEED_MPH[r["road_status"]], r["route_id"]))
    minutes = _LOADING_MINUTES + 60 * float(route["distance_mi"]) / _SPEED_MPH[route["road_status"]]
    eta = (datetime.fromisoformat(ctx.now) + timedelta(minutes=round(minutes))).strftime("%Y-%m-%dT%H:%M")
    shipment_id = ctx.new_id("shipments")
    shipment = {"shipment_id": shipment_id, "stock_id": stock["stock_id"], "depot_id": stock["depot_id"],
                "shelter_id": shelter["shelter_id"], "item": stock["item"], "quantity": quantity,
                "route_id": route["route_id"], "status": "dispatched", "dispatched_at": ctx.now, "eta": eta,
                "note": args.get("note", "")}
    ctx.state.put("stock", stock["stock_id"], {**stock, "on_hand": int(stock["on_hand"]) - quantity,
                                               "updated": ctx.now})
    ctx.state.put("shipments", shipment_id, shipment)
    return {"created": shipment, "remaining_on_hand": int(stock["on_hand"]) - quantity}
