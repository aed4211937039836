"""MapsNavigation logic the generic operations cannot express: routing and distances computed over the records.

The road graph: ``road_nodes`` are junctions with coordinates, ``road_segments`` are edges (two-way unless
``one_way``; ``closed`` segments are skipped). A segment takes length / speed x 60 minutes, times its
``peak_factor`` on weekdays 07:00-09:30 and 16:00-18:30, plus the delay of any active or reported incident on it.
Routes are Dijkstra shortest paths on minutes (fastest) or miles (shortest) between the junctions the two places
hang off, plus one minute at each end for leaving and parking. Straight-line distances are haversine distances
between place coordinates (a place without its own falls back to its junction's). Ratings are the mean of a
place's reviews. Opening hours are per-weekday ``HH:MM-HH:MM`` windows.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError
from agentabstain_gym.envs.tools.paths import shortest_path

_FMT = "%Y-%m-%dT%H:%M"
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_PEAKS = (("07:00", "09:30"), ("16:00", "18:30"))
_ACCESS_MIN = 1.0
_HIGHWAY = "Route 9"


def _place(ctx: Any, place_id: str) -> dict[str, Any]:
    place = ctx.record("places", place_id, f"No place with place_id {place_id!r}.")
    return place


def _coords(ctx: Any, place: dict[str, Any]) -> tuple[float, float]:
    if place.get("lat") is not None and place.get("lon") is not None:
        return float(place["lat"]), float(place["lon"])
    node = ctx.state.get("road_nodes", place.get("node_id"))
    if node is None:
        raise ToolError("unavailable", f"No map position for {place['name']!r}.")
    return float(node["lat"]), float(node["lon"])


def _miles(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 3958.8 * math.asin(math.sqrt(h))


def _ratings(ctx: Any) -> dict[str, tuple[float, int]]:
    sums: dict[str, list[float]] = {}
    for _, r in sorted(ctx.state.records("reviews").items()):
        entry = sums.setdefault(r["place_id"], [0.0, 0.0])
        entry[0] += float(r["rating"])
        entry[1] += 1
    return {k: (v[0] / v[1], int(v[1])) for k, v in sums.items()}


def _is_peak(moment: datetime) -> bool:
    hm = moment.strftime("%H:%M")
    return moment.weekday() < 5 and any(a <= hm < b for a, b in _PEAKS)


def _edges(ctx: Any, moment: datetime, avoid_highways: bool) -> dict[str, list[tuple[str, float, float, dict]]]:
    delays: dict[str, float] = {}
    for _, inc in sorted(ctx.state.records("incidents").items()):
        if inc.get("status") in ("active", "reported"):
            delays[inc["segment_id"]] = delays.get(inc["segment_id"], 0.0) + float(inc.get("delay_min", 0))
    peak = _is_peak(moment)
    graph: dict[str, list[tuple[str, float, float, dict]]] = {}
    for _, seg in sorted(ctx.state.records("road_segments").items()):
        if seg.get("status") == "closed" or (avoid_highways and seg.get("road") == _HIGHWAY):
            continue
        minutes = float(seg["length_mi"]) / float(seg["speed_mph"]) * 60
        if peak:
            minutes *= float(seg.get("peak_factor", 1.0))
        minutes += delays.get(seg["segment_id"], 0.0)
        edge = (minutes, float(seg["length_mi"]), seg)
        graph.setdefault(seg["from_node"], []).append((seg["to_node"], *edge))
        if not seg.get("one_way", False):
            graph.setdefault(seg["to_node"], []).append((seg["from_node"], *edge))
    return graph


def _dijkstra(graph: dict[str, list[tuple[str, float, float, dict]]], start: str, goal: str,
              by_miles: bool) -> tuple[float, float, list[dict]] | None:
    """(minutes, miles, segments) of the fastest route, or of the shortest with ``by_miles``."""
    costed = {node: [(nxt, (miles, minutes) if by_miles else (minutes, miles), seg)
                     for nxt, minutes, miles, seg in edges] for node, edges in graph.items()}
    found = shortest_path(costed, start, goal)
    if found is None:
        return None
    (first, second), path = found
    minutes, miles = (second, first) if by_miles else (first, second)
    return minutes, miles, path


def route(ctx: Any, origin_id: str, destination_id: str, depart_at: str | None = None, optimize: str = "fastest",
          avoid_highways: bool = False) -> dict[str, Any]:
    """The route tool: the fastest or shortest path between two places at a departure time (Dijkstra)."""
    origin, destination = _place(ctx, origin_id), _place(ctx, destination_id)
    depart = datetime.strptime(depart_at or ctx.now, _FMT)
    if origin_id == destination_id:
        raise ToolError("invalid_request", "The origin and the destination are the same place.")
    found = _dijkstra(_edges(ctx, depart, avoid_highways), origin["node_id"], destination["node_id"],
                      optimize == "shortest")
    if found is None:
        raise ToolError("not_found", f"No open road route from {origin['name']} to {destination['name']}.")
    minutes, miles, path = found
    minutes += 2 * _ACCESS_MIN
    via: list[str] = []
    for seg in path:
        if not via or via[-1] != seg["road"]:
            via.append(seg["road"])
    on_route = {seg["segment_id"] for seg in path}
    incidents = [{"incident_id": i["incident_id"], "road": i["road"], "incident_type": i["incident_type"],
                  "delay_min": i.get("delay_min", 0), "description": i.get("description", "")}
                 for _, i in sorted(ctx.state.records("incidents").items())
                 if i["segment_id"] in on_route and i.get("status") in ("active", "reported")]
    arrive = depart + timedelta(minutes=round(minutes))
    return {"from": {"place_id": origin_id, "name": origin["name"], "address": origin["address"]},
            "to": {"place_id": destination_id, "name": destination["name"], "address": destination["address"]},
            "optimize": optimize, "depart_at": depart.strftime(_FMT), "rush_hour": _is_peak(depart),
            "distance_mi": round(miles, 1), "duration_min": round(minutes), "arrive_at": arrive.strftime(_FMT),
            "via": via, "incidents_on_route": incidents}


@custom_tool("maps_navigation.compute_route")
def compute_route(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Fastest (or shortest) driving route between two places at the departure time."""
    return route(ctx, args["origin_place_id"], args["destination_place_id"], args.get("depart_at"),
                 args.get("optimize", "fastest"), bool(args.get("avoid_highways", False)))


