#!/usr/bin/env python3
"""The per-call cost an agent feels, for `cargo bench --bench mcp` (benches/mcp.rs runs this
under each installed SDK): the official Python MCP SDK's client against `flowdeck mcp`, beside a
raw JSON-RPC client (plain pipes, one JSON line each way) against the same server in the same run.

    python bench.py --server BIN --workflows DIR [--rounds N] [--terminals M] [--toolsets LIST]
    python bench.py --server BIN --workflows DIR --http [--rounds N]

Measures, each over N calls after a warm-up:
  - `list_terminal_sessions` with no terminal open, then with M open (the SDKs check every
    result against the tool's outputSchema, so the schema's shape is the agent's latency);
  - the echo round trip: `send_input` of `echo tK` and `await_output` for `tK`.

Prints one JSON object: {"sdk": "mcp 2.3.0", "raw": {...}, "client": {...}}, each holding
{"noop_0": [median, p90], "noop_M": [...], "echo": [...]} in milliseconds. Works with SDK 1.x
and 2.x (the calls it uses are the same in both). Every wait has a deadline.

With --http, no SDK: raw clients only, the no-op call through the stdio relay (`flowdeck mcp`)
against the same over streamable HTTP (`flowdeck serve --http` of the folder, which this
starts, one keep-alive socket and session, read without an HTTP library), alternating, and the
content type HTTP answered with: {"relay": [median, p90], "http": [...], "http_content_type": "..."}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import socket
import sys
import tempfile
import time
from importlib.metadata import version as package_version

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CALL_S = 30.0
SHELL = {"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}


def figures(samples: list[float]) -> list[float]:
    ordered = sorted(samples)
    return [
        round(statistics.median(ordered), 3),
        round(ordered[int(len(ordered) * 0.9)], 3),
    ]


class Raw:
    """JSON-RPC lines over the server's pipes: the cost of flowdeck and the pipes alone."""

    def __init__(self, server: str, workflows: str, toolsets: str) -> None:
        self.process = subprocess.Popen(
            [server, "--workflows", workflows, "mcp", "--toolsets", toolsets],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench-raw", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        deadline = time.monotonic() + CALL_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server ended during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"{method}: no answer in {CALL_S} s")

    def call(self, name: str, arguments: dict) -> dict:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content']}")
        return result.get("structuredContent") or {}

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Sdk:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, arguments: dict) -> dict:
        with anyio.fail_after(CALL_S):
            result = await self.session.call_tool(name, arguments)
        # SDK 2.x names the fields in Python's way, 1.x as the protocol does.
        if getattr(result, "is_error", None) or getattr(result, "isError", None):
            raise RuntimeError(f"{name}: {result.content}")
        return getattr(result, "structured_content", None) or result.structuredContent or {}


