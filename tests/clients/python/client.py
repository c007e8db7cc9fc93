#!/usr/bin/env python3
"""flowdeck driven by the official Python MCP SDK client (`mcp.client.stdio.stdio_client` and
`ClientSession`); the SDK gives the server pipes as stdin and stdout.

    python client.py --server BIN --workflows DIR
    FLOWDECK_HTTP_TOKEN=T python client.py --url URL --workflows DIR

The second drives the same round trip over streamable HTTP (`streamable_http_client`) against a
`flowdeck serve --http` of DIR at URL, with the bearer token; its close ends the session.

The full round trip: every tool group (terminal, authoring, runs, guided, dynamic with
tools/list_changed), resources, prompts, a tool error, and a clean close. DIR must be a scratch
copy of the bundled workflows/ folder: the client writes into it.

Exit status 0 with a one-line summary when everything passed; 1 with "FAIL ..." and the server's
stderr otherwise. Every wait has a deadline.
"""

from __future__ import annotations

import argparse
import builtins
import json
import os
import re
import sys
import tempfile
import time
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
import httpx2
from mcp.shared.exceptions import MCPError

CLIENT = "python-sdk"
CALL_S = 30.0  # one request
OVERALL_S = float(os.environ.get("FLOWDECK_CLIENT_DEADLINE_MS", "120000")) / 1000
LIST_CHANGED_S = 15.0
# The SDK closes stdin, then waits 2 s before it terminates the server; a server that exits on
# its own has written its status by then.
EXIT_S = 2.0

