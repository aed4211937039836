"""``abstain-gym serve``: the web shop's own HTML pages on localhost, so a person can shop as an agent does.

Every page is the env's observation in ``observation_mode="html"`` (the HTML the text modes are extracted from), with
a bar on top: the task, the turn, and an ABSTAIN form. Searching, clicking a button or a product link and abstaining
are env steps, made through the same session as ``abstain-gym mcp`` (the same task order, seeds and run-file
records), so a person's episodes are scored like any agent's. After each action the browser is redirected to ``/``
(post/redirect/get), so reloading a page never repeats an action; a link that is not clickable on the current page
only shows the page again.

Only the person at this browser acts: a request that changes the episode must come from the shop's own pages (a
page elsewhere could otherwise post an abstention, or buy with an image tag), and on a loopback address the Host
header must name it (DNS rebinding). Bad requests get a one-line error, never a traceback, and a client that
stalls a request is cut off after :data:`_TIMEOUT` seconds.
"""

from __future__ import annotations

import argparse
import html
import sys
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentabstain_gym.mcp_server import Session, SessionError

WEB_PREFIX = "AbstainWebShop"
_MAX_BODY = 64 * 1024
_TIMEOUT = 30.0  # seconds a client may take to send a request
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_STYLE = """<style>
body { font-family: sans-serif; margin: 0; }
#abstain-bar { background: #232f3e; color: #fff; padding: 8px 16px; display: flex; gap: 16px; align-items: center; }
#abstain-bar form { display: flex; gap: 6px; margin: 0; }
#abstain-bar input { width: 22em; }
#outcome { background: #fff3cd; padding: 12px 16px; border-bottom: 1px solid #e0c870; }
#page { padding: 8px 16px; }
form.click { display: inline; }
.btn { margin: 2px; }
.btn.selected { font-weight: bold; background: #ffd814; }
.result { margin: 6px 0; }
</style>"""


class ShopServer:
    """One episode at a time over HTTP: a :class:`~agentabstain_gym.mcp_server.Session` in HTML mode."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lock = threading.Lock()

    # ----- actions --------------------------------------------------------------------------------------------------
    def act(self, path: str, form: dict[str, str]) -> None:
        """Apply the action a POST (or a product link) stands for; malformed requests change nothing."""
        s = self.session
        with self.lock:
            if path == "/next":
                s.reset()
                return
            if not s.running:
                return
            s.seen = True
            if path == "/search" and form.get("search_query", "").strip():
                s.call("search", {"query": form["search_query"].strip()})
            elif path == "/click" and form.get("click", "") in self._clickables():
                s.call("click", {"button": form["click"]})
            elif path == "/abstain":
                s.call("abstain", {"reason": form.get("reason", "").strip() or "no reason given"})

    def follow_link(self, value: str) -> None:
        with self.lock:
            if self.session.running and value in self._clickables():
                self.session.seen = True
                self.session.call("click", {"button": value})

    def _clickables(self) -> list[str]:
        available = self.session.info.get("available_actions")
        return list(available.get("clickables") or []) if isinstance(available, dict) else []

    # ----- the page -------------------------------------------------------------------------------------------------
    def page(self) -> str:
        """The current page: the env's HTML with the task bar (and the outcome once the episode is over)."""
        s = self.session
        with self.lock:
            observation = s.observation
            if s.task_id is None or (not s.running and s.last_record is None):
                text, _state, failed = s.reset()
                observation = text if failed else s.observation
            s.seen = s.seen or s.running
            observation = observation or s.observation
            bar = self._bar()
            outcome = "" if s.running else self._outcome()
        if observation.lstrip().startswith("<!DOCTYPE html>"):
            head, _, rest = observation.partition("<body>")
            return head.replace("</head>", _STYLE + "\n</head>") + "<body>\n" + bar + outcome + \
                '<div id="page">' + rest.replace("</body>", "</div>\n</body>", 1)
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>WebShop</title>\n"
                f"{_STYLE}\n</head>\n<body>\n{bar}{outcome}<div id=\"page\"><pre>{html.escape(observation)}</pre>"
                "</div>\n</body>\n</html>\n")

    def _bar(self) -> str:
        s = self.session
        turn = s.info.get("turn", 0)
        abstain = ('<form method="post" action="/abstain" id="abstain-form"><input type="text" name="reason" '
                   'aria-label="Reason" placeholder="why the request cannot be fulfilled">'
                   '<button type="submit" class="btn">Abstain</button></form>') if s.running else ""
        return (f'<div id="abstain-bar"><span>{html.escape(s.env_id)} &middot; task '
                f'{html.escape(str(s.task_id))} &middot; turn {turn} of {s.max_turns}</span>{abstain}</div>\n')

    def _outcome(self) -> str:
        record = self.session.last_record or {}
        facts = ", ".join(f"{k}: {html.escape(str(record.get(k)))}" for k in
                          ("outcome", "should_abstain", "category", "task_reward", "turns", "tau", "w"))
        return (f'<div id="outcome"><strong>The episode is over.</strong> {facts}'
                '<form method="post" action="/next" class="click"><button type="submit" class="btn" id="next-task">'
                'Next task</button></form></div>\n')


