"""HealthPortal logic the generic operations cannot express.

A visit cost estimate applies the plan's cost sharing to the provider's charge: in network, the specialty decides
the copay (primary care, urgent care or specialist); out of network, the charge first goes to the out-of-network
deductible that is left, then the out-of-network coinsurance applies to the rest, and the patient's share is capped
by what is left of the out-of-pocket maximum. New-patient visits are charged 1.35 x the provider's usual charge.
Booking takes an open slot and writes both the appointment and the slot, which a single create cannot do.
"""

from __future__ import annotations

from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_PRIMARY = ("Family Medicine", "Internal Medicine", "Pediatrics")
_NEW_PATIENT_FACTOR = 1.35


def _can_open(ctx: Any, patient_id: str) -> bool:
    me = ctx.values.get("patient_id")
    if patient_id == me:
        return True
    return any(r.get("holder_id") == me and r.get("patient_id") == patient_id and r.get("status") == "active"
               for _, r in sorted(ctx.state.records("linked_accounts").items()))


@custom_tool("health_portal.estimate_visit_cost")
def estimate_visit_cost(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The patient's expected share of one visit under the signed-in patient's plan."""
    provider = ctx.record("providers", args["provider_id"], f"No provider with provider_id {args['provider_id']!r}.")
    me = ctx.state.get("patients", ctx.values.get("patient_id"))
    plan = ctx.state.get("insurance_plans", (me or {}).get("plan_id") or ctx.values.get("plan_id"))
    if plan is None:
        raise ToolError("unavailable", "No insurance plan on file.")
    charge = float(provider["visit_charge"]) * (_NEW_PATIENT_FACTOR if args.get("new_patient") else 1.0)
    oop_left = max(0.0, float(plan["oop_max"]) - float(plan["oop_met"]))
    if provider.get("in_network", True):
        specialty = provider.get("specialty", "")
        if specialty in _PRIMARY:
            basis, share = "primary care copay", float(plan["copay_primary"])
        elif specialty == "Urgent Care":
            basis, share = "urgent care copay", float(plan["copay_urgent"])
        else:
            basis, share = "specialist copay", float(plan["copay_specialist"])
        deductible_part = 0.0
    else:
        deductible_left = max(0.0, float(plan["oon_deductible"]) - float(plan["oon_deductible_met"]))
        deductible_part = min(charge, deductible_left)
        share = deductible_part + (charge - deductible_part) * float(plan["oon_coinsurance"])
        basis = "out-of-network deductible and coinsurance"
    patient_pays = round(min(share, oop_left, charge), 2)
    return {"provider_id": provider["provider_id"], "provider": provider["name"],
            "in_network": bool(provider.get("in_network", True)), "plan": plan["name"],
            "estimated_charge": round(charge, 2), "basis": basis, "applied_to_deductible": round(deductible_part, 2),
            "you_pay": patient_pays, "plan_pays": round(charge - patient_pays, 2),
            "out_of_pocket_left": round(oop_left, 2)}


@custom_tool("health_portal.book_appointment")
def book_appointment(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Take the provider's open slot at ``start`` for the patient and record the appointment."""
    patient_id = args.get("patient_id") or ctx.values.get("patient_id")
    if not _can_open(ctx, patient_id):
        raise ToolError("not_authorised", f"You cannot book appointments for patient {patient_id!r}.")
    provider = ctx.record("providers", args["provider_id"], f"No provider with provider_id {args['provider_id']!r}.")
    if args["start"] <= ctx.now:
        raise ToolError("invalid_request", "Appointments must start in the future.")
    slots = [(k, s) for k, s in sorted(ctx.state.records("slots").items())
             if s.get("provider_id") == provider["provider_id"] and s.get("start") == args["start"]]
    if not slots:
        raise ToolError("not_found", f"{provider['name']} has no slot starting at {args['start']}.")
    slot_key, slot = slots[0]
    if slot.get("status") != "open":
        raise ToolError("conflict", f"The {args['start']} slot with {provider['name']} is already booked.")
    clash = [a for _, a in sorted(ctx.state.records("appointments").items())
             if a.get("patient_id") == patient_id and a.get("status") == "scheduled"
             and a.get("start", "") < slot["end"] and (a.get("end") or a.get("start", "")) > slot["start"]]
    if clash:
        raise ToolError("conflict", f"The patient already has appointment {clash[0]['appointment_id']} at that time.")
    appointment_id = ctx.new_id("appointments")
    record = {"appointment_id": appointment_id, "patient_id": patient_id, "provider_id": provider["provider_id"],
              "start": slot["start"], "end": slot["end"], "visit_type": slot.get("visit_type", "in_person"),
              "reason": args["reason"], "location": f"{provider['practice']}, {provider.get('address', '')}".strip(", "),
              "status": "scheduled", "booked_at": ctx.now, "instructions": ""}
    ctx.state.put("appointments", appointment_id, record)
    ctx.state.put("slots", slot_key, {**slot, "status": "booked"})
    return {"created": record}
