"""The errors a tool can return, with the names real APIs use; they come back to the agent as observations."""

from __future__ import annotations

#: code -> what it means (used in docs and default messages).
ERROR_CODES: dict[str, str] = {
    "not_found": "the referenced record does not exist",
    "invalid_request": "the arguments are missing, of the wrong type, or not accepted",
    "conflict": "the request clashes with the current state",
    "not_authorised": "the signed-in user may not do this",
    "unavailable": "the service could not be reached",
    "timeout": "the service did not answer in time",
}


class ToolError(Exception):
    """A tool's failure: an error ``code`` of :data:`ERROR_CODES` and a message for the agent."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ERROR_CODES:
            code, message = "unavailable", f"{message} (unknown error code {code!r})"
        super().__init__(message)
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        """The error as the agent sees it: ``{"code", "message"}``."""
        return {"code": self.code, "message": self.message}


class SpecError(ValueError):
    """A sandbox or task file that breaks the format; carries every problem found, one per line."""

    def __init__(self, where: str, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(f"{where}: {len(problems)} problem(s):\n  - " + "\n  - ".join(problems))
