"""Checks `iris serve` with the official Python SDK's client, as a gateway
in front of an agent file.

Usage: check_cli_serve.py COMMAND [ARGS...]

Prints one JSON report: the tools listed, a command tool's answer, a call
the file's policy asks about from a client without elicitation (refused)
and from one that approves it (run), and a deferred tool found through
`tool_search` and called.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def approve(context, params):
    return types.ElicitResult(action="accept", content={"approve": True})


async def session_report(command, elicitation):
    params = StdioServerParameters(command=command[0], args=command[1:])
    callback = approve if elicitation else None
    report = {}
    async with stdio_client(params) as streams:
        async with ClientSession(*streams[:2], elicitation_callback=callback) as session:
            await session.initialize()
            if not elicitation:
                listed = await session.list_tools()
                report["tools"] = [tool.name for tool in listed.tools]
                report["count"] = dump(await session.call_tool("count_words", {"text": "a b c"}))
                report["search"] = dump(
                    await session.call_tool("tool_search", {"intents": ["shout a word loudly"]})
                )
                report["shout"] = dump(await session.call_tool("shout", {"word": "hey"}))
            key = "write_with_elicitation" if elicitation else "write_without_elicitation"
            report[key] = dump(
                await session.call_tool("write_file", {"path": "note.txt", "content": "kept\n"})
            )
    return report


async def main():
    command = sys.argv[1:]
    report = await session_report(command, False)
    report.update(await session_report(command, True))
    print(json.dumps(report))


asyncio.run(main())
