"""An MCP server written to misbehave, speaking raw JSON-RPC on stdio.

Usage: hostile_server.py MODE

  catalog   answers `initialize`, then lists a catalog with an invalid
            name, a duplicate name, a 10 MB description, an input schema
            that is not an object, one with `$ref` cycles, and tools whose
            calls answer a false PNG, 50 MB of text, or nothing at all
  garbage   writes lines that are not JSON-RPC around its answers
  mute      never answers `initialize`

With HOSTILE_LOG set, every message received is appended to that file.
"""

import json
import os
import sys

MODE = sys.argv[1]
# Every message received is appended here when set, for tests that check
# what reached the wire.
LOG = os.environ.get("HOSTILE_LOG")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name, schema=None, description="A tool."):
    return {
        "name": name,
        "description": description,
        "inputSchema": schema if schema is not None else {"type": "object"},
    }


CATALOG = [
    tool("ok"),
    tool("bad name!"),
    tool("dup"),
    tool("dup"),
    tool("long_description", description="x" * (10 * 1024 * 1024)),
    tool("not_an_object", schema="string"),
    tool(
        "cyclic",
        schema={
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/node"}},
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/$defs/node"}},
                }
            },
        },
    ),
    tool("fake_png"),
    tool("huge_text"),
    tool("silent"),
]


def answer_call(request):
    name = request["params"]["name"]
    if name == "fake_png":
        # "hello world" in base64: not a PNG.
        content = [{"type": "image", "data": "aGVsbG8gd29ybGQ=", "mimeType": "image/png"}]
    elif name == "huge_text":
        content = [{"type": "text", "text": "y" * (50 * 1024 * 1024)}]
    elif name == "silent":
        return
    else:
        content = [{"type": "text", "text": f"{name} ran"}]
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": content}})


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method = request.get("method")
    if LOG:
        with open(LOG, "a") as log:
            log.write(json.dumps(request) + "\n")
    if "id" not in request:
        continue
    if method == "initialize":
        if MODE == "mute":
            continue
        if MODE == "garbage":
            sys.stdout.write("this is not JSON-RPC\n{\"half\": \n")
            sys.stdout.flush()
        send({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "0"},
            },
        })
    elif method == "tools/list":
        if MODE == "garbage":
            sys.stdout.write("garbage before the list\n")
            sys.stdout.flush()
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": [tool("ok")]}})
        else:
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": CATALOG}})
    elif method == "tools/call":
        answer_call(request)
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32601, "message": f"no method {method}"}})
