"""Checks an Iris MCP server with the official Python SDK's client.

Usage: check_iris_server.py stdio COMMAND [ARGS...]
       check_iris_server.py http URL
       check_iris_server.py search COMMAND [ARGS...]

`search` checks a server whose deferred tools sit behind `tool_search`:
a deferred tool called before the search, the search, and the call again.

Prints one JSON report of what the client saw: the pages and tools of
`tools/list` (annotations, schemas, output schemas) and the answers to
calls of text, image, structured, failing and approval-needing tools, once
from a client without elicitation and once from one that approves.
"""

import asyncio
import json
import sys

import jsonschema

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def list_all(session):
    pages, tools, cursor = 0, [], None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        pages += 1
        tools.extend(dump(tool) for tool in result.tools)
        cursor = result.next_cursor
        if not cursor:
            return pages, tools


async def call(session, name, arguments):
    return dump(await session.call_tool(name, arguments))


async def approve(context, params):
    return types.ElicitResult(action="accept", content={"approve": True})


async def check(streams, report, elicitation):
    read, write = streams
    callback = approve if elicitation else None
    async with ClientSession(read, write, elicitation_callback=callback) as session:
        init = await session.initialize()
        report["server"] = dump(init.server_info)
        if not elicitation:
            report["pages"], report["tools"] = await list_all(session)
            report["square"] = await call(session, "square", {"value": 7})
            report["chart"] = await call(session, "chart", {})
            report["fail"] = await call(session, "fail", {})
            report["weather"] = await call(session, "weather", {"city": "Oslo"})
            report["forecast"] = await call(session, "forecast", {"city": "Oslo"})
            listed = next(t for t in report["tools"] if t["name"] == "forecast")
            jsonschema.validate(report["forecast"]["structuredContent"], listed["outputSchema"])
            report["forecast_validates"] = True
            report["bad_arguments"] = await call(session, "square", {"value": "seven"})
            report["asked_without_elicitation"] = await call(
                session, "delete_note", {"title": "groceries"}
            )
            long = await call(session, "long_report", {})
            report["long_report"] = long
            preview = long["content"][0]["text"]
            handle = preview[preview.index("artifact://"):].split()[0].strip("`.,;:()")
            read = await session.read_resource(handle)
            report["artifact"] = {"uri": handle, "text": read.contents[0].text}
        else:
            report["asked_with_elicitation"] = await call(
                session, "delete_note", {"title": "groceries"}
            )


def connect(transport, command):
    if transport == "stdio":
        return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    if transport == "http":
        return streamable_http_client(command[0])
    raise SystemExit(f"unknown transport {transport}")


async def search(command):
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as streams:
        async with ClientSession(*streams[:2]) as session:
            await session.initialize()
            return {
                "before": await call(session, "padding_0003", {}),
                "search": await call(session, "tool_search", {"intents": ["padding_0003"]}),
                "after": await call(session, "padding_0003", {}),
            }


async def main():
    transport, *command = sys.argv[1:]
    if transport == "search":
        print(json.dumps(await search(command)))
        return
    report = {}
    for elicitation in (False, True):
        async with connect(transport, command) as streams:
            await check(streams[:2], report, elicitation)
    print(json.dumps(report))


asyncio.run(main())
