"""An upstream MCP server that asks its caller the 2026-07-28 way (SEP-2322:
an `InputRequiredResult` in place of the tool's result, the answers sent
back with the call), served over stdio with the official Python SDK.

It also has `ask_name_slowly`, which asks the older way (a request of its
own while the call runs), for a gateway with several calls out at once.

Its tools are the conformance suite's `input-required-result` fixtures, by
their names and with the input requests' keys the suite checks, so the
suite's scenarios can run through the gateway: `iris-conformance-server
--upstream-2026 PYTHON mrtr_server.py` serves them beside its own tools.
The SDK seals each `requestState` (the caller sees only opaque text).
"""

import sys
from typing import Any

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListRootsRequest,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)

server = MCPServer("mrtr-fixtures")


def form(message: str, field: str, kind: str = "string") -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        )
    )


def sample(text: str, max_tokens: int) -> CreateMessageRequest:
    return CreateMessageRequest(
        params=CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=text))],
            max_tokens=max_tokens,
        )
    )


def said(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)])


def answers(ctx: Context) -> dict[str, Any]:
    """The caller's answers, as plain JSON by key."""
    return {
        key: (value.model_dump(mode="json", by_alias=True) if hasattr(value, "model_dump") else value)
        for key, value in (ctx.input_responses or {}).items()
    }


@server.tool()
def test_input_required_result_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask the caller's name, then greet them."""
    given = answers(ctx)
    if "user_name" not in given:
        return InputRequiredResult(input_requests={"user_name": form("What is your name?", "name")})
    name = (given["user_name"].get("content") or {}).get("name", "stranger")
    return said(f"Hello, {name}!")


@server.tool()
def test_input_required_result_sampling(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask the caller's model a question, then repeat its answer."""
    given = answers(ctx)
    if "capital_question" not in given:
        return InputRequiredResult(
            input_requests={"capital_question": sample("What is the capital of France?", 100)}
        )
    content = given["capital_question"].get("content") or {}
    return said(f"The model said: {content.get('text', '')}")


@server.tool()
def test_input_required_result_list_roots(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask the caller for its roots, then name them."""
    given = answers(ctx)
    if "client_roots" not in given:
        return InputRequiredResult(input_requests={"client_roots": ListRootsRequest()})
    roots = [r.get("uri", "") for r in given["client_roots"].get("roots", [])]
    return said(f"Roots: {', '.join(roots)}")


@server.tool()
def test_input_required_result_request_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask for a confirmation, keeping a state the caller echoes back."""
    if ctx.request_state != "round-1" or "confirm" not in answers(ctx):
        return InputRequiredResult(
            input_requests={"confirm": form("Please confirm", "ok", "boolean")},
            request_state="round-1",
        )
    return said("state-ok: the state came back as it was given")


@server.tool()
def test_input_required_result_multiple_inputs(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask a person, a model and the caller's roots at once."""
    given = answers(ctx)
    if not {"user_name", "greeting", "client_roots"} <= given.keys():
        return InputRequiredResult(
            input_requests={
                "user_name": form("What is your name?", "name"),
                "greeting": sample("Generate a greeting", 50),
                "client_roots": ListRootsRequest(),
            },
            request_state="all-three",
        )
    return said("all three answered")


@server.tool()
def test_input_required_result_multi_round(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask a name, then a colour, one round each."""
    given = answers(ctx)
    if ctx.request_state == "round-2" and "step2" in given:
        return said("both rounds answered")
    if ctx.request_state == "round-1" and "step1" in given:
        return InputRequiredResult(
            input_requests={"step2": form("Step 2: What is your favorite color?", "color")},
            request_state="round-2",
        )
    return InputRequiredResult(
        input_requests={"step1": form("Step 1: What is your name?", "name")},
        request_state="round-1",
    )


@server.tool()
def test_input_required_result_tampered_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask for a confirmation under a state the caller must send back untouched."""
    if ctx.request_state != "untouched" or "confirm" not in answers(ctx):
        return InputRequiredResult(
            input_requests={"confirm": form("Please confirm", "ok", "boolean")},
            request_state="untouched",
        )
    return said("the state came back untouched")


@server.tool()
def test_input_required_result_capabilities(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Ask only what the caller said it can answer (a person, a model)."""
    if answers(ctx):
        return said("answered")
    declared = ctx.client_capabilities
    requests = {}
    if declared is not None and declared.elicitation is not None:
        requests["user_name"] = form("What is your name?", "name")
    if declared is not None and declared.sampling is not None:
        requests["greeting"] = sample("Generate a greeting", 50)
    if not requests:
        return said("the caller can be asked nothing")
    return InputRequiredResult(input_requests=requests)


class Name(BaseModel):
    name: str


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False))
async def ask_name_slowly(ctx: Context, wait_ms: int = 300) -> str:
    """Wait a moment, then ask the caller's name while the call runs (the
    way of the 2025 revisions: a request of the server's own, sent on the
    call's response stream over HTTP)."""
    await anyio.sleep(wait_ms / 1000)
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}!"


if __name__ == "__main__":
    # `mrtr_server.py` serves over stdio; `mrtr_server.py http PORT` over
    # streamable HTTP on 127.0.0.1:PORT.
    if sys.argv[1:2] == ["http"]:
        anyio.run(lambda: server.run_streamable_http_async(port=int(sys.argv[2])))
    else:
        server.run("stdio")