@custom_tool("maps_navigation.estimate_travel_times")
def estimate_travel_times(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Fastest-route time and distance from one place to each of several others."""
    rows = []
    for dest in dict.fromkeys(args["destination_place_ids"]):
        r = route(ctx, args["origin_place_id"], dest, args.get("depart_at"))
        rows.append({"place_id": dest, "name": r["to"]["name"], "address": r["to"]["address"],
                     "duration_min": r["duration_min"], "distance_mi": r["distance_mi"], "arrive_at": r["arrive_at"]})
    rows.sort(key=lambda r: (r["duration_min"], r["distance_mi"], r["place_id"]))
    return {"origin_place_id": args["origin_place_id"], "depart_at": args.get("depart_at", ctx.now),
            "results": rows}


@custom_tool("maps_navigation.search_nearby")
def search_nearby(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Public places within the radius of a place, nearest first, with their review average."""
    center = _place(ctx, args["place_id"])
    here = _coords(ctx, center)
    radius = float(args.get("radius_mi", 1.0))
    category = str(args.get("category", "")).casefold()
    ratings = _ratings(ctx)
    rows = []
    for key, p in sorted(ctx.state.records("places").items()):
        if key == center["place_id"] or p.get("private") or (category and p["category"].casefold() != category):
            continue
        distance = _miles(here, _coords(ctx, p))
        if distance <= radius:
            avg, n = ratings.get(key, (None, 0))
            rows.append({"place_id": key, "name": p["name"], "category": p["category"], "address": p["address"],
                         "distance_mi": round(distance, 2), "avg_rating": round(avg, 1) if avg is not None else None,
                         "reviews": n, "price_level": p.get("price_level")})
    rows.sort(key=lambda r: (r["distance_mi"], r["place_id"]))
    return {"center": {"place_id": center["place_id"], "name": center["name"]}, "radius_mi": radius,
            "count": len(rows), "results": rows[:25]}


@custom_tool("maps_navigation.list_saved_places")
def list_saved_places(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Saved places with the name and category of the place each label points to."""
    wanted = str(args.get("label", "")).casefold()
    rows = []
    for key, s in sorted(ctx.state.records("saved_places").items()):
        if wanted and wanted not in str(s["label"]).casefold():
            continue
        place = ctx.state.get("places", s["place_id"]) or {}
        rows.append({"saved_id": key, "label": s["label"], "place_id": s["place_id"],
                     "place_name": place.get("name"), "category": place.get("category"), "note": s.get("note", "")})
    return {"count": len(rows), "results": rows}


@custom_tool("maps_navigation.check_place_open")
def check_place_open(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Open or closed at a moment, from the place's weekly hours."""
    place = _place(ctx, args["place_id"])
    at = datetime.strptime(args.get("at", ctx.now), _FMT)
    hours = place.get("hours")
    if not hours:
        raise ToolError("unavailable", f"No opening hours are listed for {place['name']}.")
    today = str(hours.get(_DAYS[at.weekday()], "closed"))
    hm = at.strftime("%H:%M")
    out: dict[str, Any] = {"place_id": place["place_id"], "name": place["name"], "at": at.strftime(_FMT),
                           "day": at.strftime("%A"), "hours_today": today}
    if today != "closed":
        opens, closes = today.split("-")
        out["open"] = opens <= hm < closes
        out["opens_at" if hm < opens else "closes_at"] = opens if hm < opens else closes
        return out
    out["open"] = False
    for step in range(1, 8):
        nxt = str(hours.get(_DAYS[(at.weekday() + step) % 7], "closed"))
        if nxt != "closed":
            out["next_opens"] = f"{(at + timedelta(days=step)).strftime('%A')} {nxt.split('-')[0]}"
            break
    return out


@custom_tool("maps_navigation.report_traffic_incident")
def report_traffic_incident(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """File a driver's report on a road segment (unverified until the traffic centre confirms it)."""
    segment = ctx.record("road_segments", args["segment_id"], f"No road segment with segment_id {args['segment_id']!r}.")
    incident_id = ctx.new_id("incidents")
    record = {"incident_id": incident_id, "segment_id": segment["segment_id"], "road": segment["road"],
              "incident_type": args["incident_type"], "description": args.get("description", ""), "delay_min": 0,
              "status": "reported", "verified": False, "reported_at": ctx.now, "reported_by": "app user"}
    ctx.state.put("incidents", incident_id, record)
    return {"created": record, "segment": segment["name"]}


@custom_tool("maps_navigation.post_place_review")
def post_place_review(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Publish a rating and review under the signed-in user's name."""
    place = _place(ctx, args["place_id"])
    review_id = ctx.new_id("reviews")
    record = {"review_id": review_id, "place_id": place["place_id"], "author": ctx.values.get("user_name", "You"),
              "rating": args["rating"], "text": args.get("text", ""), "date": ctx.now[:10]}
    ctx.state.put("reviews", review_id, record)
    return {"created": record}
