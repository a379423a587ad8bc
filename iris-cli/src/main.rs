//! The `iris` command line; see the library's docs for the commands.

fn main() -> std::process::ExitCode {
    iris_cli::run_cli()
}
