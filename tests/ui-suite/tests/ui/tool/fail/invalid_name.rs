/// Read a file.
#[iris::tool(name = "read file")]
fn read(path: String) -> String {
    path
}

/// Write a file.
#[iris::tool(name = "write_a_file_with_a_name_that_is_far_too_long_for_every_provider_x")]
fn write(path: String) -> String {
    path
}

/// Search.
#[iris::tool(aliases = ["web.search"])]
fn search(query: String) -> String {
    query
}

fn main() {}
