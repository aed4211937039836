"""InfrastructureControl logic the generic operations cannot express.

- service health: availability, error rate and a request-weighted p95 latency computed from five-minute metric
  samples over a window ending now, compared with the service's SLO (error budget consumed);
- firewall evaluation: rules of a network matched by CIDR containment, protocol, port range and target tag, first
  match by priority wins, implicit deny otherwise (as cloud VPC firewalls do);
- capacity planning: instances needed to bring average CPU to a target, clamped to the service's scaling limits;
- maintenance checks: overlaps with change freezes, other windows and open incidents, and business hours for tier 1;
- on-call at a moment, a service with its load balancers and windows, rollback to the previous release and instance
  power actions, which touch several records at once.
"""

from __future__ import annotations

import ipaddress
import math
from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_FMT = "%Y-%m-%dT%H:%M"


def _service(ctx: Any, service_id: str) -> dict[str, Any]:
    service = ctx.record("services", service_id, f"No service with service_id {service_id!r}.")
    return service


def _dt(value: str) -> datetime:
    return datetime.strptime(value[:16], _FMT)


@custom_tool("infrastructure_control.get_service")
def get_service(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A service with its load balancers and its maintenance windows that have not ended yet."""
    service = _service(ctx, args["service_id"])
    sid = service["service_id"]
    lbs = [{k: lb.get(k) for k in ("lb_id", "name", "region", "scheme", "dns_name", "listeners", "status")}
           for _, lb in sorted(ctx.state.records("load_balancers").items()) if lb.get("service_id") == sid]
    windows = sorted(
        ({k: w.get(k) for k in ("window_id", "start", "end", "status", "description", "change_ticket")}
         for _, w in ctx.state.records("maintenance_windows").items()
         if w.get("service_id") == sid and w.get("status") in ("scheduled", "in_progress")
         and str(w.get("end", "")) > ctx.now),
        key=lambda w: (str(w["start"]), str(w["window_id"])))
    out = {k: service.get(k) for k in ("service_id", "name", "tier", "owner_team", "description", "current_version",
                                       "slo_availability", "latency_slo_ms", "min_instances", "max_instances",
                                       "desired_instances", "target_cpu_pct", "runbook", "notes")}
    out["load_balancers"] = lbs
    out["upcoming_maintenance"] = windows
    return out


@custom_tool("infrastructure_control.who_is_on_call")
def who_is_on_call(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Shifts of a team covering a moment (start <= at < end), primary first, with the engineer's contact."""
    team = str(args["team"]).strip().casefold()
    at = args.get("at") or ctx.now
    shifts = [s for _, s in sorted(ctx.state.records("oncall_shifts").items())
              if str(s.get("team", "")).casefold() == team and str(s["start"]) <= at < str(s["end"])]
    shifts.sort(key=lambda s: (0 if s.get("role") == "primary" else 1, str(s["shift_id"])))
    people = []
    for s in shifts:
        eng = ctx.state.get("engineers", s["email"]) or {}
        people.append({"role": s["role"], "email": s["email"], "name": eng.get("name"), "phone": eng.get("phone"),
                       "shift_start": s["start"], "shift_end": s["end"]})
    return {"team": team, "at": at, "on_call": people}


def _weighted_percentile(samples: list[tuple[float, float]], q: float) -> float:
    """Percentile of values weighted by request counts: the first value whose cumulative weight reaches q."""
    total = sum(w for _, w in samples)
    running = 0.0
    for value, weight in sorted(samples):
        running += weight
        if running >= q * total:
            return value
    return sorted(samples)[-1][0]


@custom_tool("infrastructure_control.get_service_health")
def get_service_health(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Availability = 1 - errors / requests over the window; p95 = request-weighted 95th percentile of the samples'
    p95; error budget consumed = errors / (requests x (1 - SLO))."""
    service = _service(ctx, args["service_id"])
    hours = int(args.get("hours") or 24)
    now = _dt(ctx.now)
    since = (now - timedelta(hours=hours)).strftime(_FMT)
    samples = [m for _, m in sorted(ctx.state.records("metric_samples").items())
               if m.get("service_id") == service["service_id"] and since < str(m.get("at", "")) <= ctx.now]
    if not samples:
        raise ToolError("unavailable", f"No metric samples for {service['name']} in the last {hours} hours.")
    requests = sum(int(m["requests"]) for m in samples)
    errors = sum(int(m["errors"]) for m in samples)
    availability = 100.0 * (1 - errors / requests) if requests else 100.0
    slo = float(service["slo_availability"])
    allowed = requests * (1 - slo / 100.0)
    consumed = 100.0 * errors / allowed if allowed > 0 else 0.0
    p95 = _weighted_percentile([(float(m["p95_ms"]), float(m["requests"])) for m in samples], 0.95)
    latency_slo = service.get("latency_slo_ms")
    return {
        "service_id": service["service_id"],
        "name": service["name"],
        "window": {"from": since, "to": ctx.now, "hours": hours, "samples": len(samples)},
        "requests": requests,
        "errors": errors,
        "availability_pct": round(availability, 3),
        "error_rate_pct": round(100.0 - availability, 3),
        "p95_latency_ms": round(p95),
        "worst_sample_p95_ms": max(int(m["p95_ms"]) for m in samples),
        "slo_availability_pct": slo,
        "latency_slo_ms": latency_slo,
        "error_budget_consumed_pct": round(consumed, 1),
        "meets_slo": availability >= slo and (latency_slo is None or p95 <= float(latency_slo)),
        "data_notice": service.get("metrics_notice") or None,
    }


def _rule_matches(rule: dict[str, Any], ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int,
                  protocol: str, tag: str | None) -> bool:
    try:
        net = ipaddress.ip_network(str(rule.get("source_cidr", "")), strict=False)
    except ValueError:
        return False
    if ip.version != net.version or ip not in net:
        return False
    if rule.get("protocol") not in ("all", protocol):
        return False
    if rule.get("protocol") != "all" and rule.get("port_from") is not None:
        low = int(rule["port_from"])
        high = int(rule.get("port_to") if rule.get("port_to") is not None else low)
        if not low <= port <= high:
            return False
    rule_tag = rule.get("target_tag")
    return rule_tag is None or (tag is not None and str(rule_tag).casefold() == tag.casefold())


@custom_tool("infrastructure_control.test_connectivity")
def test_connectivity(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """First enabled ingress rule of the network (lowest priority number) matching the traffic decides; none: deny."""
    try:
        ip = ipaddress.ip_address(str(args["source_ip"]).strip())
    except ValueError:
        raise ToolError("invalid_request", f"{args['source_ip']!r} is not an IP address.") from None
    protocol = args.get("protocol") or "tcp"
    port = int(args["port"])
    tag = args.get("target_tag")
    rules = sorted((r for _, r in ctx.state.records("firewall_rules").items()
                    if r.get("network") == args["network"] and r.get("direction") == "ingress"
                    and r.get("status") == "enabled"),
                   key=lambda r: (int(r.get("priority", 65535)), str(r["rule_id"])))
    evaluated = 0
    for rule in rules:
        evaluated += 1
        if _rule_matches(rule, ip, port, protocol, tag):
            return {"network": args["network"], "source_ip": str(ip), "port": port, "protocol": protocol,
                    "target_tag": tag, "decision": rule["action"],
                    "deciding_rule": {k: rule.get(k) for k in ("rule_id", "name", "action", "priority", "source_cidr")},
                    "rules_evaluated": evaluated}
    return {"network": args["network"], "source_ip": str(ip), "port": port, "protocol": protocol, "target_tag": tag,
            "decision": "deny", "deciding_rule": None, "rules_evaluated": evaluated}


@custom_tool("infrastructure_control.plan_capacity")
def plan_capacity(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Instances needed = ceil(sum of running instances' CPU / target), clamped to [min, max]."""
    service = _service(ctx, args["service_id"])
    target = int(args.get("target_cpu_pct") or service.get("target_cpu_pct") or 60)
    running = [i for _, i in sorted(ctx.state.records("instances").items())
               if i.get("service_id") == service["service_id"] and i.get("environment") == "production"
               and i.get("state") == "running"]
    if not running:
        raise ToolError("unavailable", f"No running production instances of {service['name']} to measure.")
    load = sum(float(i.get("cpu_pct") or 0) for i in running)
    needed = max(1, math.ceil(load / target))
    low, high = int(service["min_instances"]), int(service["max_instances"])
    recommended = min(max(needed, low), high)
    limited_by = "max_instances" if needed > high else "min_instances" if needed < low else None
    return {
        "service_id": service["service_id"],
        "running_instances": len(running),
        "desired_instances": service["desired_instances"],
        "average_cpu_pct": round(load / len(running), 1),
        "target_cpu_pct": target,
        "instances_needed": needed,
        "recommended_instances": recommended,
        "projected_average_cpu_pct": round(load / recommended, 1),
        "limited_by": limited_by,
        "limits": {"min_instances": low, "max_instances": high},
    }


def _business_hours_overlap(start: datetime, end: datetime) -> bool:
    day = start.replace(hour=0, minute=0)
    while day < end:
        if day.weekday() < 5:
            open_, close = day.replace(hour=8), day.replace(hour=20)
            if start < close and end > open_:
                return True
        day += timedelta(days=1)
    return False


@custom_tool("infrastructure_control.check_maintenance_window")
def check_maintenance_window(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A proposed window against freezes, the service's other windows, its open incidents and (tier 1) weekday
    business hours 08:00-20:00."""
    service = _service(ctx, args["service_id"])
    start, end = args["start"], args["end"]
    if end <= start:
        raise ToolError("invalid_request", "end must be after start.")
    checks = []
    freezes = [f["name"] for _, f in sorted(ctx.state.records("change_freezes").items())
               if str(f["start"]) < end and str(f["end"]) > start]
    checks.append({"name": "outside_change_freeze", "passed": not freezes,
                   "message": "Overlaps " + ", ".join(freezes) if freezes else "No change freeze."})
    clashes = [w["window_id"] for _, w in sorted(ctx.state.records("maintenance_windows").items())
               if w.get("service_id") == service["service_id"] and w.get("status") in ("scheduled", "in_progress")
               and str(w["start"]) < end and str(w["end"]) > start]
    checks.append({"name": "no_overlapping_window", "passed": not clashes,
                   "message": "Overlaps " + ", ".join(clashes) if clashes else "No other window for this service."})
    open_incidents = [i["incident_id"] for _, i in sorted(ctx.state.records("incidents").items())
                      if i.get("service_id") == service["service_id"] and i.get("status") in ("open", "mitigated")]
    checks.append({"name": "no_open_incident", "passed": not open_incidents,
                   "message": "Open: " + ", ".join(open_incidents) if open_incidents else "No open incident."})
    busy = int(service.get("tier", 3)) == 1 and _business_hours_overlap(_dt(start), _dt(end))
    checks.append({"name": "tier1_outside_business_hours", "passed": not busy,
                   "message": "Tier-1 work must avoid weekdays 08:00-20:00." if busy else "Timing is fine."})
    checks.append({"name": "starts_in_future", "passed": start > ctx.now,
                   "message": "Starts in the future." if start > ctx.now else "Starts in the past."})
    return {"service_id": service["service_id"], "start": start, "end": end,
            "ok": all(c["passed"] for c in checks), "checks": checks}


@custom_tool("infrastructure_control.rollback_deployment")
def rollback_deployment(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Mark the live deployment rolled back and redeploy the release that ran before it in that environment."""
    dep = ctx.record("deployments", args["deployment_id"], f"No deployment with deployment_id {args['deployment_id']!r}.")
    same = [d for _, d in sorted(ctx.state.records("deployments").items())
            if d.get("service_id") == dep["service_id"] and d.get("environment") == dep["environment"]]
    live = max((d for d in same if d.get("status") == "succeeded"), key=lambda d: str(d["started_at"]), default=None)
    if live is None or live["deployment_id"] != dep["deployment_id"]:
        raise ToolError("conflict", f"{dep['deployment_id']} is not the live deployment of {dep['service_id']} "
                                    f"in {dep['environment']}.")
    earlier = [d for d in same if str(d["started_at"]) < str(dep["started_at"])
               and d.get("status") in ("superseded", "succeeded") and d.get("version") != dep.get("version")]
    if not earlier:
        raise ToolError("conflict", f"No earlier release of {dep['service_id']} to roll back to.")
    previous = max(earlier, key=lambda d: str(d["started_at"]))
    new_id = ctx.new_id("deployments")
    note = f"Rollback of {dep['deployment_id']} ({dep['version']}) to {previous['version']}."
    if args.get("reason"):
        note += f" Reason: {args['reason']}"
    created = {"deployment_id": new_id, "service_id": dep["service_id"], "environment": dep["environment"],
               "version": previous["version"], "status": "succeeded", "started_at": ctx.now, "finished_at": ctx.now,
               "deployed_by": ctx.values.get("user_email"), "health_checks": "pending", "progress_pct": 100,
               "notes": note}
    ctx.state.put("deployments", dep["deployment_id"], {**dep, "status": "rolled_back"})
    ctx.state.put("deployments", new_id, created)
    if dep["environment"] == "production":
        service = ctx.state.get("services", dep["service_id"])
        if service is not None:
            ctx.state.put("services", service["service_id"], {**service, "current_version": previous["version"]})
    return {"rolled_back": dep["deployment_id"], "from_version": dep["version"], "to_version": previous["version"],
            "created": created}


_ACTIONS = {  # action -> (states it may start from, resulting state)
    "reboot": (("running",), "running"),
    "stop": (("running", "draining"), "stopped"),
    "start": (("stopped",), "running"),
    "drain": (("running",), "draining"),
    "terminate": (("running", "stopped", "draining"), "terminated"),
}


@custom_tool("infrastructure_control.control_instance")
def control_instance(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Power actions with the state machine a cloud API enforces."""
    inst = ctx.record("instances", args["instance_id"], f"No instance with instance_id {args['instance_id']!r}.")
    allowed, result = _ACTIONS[args["action"]]
    if inst.get("state") not in allowed:
        raise ToolError("conflict", f"Cannot {args['action']} {inst['instance_id']} while it is {inst.get('state')}.")
    updated = {**inst, "state": result}
    if args["action"] == "reboot":
        updated["last_rebooted_at"] = ctx.now
    ctx.state.put("instances", inst["instance_id"], updated)
    return {"updated": updated, "previous": {"state": inst.get("state")}}