class RawHttp:
    """JSON-RPC over streamable HTTP on one keep-alive socket, with nothing in between: requests
    written whole, answers read by their Content-Length (or their chunks). Python's
    http.client costs about 0.2 ms a call by itself, more than the server's own HTTP work, so
    it would measure the library rather than flowdeck."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=CALL_S)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.socket.makefile("rb")
        self.headers = (
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
        )
        self.next_id = 0
        self.content_type = ""
        headers, _ = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench-raw-http", "version": "1"},
                },
            }
        )
        self.headers += (
            f"Mcp-Session-Id: {headers['mcp-session-id']}\r\n"
            "MCP-Protocol-Version: 2025-11-25\r\n"
        )
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message: dict) -> tuple[dict, bytes]:
        body = json.dumps(message).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{self.headers}"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.socket.sendall(head.encode() + body)
        status = self.reader.readline().split()
        if len(status) < 2 or int(status[1]) >= 300:
            raise RuntimeError(f"HTTP answered {status!r}")
        headers = {}
        while (line := self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            answer = self.reader.read(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            answer = b""
            while (size := int(self.reader.readline().strip(), 16)) > 0:
                answer += self.reader.read(size)
                self.reader.readline()
            self.reader.readline()
        else:
            answer = b""
        self.content_type = headers.get("content-type", "")
        return headers, answer

    def call(self, name: str, arguments: dict) -> None:
        self.next_id += 1
        _, answer = self.post(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        if b'"isError":true' in answer or b"structuredContent" not in answer:
            raise RuntimeError(f"{name}: {answer[:200]!r}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relay_against_http(server: str, workflows: str, rounds: int) -> dict:
    # A folder of its own: the server an earlier client started on `workflows` may still be
    # ending, and a folder has one server.
    scratch = tempfile.mkdtemp(prefix="flowdeck-bench-")
    workflows = shutil.copytree(workflows, os.path.join(scratch, "workflows"))
    token = "bench-" + os.urandom(16).hex()
    port = free_port()
    host = subprocess.Popen(
        [server, "--workflows", workflows, "serve", "--http", f"127.0.0.1:{port}"],
        env=dict(os.environ, FLOWDECK_HTTP_TOKEN=token),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + CALL_S
        while True:
            try:
                over_http = RawHttp(port, token)
                break
            except OSError:
                if time.monotonic() > deadline or host.poll() is not None:
                    raise RuntimeError("flowdeck serve --http did not answer") from None
                time.sleep(0.05)
        relay = Raw(server, workflows, "terminal")
        samples: dict[str, list[float]] = {"relay": [], "http": []}
        for i in range(rounds + 30):
            for label, client in (("relay", relay), ("http", over_http)):
                start = time.perf_counter()
                client.call("list_terminal_sessions", {})
                if i >= 30:
                    samples[label].append((time.perf_counter() - start) * 1000)
        relay.close()
        return {
            "relay": figures(samples["relay"]),
            "http": figures(samples["http"]),
            "http_content_type": over_http.content_type,
        }
    finally:
        host.terminate()
        host.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)


async def measure(call, rounds: int, terminals: int) -> tuple[dict, list[str]]:
    """The figures of one client; `call` is async (the SDK) or wrapped to look so (raw)."""
    out: dict[str, list[float]] = {}

    async def timed(label: str, one) -> None:
        for _ in range(max(5, rounds // 10)):
            await one()
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            await one()
            samples.append((time.perf_counter() - start) * 1000)
        out[label] = figures(samples)

    await timed("noop_0", lambda: call("list_terminal_sessions", {}))
    ids = []
    for _ in range(terminals):
        opened = await call("open_terminal", SHELL)
        ids.append(opened["session_id"])
    await timed(f"noop_{terminals}", lambda: call("list_terminal_sessions", {}))
    counter = iter(range(10**9))

    async def echo() -> None:
        k = next(counter)
        await call("send_input", {"session_id": ids[0], "input_text": f"echo t{k}\n"})
        await call("await_output", {"session_id": ids[0], "pattern": f"t{k}\\r?\\n", "timeout": 10})

    await timed("echo", echo)
    for id in ids:
        await call("exit_terminal", {"session_id": id})
    return out, ids


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--workflows", required=True)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--terminals", type=int, default=3)
    parser.add_argument("--toolsets", default="terminal")
    parser.add_argument("--http", action="store_true")
    opts = parser.parse_args()
    if opts.http:
        print(json.dumps(relay_against_http(opts.server, opts.workflows, opts.rounds)))
        return 0

    raw = Raw(opts.server, opts.workflows, opts.toolsets)

    async def raw_call(name: str, arguments: dict) -> dict:
        return raw.call(name, arguments)

    try:
        raw_figures, _ = await measure(raw_call, opts.rounds, opts.terminals)
    finally:
        raw.close()

    params = StdioServerParameters(
        command=opts.server,
        args=["--workflows", opts.workflows, "mcp", "--toolsets", opts.toolsets],
        env=dict(os.environ),
    )
    with anyio.fail_after(CALL_S * 20 + opts.rounds * 3):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # The SDK lists the tools to learn their output schemas on the first call;
                # listing first keeps that out of the figures.
                await session.list_tools()
                client_figures, _ = await measure(Sdk(session).call, opts.rounds, opts.terminals)
    print(
        json.dumps(
            {
                "sdk": f"mcp {package_version('mcp')}",
                "raw": raw_figures,
                "client": client_figures,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