STATIC_TOOLS = [
    "open_terminal", "send_input", "get_screen_content", "search_output", "await_output",
    "list_terminal_sessions",
    "exit_terminal", "run_command", "resize_terminal", "get_workflow_schema", "create_workflow",
    "workflow_list", "workflow_get", "workflow_validate", "workflow_save", "workflow_rename",
    "workflow_delete", "workflow_preview_inputs", "workflow_resolve_inputs",
    "workflow_preview_rendered", "workflow_step_plan", "run_workflow", "run_status", "run_events",
    "run_list", "attention", "workflow_cancel", "run_feedback", "workflow_purge_history", "workflow_next",
]  # fmt: skip
PROMPTS = [
    "workflow_author", "workflow_extend", "workflow_fix_validation", "workflow_run_with_inputs",
    "format_command", "clarify_params",
]  # fmt: skip
WORKFLOW_NAME = re.compile(r"^[a-z0-9_]+$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


class CheckFailed(Exception):
    """A failed expectation: reported by its message alone."""


def check(condition: Any, message: str, detail: Any = None) -> None:
    if not condition:
        extra = "" if detail is None else ": " + json.dumps(detail, default=str)[:2000]
        raise CheckFailed(message + extra)


def manifest(name: str, description: str) -> str:
    return f"""name: {name}
description: {description}
arguments:
  WHO: {{ description: who to greet }}
return_values:
  GREETING: {{ description: the greeting }}
initial_state: greet
states:
  greet:
    action: {{ tool: run_command, params: {{ command: 'export GREETING="hello $WHO"' }} }}
    transitions: [{{ condition: success, next_state: done }}]
  done:
    action: {{ tool: get_screen_content }}
"""


class RoundTrip:
    def __init__(self, server: str | None, workflows: Path, status_file: Path, url: str | None = None) -> None:
        self.server = server
        self.url = url
        self.dir = workflows
        self.status_file = status_file
        self.passed: list[str] = []
        self.current = "start"
        self.session: ClientSession | None = None
        self.list_changes = 0
        self.list_changed = anyio.Event()

    # -- plumbing ---------------------------------------------------------------------------

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changes += 1
            self.list_changed.set()
        elif isinstance(message, Exception):
            print(f"{CLIENT}: transport error: {message!r}", file=sys.stderr)

    @property
    def s(self) -> ClientSession:
        assert self.session is not None
        return self.session

    async def call_raw(self, name: str, args: dict[str, Any], timeout: float = CALL_S, progress=None):
        with anyio.fail_after(timeout + 1):
            result = await self.s.call_tool(name, args, read_timeout_seconds=timeout, progress_callback=progress)
        return result.is_error, self.payload(name, result)

    @staticmethod
    def payload(name: str, result: types.CallToolResult) -> Any:
        """structuredContent, or for errors the JSON payload in the text content."""
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        if result.is_error:
            check(texts, f"{name}: an error result without text content", result.model_dump())
            try:
                return json.loads(texts[0])
            except ValueError:
                raise CheckFailed(f"{name}: the error's text content is not the JSON payload: {texts[0]}") from None
        check(result.structured_content is not None, f"{name}: no structuredContent", result.model_dump())
        check(texts, f"{name}: no text content beside structuredContent")
        try:
            parsed = json.loads(texts[0])
        except ValueError:
            raise CheckFailed(f"{name}: the text content is not JSON: {texts[0][:500]}") from None
        check(parsed == result.structured_content, f"{name}: the text content and structuredContent differ")
        return result.structured_content

    async def ok(self, name: str, args: dict[str, Any], timeout: float = CALL_S, progress=None) -> Any:
        is_error, payload = await self.call_raw(name, args, timeout, progress)
        check(not is_error, f"{name} failed", payload)
        return payload

    async def tool_error(self, name: str, args: dict[str, Any]) -> Any:
        is_error, payload = await self.call_raw(name, args)
        check(is_error, f"{name} should have failed", payload)
        return payload

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            with anyio.fail_after(CALL_S):
                page = await self.s.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def next_list_changed(self, seen: int, what: str) -> None:
        try:
            with anyio.fail_after(LIST_CHANGED_S):
                while self.list_changes <= seen:
                    self.list_changed = anyio.Event()
                    await self.list_changed.wait()
        except TimeoutError:
            raise CheckFailed(f"notifications/tools/list_changed {what}: nothing within {LIST_CHANGED_S} s") from None

    async def read(self, uri: str) -> str:
        with anyio.fail_after(CALL_S):
            r = await self.s.read_resource(uri)
        check(
            r.contents and str(r.contents[0].uri) == uri and isinstance(r.contents[0], types.TextResourceContents),
            f"resources/read {uri}",
            r.model_dump(),
        )
        return r.contents[0].text

    # -- the round trip ---------------------------------------------------------------------

    async def run(self) -> str:
        d = self.dir
        bundled = sorted(
            p.stem for p in d.iterdir() if p.suffix in (".yaml", ".yml", ".json") and WORKFLOW_NAME.match(p.stem)
        )
        check("git_health" in bundled and "guided_review" in bundled, f"{d} is not a copy of workflows/", bundled)
        if self.url:
            return await self.run_over_http(bundled)
        # The SDK does not expose the child; a shell in front of it records its exit status.
        params = StdioServerParameters(
            command="/bin/sh",
            args=["-c", '"$@"; echo "$?" > "$0"', str(self.status_file), self.server, "mcp", "--workflows", str(d),
                  "--toolsets", "all"],
            env={"SHELL": "/bin/bash"},
        )
        stderr = tempfile.TemporaryFile(mode="w+")
        try:
            async with stdio_client(params, errlog=stderr) as (read, write):
                async with ClientSession(read, write, message_handler=self.on_message) as session:
                    self.session = session
                    await self.steps(bundled)
                    self.current = "close"
                    started = time.monotonic()
            elapsed = time.monotonic() - started
        except BaseException:
            stderr.seek(0)
            self.stderr_tail = stderr.read()[-4096:]
            raise
        stderr.close()
        check(
            self.status_file.exists() and self.status_file.read_text().strip() != "",
            f"the server did not exit within {EXIT_S:.0f} s of its stdin closing (the SDK terminated it)",
        )
        status = self.status_file.read_text().strip()
        check(status == "0", f"the server exited with status {status}, not 0")
        check(elapsed < EXIT_S, f"the server took {elapsed:.1f} s to exit after its stdin closed")
        self.passed.append("close")
        return f"exit 0 in {elapsed * 1000:.0f} ms"

    async def run_over_http(self, bundled: list[str]) -> str:
        token = os.environ["FLOWDECK_HTTP_TOKEN"]
        # A read may wait as long as a waiting run: the SDK's own defaults.
        timeout = httpx2.Timeout(CALL_S, read=300.0)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:
            async with streamable_http_client(self.url, http_client=http) as (read, write):
                async with ClientSession(read, write, message_handler=self.on_message) as session:
                    self.session = session
                    await self.steps(bundled)
                    self.current = "close"
                    started = time.monotonic()
        # Leaving the transport ended the session (DELETE).
        elapsed = time.monotonic() - started
        self.passed.append("close")
        return f"session ended in {elapsed * 1000:.0f} ms"

    async def step(self, name: str, body) -> None:
        self.current = name
        await body()
        self.passed.append(name)

    async def steps(self, bundled: list[str]) -> None:
        d = self.dir

        async def initialize() -> None:
            with anyio.fail_after(CALL_S):
                init = await self.s.initialize()
            check(init.server_info.name == "flowdeck", "serverInfo.name is not flowdeck", init.server_info.model_dump())
            caps = init.capabilities
            check(caps.tools and caps.resources and caps.prompts, "tools, resources and prompts are not all offered")
            check(caps.tools.list_changed is True, "tools.listChanged is not declared", caps.model_dump())

        async def tools_list() -> None:
            tools = await self.list_tools()
            names = [t.name for t in tools]
            for name in STATIC_TOOLS:
                check(name in names, f"tools/list lacks {name}", names)
            for name in bundled:
                check(f"wf_{name}" in names, f"tools/list lacks wf_{name}", names)
            for t in tools:
                check(t.input_schema.get("type") == "object", f"{t.name}: inputSchema.type is not object", t.input_schema)
                if t.output_schema is not None:
                    check(t.output_schema.get("type") == "object", f"{t.name}: outputSchema.type is not object")
                check(t.description and len(t.description) > 20, f"{t.name}: no useful description")

        async def terminal() -> None:
            opened = await self.ok(
                "open_terminal",
                {
                    "command": ["bash", "--norc", "--noprofile"],
                    "name": "python-client",
                    "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
                },
            )
            sid = opened["session_id"]
            check(isinstance(sid, str) and opened["running"] is True, "open_terminal", opened)
            ran = await self.ok("run_command", {"session_id": sid, "command": "echo hi", "timeout": 20})
            check(
                ran["outcome"] == "completed" and ran["exit_code"] == 0 and ran["output"] == "hi",
                "run_command echo hi",
                ran,
            )
            sent = await self.ok("send_input", {"session_id": sid, "input_text": "echo MARK_$((6*7))\n"})
            check(sent["bytes"] > 0, "send_input queued nothing", sent)
            waited = await self.ok("await_output", {"session_id": sid, "pattern": "^MARK_42$", "timeout": 20})
            check(waited["outcome"] == "matched" and waited["matched_text"] == "MARK_42", "await_output", waited)
            screen = await self.ok("get_screen_content", {"session_id": sid})
            check("MARK_42" in screen["content"], "the screen lacks MARK_42", screen)
            listed = await self.ok("list_terminal_sessions", {})
            check(any(s["session_id"] == sid for s in listed["sessions"]), "list_terminal_sessions", listed)
            resized = await self.ok("resize_terminal", {"session_id": sid, "cols": 100, "rows": 30})
            check(
                (resized["cols"], resized["rows"], resized["clamped"]) == (100, 30, False), "resize_terminal", resized
            )
            closed = await self.ok("exit_terminal", {"session_id": sid})
            check(closed["teardown"]["survivors"] == 0, "exit_terminal left survivors", closed)

        saved = "py_hello"

        async def authoring() -> None:
            schema = await self.ok("get_workflow_schema", {})
            check(schema["schema"]["properties"].get("states"), "get_workflow_schema has no states property")
            listed = sorted(w["name"] for w in (await self.ok("workflow_list", {}))["workflows"])
            check(listed == bundled, "workflow_list is not the folder", listed)
            doc = await self.ok("workflow_get", {"name": "git_health"})
            check(doc["format"] == "yaml" and HEX64.match(doc["version"]), "workflow_get format or version")
            check(doc["content"] == (d / "git_health.yaml").read_text(), "workflow_get content is not the file")
            broken = "name: x\ndescription: d\ninitial_state: a\nstates: {a: {action: {tool: sned_input}}}\n"
            checked = await self.ok("workflow_validate", {"content": broken})
            check(checked["valid"] is False and checked["violations"], "a broken manifest passed", checked)
            v = checked["violations"][0]
            check(
                isinstance(v.get("line"), int) and v["line"] >= 1 and isinstance(v.get("column"), int),
                "violations carry no line and column",
                v,
            )
            good = await self.ok("workflow_validate", {"content": manifest(saved, "Greets someone.")})
            check(good["valid"] is True, "a good manifest failed validation", good)
            stored = await self.ok(
                "workflow_save", {"content": manifest(saved, "Greets someone (saved by the Python client).")}
            )
            check(stored["name"] == saved and HEX64.match(stored["version"]), "workflow_save", stored)
            plan = await self.ok("workflow_step_plan", {"name": saved})
            check([s["state"] for s in plan["steps"]] == ["greet", "done"], "workflow_step_plan", plan)
            inputs = await self.ok("workflow_preview_inputs", {"name": saved})
            check([i["name"] for i in inputs["inputs"]] == ["WHO"], "workflow_preview_inputs", inputs)
            renamed = await self.ok("workflow_rename", {"name": saved, "new_name": f"{saved}_renamed"})
            check(f"{saved}_renamed" in json.dumps(renamed), "workflow_rename", renamed)
            await self.ok("workflow_delete", {"name": f"{saved}_renamed"})
            after = await self.ok("workflow_list", {})
            check(not any(w["name"].startswith(saved) for w in after["workflows"]), "not deleted", after)

        async def runs() -> None:
            progress: list[Any] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append(message)

            result = await self.ok(
                "run_workflow",
                {"workflow_name": "git_health", "inputs": {"REPO_DIR": str(d)}, "wait": True},
                timeout=60,
                progress=on_progress,
            )
            check(result["success"] is True and result["final_state"] == "completed", "git_health", result)
            check(isinstance(result["return_values"].get("GIT_HEALTH"), str), "no GIT_HEALTH", result)
            check(progress, "no notifications/progress while waiting for the run")
            started = await self.ok(
                "run_workflow", {"workflow_name": "git_health", "inputs": {"REPO_DIR": str(d)}, "wait": False}
            )
            run_id = started["run_id"]
            check(isinstance(run_id, str), "run_workflow wait:false returned no run_id", started)
            cursor, finished, events = 0, False, 0
            until = time.monotonic() + 60
            while not finished:
                check(time.monotonic() < until, "run_events did not report the run finished within 60 s")
                page = await self.ok("run_events", {"run_id": run_id, "after": cursor, "wait_seconds": 10}, timeout=20)
                check(isinstance(page["next_cursor"], int) and page["next_cursor"] >= cursor, "run_events", page)
                cursor = page["next_cursor"]
                events += len(page["events"])
                finished = page["finished"] is True
            check(events > 0, "run_events returned no events")
            status = await self.ok("run_status", {"run_id": run_id})
            check(
                status["status"] == "finished" and status["result"]["final_state"] == "completed", "run_status", status
            )
            listed = await self.ok("run_list", {})
            check(run_id in json.dumps(listed["runs"]), "run_list lacks the run", listed)
            await self.ok("run_feedback", {"run_id": run_id, "score": 1, "text": "fine, from the Python client"})

        async def guided() -> None:
            nxt = await self.ok(
                "workflow_next", {"workflowId": "guided_review", "completedSteps": ["show_changes"]}
            )
            check(nxt["isComplete"] is False and nxt["step"]["id"] == "ask_summary", "workflow_next", nxt)
            check(nxt["guidance"]["validationCriteria"], "workflow_next gave no validation criteria", nxt)

        async def dynamic() -> None:
            result = await self.ok("wf_git_health", {"REPO_DIR": str(d)}, timeout=60)
            check(result["final_state"] == "completed", "wf_git_health did not complete", result)
            # A manifest written on disk by someone else becomes a tool, announced by list_changed.
            name = "py_disk"
            seen = self.list_changes
            (d / f"{name}.yaml").write_text(manifest(name, "Greets someone (written on disk)."))
            while True:
                await self.next_list_changed(seen, f"for wf_{name}")
                seen = self.list_changes
                if any(t.name == f"wf_{name}" for t in await self.list_tools()):
                    break
            ran = await self.ok(f"wf_{name}", {"WHO": "disk"}, timeout=60)
            check(ran["return_values"].get("GREETING") == "hello disk", f"wf_{name}", ran)

        async def resources() -> None:
            with anyio.fail_after(CALL_S):
                listed = await self.s.list_resources()
                templates = await self.s.list_resource_templates()
            uris = [str(r.uri) for r in listed.resources]
            for uri in ("flowdeck://workflows", "flowdeck://spec", "flowdeck://schema"):
                check(uri in uris, f"resources/list lacks {uri}", uris)
            uri_templates = [t.uri_template for t in templates.resource_templates]
            check("flowdeck://workflows/{name}" in uri_templates, "no workflows/{name} template", uri_templates)
            workflows = json.loads(await self.read("flowdeck://workflows"))
            check(any(w["name"] == "git_health" for w in workflows["workflows"]), "flowdeck://workflows")
            check("initial_state" in await self.read("flowdeck://spec"), "flowdeck://spec is not the reference")
            stored = await self.read("flowdeck://workflows/git_health")
            check(stored == (d / "git_health.yaml").read_text(), "flowdeck://workflows/git_health is not the file")

        async def prompts() -> None:
            with anyio.fail_after(CALL_S):
                listed = await self.s.list_prompts()
                got = await self.s.get_prompt("workflow_run_with_inputs", {"name": "git_health"})
            names = [p.name for p in listed.prompts]
            for name in PROMPTS:
                check(name in names, f"prompts/list lacks {name}", names)
            text = "\n".join(getattr(m.content, "text", "") for m in got.messages)
            check(got.messages and "REPO_DIR" in text, "prompts/get workflow_run_with_inputs", got.model_dump())

        async def errors() -> None:
            payload = await self.tool_error("workflow_get", {"name": "no_such_workflow"})
            check(
                (payload.get("error_code"), payload.get("code"), payload.get("category"))
                == ("WORKFLOW_NOT_FOUND", -32001, "not_found"),
                "the error payload",
                payload,
            )
            for field, kind in (("message", str), ("suggested_action", str), ("correlation_id", str), ("retryable", bool)):
                check(isinstance(payload.get(field), kind), f"the error payload's {field}", payload)
            try:
                with anyio.fail_after(CALL_S):
                    await self.s.call_tool("no_such_tool", {})
            except MCPError as error:
                check(error.code == -32602, "an unknown tool is not a -32602 protocol error", error.message)
            else:
                raise CheckFailed("calling an unknown tool did not fail")

        for name, body in (
            ("initialize", initialize),
            ("tools/list", tools_list),
            ("terminal", terminal),
            ("authoring", authoring),
            ("runs", runs),
            ("guided", guided),
            ("dynamic", dynamic),
            ("resources", resources),
            ("prompts", prompts),
            ("errors", errors),
        ):
            await self.step(name, body)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.environ.get("FLOWDECK_BIN"), help="the flowdeck binary")
    parser.add_argument("--workflows", default=os.environ.get("FLOWDECK_WORKFLOWS"), help="a scratch workflows copy")
    parser.add_argument("--url", help="a flowdeck serve --http endpoint (token in FLOWDECK_HTTP_TOKEN)")
    opts = parser.parse_args()
    if opts.url and not os.environ.get("FLOWDECK_HTTP_TOKEN"):
        parser.error("--url needs FLOWDECK_HTTP_TOKEN")
    if not opts.workflows or not (opts.server or opts.url):
        parser.error("give --server BIN (or FLOWDECK_BIN) or --url URL, and --workflows DIR")
    with tempfile.TemporaryDirectory() as scratch:
        trip = RoundTrip(opts.server, Path(opts.workflows), Path(scratch) / "exit-status", opts.url)
        try:
            with anyio.fail_after(OVERALL_S):
                how = await trip.run()
        except BaseException as error:  # noqa: BLE001 - every failure is reported the same way
            message = describe(error, OVERALL_S)
            print(f"FAIL [{CLIENT}] {trip.current}: {message}", file=sys.stderr)
            tail = getattr(trip, "stderr_tail", "")
            if tail.strip():
                print(f"--- server stderr (last 4 KiB) ---\n{tail}", file=sys.stderr)
            return 1
    print(f"PASS [{CLIENT} {package_version('mcp')}] {', '.join(trip.passed)} ({how})")
    return 0


def describe(error: BaseException, overall: float) -> str:
    """A failure in words: our checks and the SDK's errors by message, anything else with its trace."""
    group = getattr(builtins, "BaseExceptionGroup", ())
    if isinstance(error, group) and len(error.exceptions) == 1:
        return describe(error.exceptions[0], overall)
    if isinstance(error, CheckFailed):
        return str(error)
    if isinstance(error, MCPError):
        return f"MCP error {error.code}: {error.message}"
    if isinstance(error, TimeoutError):
        return f"no answer in time (each request has {CALL_S:.0f} s, the whole round trip {overall:.0f} s)"
    import traceback

    return "".join(traceback.format_exception(error)).rstrip()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