def foreign(headers: Any, bound: str, port: int) -> str | None:
    """Why a request may not act on the episode (None: it may): it names another host while we listen on loopback,
    or the browser says it comes from another site (Sec-Fetch-Site, Origin or Referer)."""
    host = str(headers.get("Host") or "").strip().lower()
    if bound in ("127.0.0.1", "localhost", "::1") and host not in {f"{n}:{port}" for n in _LOOPBACK_NAMES}:
        return f"this shop answers to 127.0.0.1:{port} or localhost:{port}, not {host or 'no Host header'}"
    fetch_site = str(headers.get("Sec-Fetch-Site") or "").lower()
    if fetch_site and fetch_site not in ("same-origin", "none"):
        return "the request came from another site"
    for name in ("Origin", "Referer"):
        value = headers.get(name)
        if value is not None and urllib.parse.urlsplit(str(value)).netloc.lower() != host:
            return f"the request came from another site ({name})"
    return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line on stderr for a request that failed (a client that hung up, say), not the stdlib's traceback."""
        error = sys.exc_info()[1]
        print(f"abstain-gym serve: a request from {client_address[0]} failed: {type(error).__name__}: {error}",
              file=sys.stderr)


def make_handler(shop: ShopServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "abstain-gym-serve"
        timeout = _TIMEOUT

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

        def _refused(self) -> bool:
            bound, port = self.server.server_address[:2]
            why = foreign(self.headers, str(bound), int(port))
            if why is not None:
                self.send_error(HTTPStatus.FORBIDDEN, why)
            return why is not None

        def _send_page(self) -> None:
            body = shop.page().encode("utf-8")
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _redirect(self) -> None:
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", "/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            path = urllib.parse.urlsplit(self.path).path
            if self._refused():
                return
            if path == "/":
                self._send_page()
            elif path.startswith("/item/"):
                shop.follow_link(urllib.parse.unquote(path[len("/item/"):]))
                self._redirect()
            else:
                self.send_error(HTTPStatus.NOT_FOUND, "no such page; the shop is at /")

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            declared = str(self.headers.get("Content-Length") or "0").strip()
            if not declared.isdigit() or not declared.isascii():
                self.send_error(HTTPStatus.BAD_REQUEST, "Content-Length must be a number of bytes")
                return
            length = int(declared)
            if length > _MAX_BODY:
                self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "form too large")
                return
            path = urllib.parse.urlsplit(self.path).path
            if self._refused():
                return
            body = self.rfile.read(length)  # a client sending less than it declared times out (handle_error)
            if len(body) < length:
                self.send_error(HTTPStatus.BAD_REQUEST, "the form ended before its Content-Length")
                return
            raw = body.decode("utf-8", "replace")
            try:
                fields = urllib.parse.parse_qs(raw, keep_blank_values=True, max_num_fields=64)
            except ValueError:
                self.send_error(HTTPStatus.BAD_REQUEST, "too many form fields")
                return
            form = {k: v[0] for k, v in fields.items()}
            if path not in ("/search", "/click", "/abstain", "/next"):
                self.send_error(HTTPStatus.NOT_FOUND, "no such action")
                return
            shop.act(path, form)
            self._redirect()

    return Handler


def start_server(session: Session, host: str = "127.0.0.1", port: int = 3000) -> ThreadingHTTPServer:
    """A running server (``port=0``: any free port, read it from ``server.server_address``); stop with
    ``server.shutdown()``."""
    server = _HTTPServer((host, port), make_handler(ShopServer(session)))
    threading.Thread(target=server.serve_forever, name="abstain-gym-serve", daemon=True).start()
    return server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from agentabstain_gym.cli import nonnegative_int

    parser.add_argument("env", help="a web-shop env id, e.g. AbstainWebShop-v1")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=nonnegative_int, default=3000, help="port (default 3000; 0: any free port)")
    parser.add_argument("--task-id", default=None, help="the first task (default: the next task of the split)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="task order and episode seeds (as eval)")
    parser.add_argument("--split", default="test", help="train | val | test (default test)")
    parser.add_argument("--out", default=None, help="run file: each finished episode's record is appended")
    parser.add_argument("--agent-name", default="human", help="the agent name written into records (default human)")


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C; an episode left unfinished is recorded as an agent error, as in ``mcp``."""
    if not str(args.env).startswith(WEB_PREFIX):
        print(f"abstain-gym: error: serve shows web-shop pages; {args.env} is not a web-shop id "
              "(try AbstainWebShop-v1, or `abstain-gym play` for the other families)", file=sys.stderr)
        return 2
    try:
        session = Session(args.env, split=args.split, seed=args.seed, agent=args.agent_name, out=args.out,
                          task_id=args.task_id, env_kwargs={"observation_mode": "html"}, harness="serve")
    except SessionError as exc:
        print(f"abstain-gym: error: {exc}", file=sys.stderr)
        return 2
    try:
        server = _HTTPServer((args.host, args.port), make_handler(ShopServer(session)))
    except OSError as exc:
        print(f"abstain-gym: error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        session.close()
        return 2
    host, port = server.server_address[:2]
    print(f"abstain-gym serve: {args.env} on http://{host}:{port}/ (Ctrl-C stops)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        session.close()
    return 0
