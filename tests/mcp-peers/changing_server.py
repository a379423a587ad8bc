"""An MCP server whose catalog changes, speaking raw JSON-RPC on stdio.

It lists `stay`, `old` and `change`. Calling `change` answers at once,
then replaces `old` with `fresh` (a tool for converting temperatures) and
sends `notifications/tools/list_changed`. A call of `old` is answered one
second after it arrives, from another thread, so that a catalog change
can happen while it is in flight.
"""

import json
import sys
import threading
import time

WRITE = threading.Lock()
CHANGED = threading.Event()


def send(message):
    with WRITE:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def tool(name, description):
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
    }


def catalog():
    tools = [
        tool("stay", "A tool that is listed before and after the change."),
        tool("change", "Changes this server's catalog."),
    ]
    if CHANGED.is_set():
        tools.append(tool("fresh", "Convert a temperature from Celsius to Fahrenheit."))
    else:
        tools.append(tool("old", "A slow tool that goes away in the change."))
    return tools


def text(request, words):
    send({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"content": [{"type": "text", "text": words}]},
    })


def answer_later(request):
    time.sleep(1.0)
    text(request, "old ran")


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method = request.get("method")
    if "id" not in request:
        continue
    if method == "initialize":
        send({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "changing", "version": "0"},
            },
        })
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": catalog()}})
    elif method == "tools/call":
        name = request["params"]["name"]
        if name == "old":
            threading.Thread(target=answer_later, args=(request,), daemon=True).start()
        elif name == "change":
            text(request, "changed")
            CHANGED.set()
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        else:
            text(request, f"{name} ran")
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32601, "message": f"no method {method}"}})
