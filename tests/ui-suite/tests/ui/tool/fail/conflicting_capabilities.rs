/// Delete a file.
#[iris::tool(read_only, write)]
fn delete(path: String) -> String {
    path
}

/// Run a command.
#[iris::tool(exec, read_only)]
fn run(command: String) -> String {
    command
}

fn main() {}
