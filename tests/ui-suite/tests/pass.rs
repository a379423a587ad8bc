//! The macros' passing cases: each must compile, and its `main` runs as a
//! test. They build here, with the workspace, rather than under trybuild:
//! with only failing cases, trybuild checks their dependencies instead of
//! building them, and checks every case in one pass.
#![allow(
    missing_docs,
    unreachable_pub,
    clippy::pedantic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "the cases are written as a user writes them, not to the library's lints"
)]

macro_rules! pass_case {
    ($name:ident, $path:literal) => {
        mod $name {
            include!($path);

            #[test]
            fn compiles_and_runs() {
                main();
            }
        }
    };
}

pass_case!(tool, "ui/tool/pass/sync_async_ctx.rs");
pass_case!(middleware, "ui/middleware/pass/both_shapes.rs");
pass_case!(hooks, "ui/hooks/pass/every_shape.rs");
pass_case!(toolbox, "ui/toolbox/pass/service.rs");
pass_case!(factory, "ui/factory/pass/options.rs");
