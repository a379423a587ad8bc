#!/usr/bin/env python3
"""Writes a workspace of crates with the same 100 tools, for measuring what
`#[iris::tool]` costs at compile time:

- plain:      100 plain functions;
- derive:     the same functions taking hand-written
              `#[derive(Deserialize, JsonSchema)]` argument structs;
- dispatch:   `derive`, plus what a host needs to serve them by hand: each
              tool's schema, and a `match` from name and JSON to the call;
- iris:       the same functions under `#[iris::tool]`, not registered;
- registered: `iris`, plus one function registering all 100 in a
              `ToolRegistry` (what every user writes);
- cataloged:  `iris` with the `assembly` feature: each tool enters the
              link-time catalog that agent files name tools from;
- toolbox:    the same 100 as `#[tool]` methods of one `#[iris::toolbox]`
              service, registered with `register_toolbox`;
- rmcp:       the same 100 as `#[tool]` methods of an rmcp `#[tool_router]`
              service taking `Parameters<Args>` of the derived structs.

Usage: generate.py OUT_DIR IRIS_PATH
"""
import os
import sys

COUNT = 100

# Parameter shapes cycle so the crates hold a realistic mix of types.
PARAMS = [
    [("city", "String", "City name."), ("days", "u32", "Days ahead."), ("metric", "Option<bool>", "Metric units.")],
    [("query", "String", "What to look for."), ("limit", "Option<u16>", "Most results."), ("tags", "Vec<String>", "Tags to match.")],
    [("path", "String", "File path."), ("offset", "u64", "First line."), ("count", "u32", "Lines to read.")],
    [("amount", "f64", "Amount to convert."), ("from", "String", "Currency code."), ("to", "String", "Currency code.")],
]


def body(i, names):
    args = ", ".join(f"{{{n}:?}}" for n in names)
    return f'format!("tool {i}: {args}")'


def plain(i, params):
    sig = ", ".join(f"{n}: {t}" for n, t, _ in params)
    names = [n for n, _, _ in params]
    return f"/// Tool number {i}.\npub fn tool_{i}({sig}) -> String {{\n    {body(i, names)}\n}}\n"


def derive(i, params):
    names = [n for n, _, _ in params]
    binds = ", ".join(names)
    return (
        f"{args_struct(i, params)}\n"
        f"/// Tool number {i}.\npub fn tool_{i}(args: Tool{i}Args) -> String {{\n"
        f"    let Tool{i}Args {{ {binds} }} = args;\n    {body(i, names)}\n}}\n"
    )


def dispatch_fns(params_of):
    """The schemas and the hand-written dispatch over every tool."""
    schemas = "".join(
        f'        ("tool_{i}", schemars::schema_for!(Tool{i}Args)),\n' for i in range(COUNT)
    )
    arms = "".join(
        f'        "tool_{i}" => serde_json::from_value::<Tool{i}Args>(input).map(tool_{i}),\n'
        for i in range(COUNT)
    )
    return (
        "/// Every tool's name and input schema.\n"
        "pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {\n    vec![\n"
        f"{schemas}    ]\n}}\n\n"
        "/// Runs the tool `name` with `input`.\n"
        "pub fn dispatch(name: &str, input: serde_json::Value) -> Result<String, String> {\n"
        "    match name {\n"
        f"{arms}"
        '        _ => return Err(format!("no tool named {name}")),\n'
        "    }\n    .map_err(|e| e.to_string())\n}\n"
    )


def registry_fn():
    calls = "".join(f"    registry.register(Tool{i}).unwrap();\n" for i in range(COUNT))
    return (
        "/// Every tool, registered.\n"
        "pub fn registry() -> iris::ToolRegistry {\n"
        "    let mut registry = iris::ToolRegistry::new();\n"
        f"{calls}    registry\n}}\n"
    )


def toolbox_method(i, params):
    sig = "".join(f"        /// {d}\n        {n}: {t},\n" for n, t, d in params)
    names = [n for n, _, _ in params]
    return (
        f"    /// Tool number {i}.\n    #[tool(read_only)]\n"
        f"    pub fn tool_{i}(\n        &self,\n{sig}    ) -> String {{\n        {body(i, names)}\n    }}\n"
    )


