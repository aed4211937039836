"""Shortest paths for the routing sandboxes (delivery routes, maps): one Dijkstra, so every road network in the
suite breaks ties the same way."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

#: node -> [(next node, (cost, tie-break cost), label of the edge)]
Graph = Mapping[str, Sequence[tuple[str, tuple[float, float], Any]]]


def shortest_path(graph: Graph, start: str, goal: str) -> tuple[tuple[float, float], list[Any]] | None:
    """The cheapest path's (cost, tie-break cost) and its edge labels in order, or None when ``goal`` cannot be
    reached. Costs compare as pairs, then by node id, so equal routes resolve the same way in every process."""
    best: dict[str, tuple[float, float]] = {start: (0.0, 0.0)}
    previous: dict[str, tuple[str, Any]] = {}
    queue: list[tuple[float, float, str]] = [(0.0, 0.0, start)]
    done: set[str] = set()
    while queue:
        first, second, node = heapq.heappop(queue)
        if node in done:
            continue
        done.add(node)
        if node == goal:
            break
        for nxt, (a, b), label in graph.get(node, ()):
            cost = (first + a, second + b)
            if nxt not in best or cost < best[nxt]:
                best[nxt] = cost
                previous[nxt] = (node, label)
                heapq.heappush(queue, (cost[0], cost[1], nxt))
    if goal not in done:
        return None
    labels: list[Any] = []
    node = goal
    while node != start:
        node, label = previous[node]
        labels.append(label)
    labels.reverse()
    return best[goal], labels
