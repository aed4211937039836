"""``abstain-gym serve`` against hostile requests: odd Content-Length values, stalled bodies, other sites posting
into the person's episode (or clicking through an image tag), DNS rebinding, bad forms and concurrent requests.
Each is answered with one line or refused, and none changes the episode unless the person's own page sent it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serve import ENV_ID, _solvable_task

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym import serve
from agentabstain_gym.core.record import iter_records
from agentabstain_gym.mcp_server import Session
from agentabstain_gym.serve import start_server

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture()
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path, Session]]:
    monkeypatch.setattr(serve, "_TIMEOUT", 1.0)
    out = tmp_path / "runs.jsonl"
    session = Session(ENV_ID, out=str(out), agent="human", task_id=_solvable_task(),
                      env_kwargs={"observation_mode": "html"}, harness="serve")
    server = start_server(session, port=0)
    try:
        yield server.server_address[1], out, session
    finally:
        server.shutdown()
        server.server_close()
        session.close()


def request(port: int, method: str, path: str, body: str | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def records(out: Path) -> list[dict]:
    return list(iter_records(out)) if out.exists() else []


def raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
        return b"".join(chunks)


def test_bad_content_lengths_get_one_line_and_change_nothing(shop: tuple[int, Path, Session],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    port, _out, session = shop
    assert request(port, "GET", "/")[0] == 200
    host = f"Host: 127.0.0.1:{port}\r\n".encode()
    for declared in (b"abc", b"-5", b"1e3", b"\xd9\xa3"):  # the last: an Arabic-Indic digit, int() would take it
        reply = raw(port, b"POST /search HTTP/1.1\r\n" + host + b"Content-Length: " + declared +
                    b"\r\n\r\nsearch_query=shoes")
        assert reply.startswith(b"HTTP/1.0 400 Content-Length must be a number of bytes"), (declared, reply[:80])
    stalled = raw(port, b"POST /search HTTP/1.1\r\n" + host + b"Content-Length: 100\r\n\r\nsearch_query=shoes")
    assert stalled.startswith(b"HTTP/1.0 400 the form ended before its Content-Length") or stalled == b""
    assert session.info.get("turn", 0) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert request(port, "POST", "/search", "search_query=shoes", FORM)[0] == 303  # and it still serves
    assert session.info["turn"] == 1


def test_other_sites_cannot_act_in_the_persons_episode(shop: tuple[int, Path, Session]) -> None:
    port, out, session = shop
    request(port, "GET", "/")
    evil = "http://evil.example"
    attempts = [
        ("POST", "/abstain", "reason=forged", {**FORM, "Origin": evil}),
        ("POST", "/abstain", "reason=forged", {**FORM, "Origin": "null"}),
        ("POST", "/abstain", "reason=forged", {**FORM, "Referer": evil + "/page"}),
        ("POST", "/abstain", "reason=forged", {**FORM, "Sec-Fetch-Site": "cross-site"}),
        ("POST", "/abstain", "reason=forged", {**FORM, "Host": f"evil.example:{port}"}),  # DNS rebinding
        ("GET", "/item/" + urllib.parse.quote("back to search"), None, {"Sec-Fetch-Site": "same-site"}),
        ("GET", "/item/" + urllib.parse.quote("back to search"), None, {"Referer": evil}),
    ]
    for method, path, body, headers in attempts:
        assert request(port, method, path, body, headers)[0] == 403, headers
    assert session.running and session.info.get("turn", 0) == 0 and not records(out)
    own = {**FORM, "Origin": f"http://localhost:{port}", "Host": f"localhost:{port}", "Sec-Fetch-Site": "same-origin"}
    assert request(port, "POST", "/search", "search_query=shoes", own)[0] == 303
    assert session.info["turn"] == 1


def test_links_that_are_not_clickable_and_bad_forms_do_nothing(shop: tuple[int, Path, Session]) -> None:
    port, out, session = shop
    request(port, "GET", "/")
    for value in ("buy now", "../../etc/passwd", "%00", "x" * 5000, "\udc80".encode("utf-8", "surrogatepass").hex()):
        assert request(port, "GET", "/item/" + urllib.parse.quote(value))[0] == 303
    assert request(port, "POST", "/search", "&".join(f"f{i}=x" for i in range(100)), FORM)[0] == 400
    assert request(port, "POST", "/click", "click=no+such+button", FORM)[0] == 303
    assert request(port, "POST", "/nowhere", "a=b", FORM)[0] == 404
    assert session.info.get("turn", 0) == 0 and not records(out)
    # a reason with invalid UTF-8 and an encoded lone surrogate is kept as replacement characters, strict JSON
    assert request(port, "POST", "/abstain", "reason=%ED%A0%80%FF+gone", FORM)[0] == 303
    line = [x for x in out.read_text(encoding="utf-8").splitlines() if x.strip() and not x.startswith("#")][-1]
    record = json.loads(line, parse_constant=lambda c: pytest.fail(c))
    assert record["task_id"] == session.task_id and "\ufffd" in json.dumps(record, ensure_ascii=False)


def test_concurrent_requests_are_each_one_step_and_one_record(shop: tuple[int, Path, Session]) -> None:
    port, out, session = shop
    request(port, "GET", "/")
    statuses: list[int] = []

    def search(i: int) -> None:
        statuses.append(request(port, "POST", "/search", f"search_query=item+{i}", FORM)[0])

    threads = [threading.Thread(target=search, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [303] * 6 and session.info["turn"] == 6
    threads = [threading.Thread(target=request, args=(port, "POST", "/abstain", "reason=race", FORM))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = records(out)
    assert len(written) == 1 and written[0]["turns"] == 7