def rmcp_method(i, params):
    names = [n for n, _, _ in params]
    binds = ", ".join(names)
    return (
        f'    #[tool(description = "Tool number {i}.")]\n'
        f"    pub fn tool_{i}(&self, Parameters(args): Parameters<Tool{i}Args>) -> String {{\n"
        f"        let Tool{i}Args {{ {binds} }} = args;\n        {body(i, names)}\n    }}\n"
    )


def args_struct(i, params):
    fields = "".join(f"    /// {d}\n    pub {n}: {t},\n" for n, t, d in params)
    return (
        f"#[derive(Deserialize, JsonSchema)]\n#[serde(deny_unknown_fields)]\n"
        f"/// Arguments of tool {i}.\npub struct Tool{i}Args {{\n{fields}}}\n"
    )


def iris(i, params):
    sig = "".join(f"    /// {d}\n    {n}: {t},\n" for n, t, d in params)
    names = [n for n, _, _ in params]
    return f"/// Tool number {i}.\n#[iris::tool(read_only)]\npub fn tool_{i}(\n{sig}) -> String {{\n    {body(i, names)}\n}}\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    out, iris_path = sys.argv[1], os.path.abspath(sys.argv[2])
    crates = ["plain", "derive", "dispatch", "iris", "registered", "cataloged", "toolbox", "rmcp"]
    members = ", ".join(f'"{c}"' for c in crates)
    write(f"{out}/Cargo.toml", f'[workspace]\nmembers = [{members}]\nresolver = "3"\n')
    serde_deps = 'serde = { version = "1", features = ["derive"] }\nschemars = "1"\n'
    iris_macros = f'iris = {{ path = "{iris_path}", default-features = false, features = ["macros"] }}\n'
    iris_full = f'iris = {{ path = "{iris_path}" }}\n'
    deps = {
        "plain": "",
        "derive": serde_deps,
        "dispatch": serde_deps + 'serde_json = "1"\n',
        "iris": iris_macros,
        "registered": iris_full,
        "cataloged": f'iris = {{ path = "{iris_path}", features = ["assembly"] }}\n',
        "toolbox": iris_full,
        "rmcp": serde_deps
        + 'rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }\n',
    }
    derive_head = "use schemars::JsonSchema;\nuse serde::Deserialize;\n"
    for name in crates:
        write(
            f"{out}/{name}/Cargo.toml",
            f'[package]\nname = "bench-{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n{deps[name]}',
        )
        head = "//! Generated for the compile-time benchmark.\n"
        shapes = [PARAMS[i % len(PARAMS)] for i in range(COUNT)]
        if name == "plain":
            items = [plain(i, p) for i, p in enumerate(shapes)]
        elif name in ("derive", "dispatch"):
            head += derive_head
            items = [derive(i, p) for i, p in enumerate(shapes)]
            if name == "dispatch":
                items.append(dispatch_fns(shapes))
        elif name in ("iris", "registered", "cataloged"):
            items = [iris(i, p) for i, p in enumerate(shapes)]
            if name == "registered":
                items.append(registry_fn())
        elif name == "toolbox":
            methods = "".join(toolbox_method(i, p) for i, p in enumerate(shapes))
            items = [
                "/// The service.\npub struct Service;\n",
                f"#[iris::toolbox]\nimpl Service {{\n{methods}}}\n",
                "/// Every tool, registered.\npub fn registry() -> iris::ToolRegistry {\n"
                "    let mut registry = iris::ToolRegistry::new();\n"
                "    registry.register_toolbox(std::sync::Arc::new(Service)).unwrap();\n"
                "    registry\n}\n",
            ]
        else:
            head += derive_head
            head += "use rmcp::handler::server::router::tool::ToolRouter;\n"
            head += "use rmcp::handler::server::wrapper::Parameters;\nuse rmcp::{tool, tool_router};\n"
            methods = "".join(rmcp_method(i, p) for i, p in enumerate(shapes))
            items = [args_struct(i, p) for i, p in enumerate(shapes)] + [
                "/// The service.\npub struct Service;\n",
                f"#[tool_router]\nimpl Service {{\n{methods}}}\n",
                "/// Every tool, routed.\npub fn router() -> ToolRouter<Service> {\n    Service::tool_router()\n}\n",
            ]
        write(f"{out}/{name}/src/lib.rs", head + "\n" + "\n".join(items))


if __name__ == "__main__":
    main()
