#!/usr/bin/env python3
"""Writes a workspace of three crates with the same 100 tools, for measuring
what `#[iris::tool]` costs at compile time:

- plain:  100 plain functions;
- derive: the same functions taking hand-written
          `#[derive(Deserialize, JsonSchema)]` argument structs;
- iris:   the same functions under `#[iris::tool]`.

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
    fields = "".join(f"    /// {d}\n    pub {n}: {t},\n" for n, t, d in params)
    names = [n for n, _, _ in params]
    binds = ", ".join(names)
    return (
        f"#[derive(Deserialize, JsonSchema)]\n#[serde(deny_unknown_fields)]\n"
        f"/// Arguments of tool {i}.\npub struct Tool{i}Args {{\n{fields}}}\n\n"
        f"/// Tool number {i}.\npub fn tool_{i}(args: Tool{i}Args) -> String {{\n"
        f"    let Tool{i}Args {{ {binds} }} = args;\n    {body(i, names)}\n}}\n"
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
    write(f"{out}/Cargo.toml", '[workspace]\nmembers = ["plain", "derive", "iris"]\nresolver = "3"\n')
    deps = {
        "plain": "",
        "derive": 'serde = { version = "1", features = ["derive"] }\nschemars = "1"\n',
        "iris": f'iris = {{ path = "{iris_path}", default-features = false, features = ["macros"] }}\n',
    }
    makers = {"plain": plain, "derive": derive, "iris": iris}
    for name, make in makers.items():
        write(
            f"{out}/{name}/Cargo.toml",
            f'[package]\nname = "bench-{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n{deps[name]}',
        )
        head = "//! Generated for the compile-time benchmark.\n"
        if name == "derive":
            head += "use schemars::JsonSchema;\nuse serde::Deserialize;\n"
        items = [make(i, PARAMS[i % len(PARAMS)]) for i in range(COUNT)]
        write(f"{out}/{name}/src/lib.rs", head + "\n" + "\n".join(items))


if __name__ == "__main__":
    main()
