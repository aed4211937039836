"""DeliveryRouting logic: fastest routes over the road graph held in the records, and assigning a delivery to a
vehicle with an arrival time computed from that route.

The graph: ``junctions`` are nodes, ``roads`` are edges (two-way unless ``one_way``, skipped while ``closed``), and
every address hangs off one junction by a short access leg (``access_minutes`` / ``access_km``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError
from agentabstain_gym.envs.tools.paths import shortest_path

_FMT = "%Y-%m-%dT%H:%M"


def _address(ctx: Any, address_id: str) -> dict[str, Any]:
    address = ctx.record("addresses", address_id, f"No address with address_id {address_id!r}.")
    return address


def _graph(ctx: Any) -> dict[str, list[tuple[str, tuple[float, float], str]]]:
    graph: dict[str, list[tuple[str, tuple[float, float], str]]] = {}
    for _, road in sorted(ctx.state.records("roads").items()):
        if road.get("status") != "open":
            continue
        a, b = road["from_junction"], road["to_junction"]
        cost = (float(road["minutes"]), float(road["km"]))
        graph.setdefault(a, []).append((b, cost, road["name"]))
        if not road.get("one_way", False):
            graph.setdefault(b, []).append((a, cost, road["name"]))
    return graph


def fastest_route(ctx: Any, origin_id: str, destination_id: str) -> dict[str, Any]:
    """Dijkstra on minutes (ties broken by km, then by junction id) between two addresses."""
    origin, destination = _address(ctx, origin_id), _address(ctx, destination_id)
    start, goal = origin["junction_id"], destination["junction_id"]
    found = shortest_path(_graph(ctx), start, goal)
    if found is None:
        raise ToolError("not_found", f"No open road route from {origin['name']} to {destination['name']}.")
    (minutes, km), roads = found
    if origin_id != destination_id:
        minutes += float(origin["access_minutes"]) + float(destination["access_minutes"])
        km += float(origin["access_km"]) + float(destination["access_km"])
    return {"from": {"address_id": origin_id, "name": origin["name"], "street": origin["street"]},
            "to": {"address_id": destination_id, "name": destination["name"], "street": destination["street"]},
            "minutes": round(minutes), "km": round(km, 1), "via": roads}


@custom_tool("delivery_routing.plan_route")
def plan_route(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The fastest driving route between two addresses over the open roads, with time, distance and roads."""
    origin = args.get("from_address_id") or str(ctx.values.get("depot_address_id", ""))
    return fastest_route(ctx, origin, args["to_address_id"])


@custom_tool("delivery_routing.assign_delivery")
def assign_delivery(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Put a pending delivery on a vehicle: checks status, cold chain and payload, routes the vehicle from where it
    is, and refuses when the computed arrival misses the delivery window."""
    delivery = ctx.record("deliveries", args["delivery_id"], f"No delivery with delivery_id {args['delivery_id']!r}.")
    vehicle = ctx.record("vehicles", args["vehicle_id"], f"No vehicle with vehicle_id {args['vehicle_id']!r}.")
    if delivery.get("status") != "pending":
        raise ToolError("conflict", f"Delivery {delivery['delivery_id']} is already {delivery.get('status')}.")
    if vehicle.get("status") != "available":
        raise ToolError("conflict", f"{vehicle['name']} is {vehicle.get('status')} and cannot take deliveries.")
    if delivery.get("cold_chain") and not vehicle.get("refrigerated"):
        raise ToolError("conflict", f"Delivery {delivery['delivery_id']} is cold-chain; {vehicle['name']} has no fridge.")
    load = float(vehicle.get("load_kg", 0)) + float(delivery.get("weight_kg", 0))
    if load > float(vehicle.get("capacity_kg", 0)):
        raise ToolError("conflict", f"{vehicle['name']} would carry {load:g} kg, over its {vehicle['capacity_kg']} kg payload.")
    route = fastest_route(ctx, vehicle["current_address_id"], delivery["address_id"])
    depart = max(datetime.strptime(ctx.now, _FMT), datetime.strptime(vehicle["shift_start"], _FMT))
    arrive = depart + timedelta(minutes=route["minutes"])
    opens = datetime.strptime(delivery["window_start"], _FMT)
    arrive = max(arrive, opens)
    if arrive > datetime.strptime(delivery["window_end"], _FMT):
        raise ToolError("conflict", f"{vehicle['name']} cannot reach {delivery['customer']} before "
                        f"{delivery['window_end'][11:]} (earliest arrival {arrive.strftime(_FMT)[11:]}).")
    if arrive > datetime.strptime(vehicle["shift_end"], _FMT):
        raise ToolError("conflict", f"Arrival {arrive.strftime(_FMT)[11:]} is after {vehicle['name']}'s shift ends.")
    updated = {**delivery, "status": "assigned", "vehicle_id": vehicle["vehicle_id"],
               "eta": arrive.strftime(_FMT), "route_minutes": route["minutes"]}
    ctx.state.put("deliveries", delivery["delivery_id"], updated)
    ctx.state.put("vehicles", vehicle["vehicle_id"], {**vehicle, "load_kg": round(load, 1)})
    return {"updated": updated, "vehicle": {"vehicle_id": vehicle["vehicle_id"], "load_kg": round(load, 1),
                                            "capacity_kg": vehicle["capacity_kg"]}, "route": route}
