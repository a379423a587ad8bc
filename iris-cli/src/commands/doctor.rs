//! `iris doctor`: whether this machine can run the catalog: the agent file
//! loads (its MCP servers start, its key variable is set), its model's
//! endpoint answers a connection, the workspace is writable, and how the
//! catalog lints.

use clap::Command;
use std::net::ToSocketAddrs as _;
use std::path::Path;
use std::time::Duration;

use iris_model::ModelProvider;
use serde_json::{Value, json};

use crate::catalog::{Catalog, Source};
use crate::exit::Exit;
use crate::output::Out;

/// One check and what it found.
struct Check {
    name: &'static str,
    ok: Option<bool>,
    detail: String,
}

impl Check {
    fn passed(name: &'static str, detail: String) -> Self {
        Self {
            name,
            ok: Some(true),
            detail,
        }
    }
    fn failed(name: &'static str, detail: String) -> Self {
        Self {
            name,
            ok: Some(false),
            detail,
        }
    }
    fn skipped(name: &'static str, detail: String) -> Self {
        Self {
            name,
            ok: None,
            detail,
        }
    }
}

pub(crate) async fn run(source: &Source, host: crate::Host, out: Out) -> Exit {
    let mut checks = vec![Check::passed(
        "iris",
        format!(
            "{} on {}-{}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
    )];
    let mut exit = Exit::Ok;
    let catalog = match Catalog::open(source, host).await {
        Ok(catalog) => {
            let tools = catalog.agent.registry().tools().count();
            checks.push(Check::passed("catalog", format!("{tools} tool(s) load")));
            Some(catalog)
        }
        Err((why, message)) => {
            exit = why;
            checks.push(Check::failed("catalog", message));
            None
        }
    };
    if let Some(catalog) = &catalog {
        checks.push(model_check(catalog).await);
        let registry = catalog.agent.registry();
        let mut definitions: Vec<_> = registry.tools().map(|t| t.definition_dyn()).collect();
        definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
        let scope = iris_tools::discovery::SearchScope::every_tool(&registry);
        let found = super::lint::findings(&definitions, &scope);
        let errors = found
            .iter()
            .filter(|f| f.level == super::lint::Level::Error)
            .count();
        let warnings = found
            .iter()
            .filter(|f| f.level == super::lint::Level::Warning)
            .count();
        let detail = format!(
            "{errors} error(s), {warnings} warning(s) (`{} lint` lists them)",
            crate::output::program()
        );
        checks.push(if errors == 0 {
            Check::passed("lint", detail)
        } else {
            Check::failed("lint", detail)
        });
    }
    // Where `run`, `call` and `serve` work unless `--workspace` says.
    checks.push(workspace_check(std::path::Path::new(".")));
    if exit == Exit::Ok && checks.iter().any(|c| c.ok == Some(false)) {
        exit = Exit::Unreachable;
    }
    if out.json {
        let listed: Vec<Value> = checks
            .iter()
            .map(|c| json!({"check": c.name, "ok": c.ok, "detail": c.detail}))
            .collect();
        out.json(json!({"checks": listed, "healthy": exit == Exit::Ok}));
    } else {
        for c in &checks {
            let mark = match c.ok {
                Some(true) => "ok  ",
                Some(false) => "FAIL",
                None => "--  ",
            };
            out.line(&format!("{mark}  {:<10} {}", c.name, c.detail));
        }
    }
    exit
}

/// The model's endpoint: configured, and answering a TCP connection.
async fn model_check(catalog: &Catalog) -> Check {
    let Some(model) = catalog.agent.model() else {
        return Check::skipped(
            "model",
            format!(
                "none configured (`{} run` needs `model:` in the agent file)",
                crate::output::program()
            ),
        );
    };
    let base = model.base_url.clone().unwrap_or_else(|| {
        match model.provider {
            ModelProvider::Anthropic => "https://api.anthropic.com/v1",
            ModelProvider::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            _ => "https://api.openai.com/v1",
        }
        .to_owned()
    });
    let Some((host, port)) = host_and_port(&base) else {
        return Check::failed("model", format!("`{base}` is not an http(s) URL"));
    };
    let what = format!("{:?} `{}` at {base}", model.provider, model.model);
    let address = format!("{host}:{port}");
    let connect = async {
        let addresses: Vec<_> = address
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .collect();
        let first = addresses.first().ok_or_else(|| "no address".to_owned())?;
        tokio::net::TcpStream::connect(first)
            .await
            .map_err(|e| e.to_string())
    };
    match tokio::time::timeout(Duration::from_secs(3), connect).await {
        Ok(Ok(_)) => Check::passed("model", format!("{what} answers")),
        Ok(Err(why)) => Check::failed("model", format!("{what} does not answer: {why}")),
        Err(_) => Check::failed("model", format!("{what} did not answer within 3 s")),
    }
}

/// The host and port of an http(s) URL.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let default = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split('/').next()?.rsplit('@').next()?;
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            Some((host.trim_matches(['[', ']']).to_owned(), port.parse().ok()?))
        }
        _ => Some((authority.trim_matches(['[', ']']).to_owned(), default)),
    }
}

/// Whether the file tools' workspace is a folder this process can write.
fn workspace_check(workspace: &Path) -> Check {
    let probe = workspace.join(format!(".iris-doctor-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Check::passed(
                "workspace",
                format!("`{}` is writable", workspace.display()),
            )
        }
        Err(e) => Check::failed(
            "workspace",
            format!("`{}` is not writable: {e}", workspace.display()),
        ),
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("doctor")
            .about("Check that this machine can run the catalog: it loads, its model answers, its workspace is writable")
            .args(crate::catalog::args())
}

#[cfg(test)]
mod tests {
    use super::host_and_port;

    #[test]
    fn urls_give_their_host_and_port() {
        assert_eq!(
            host_and_port("https://api.openai.com/v1"),
            Some(("api.openai.com".into(), 443))
        );
        assert_eq!(
            host_and_port("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            host_and_port("http://user@host:9"),
            Some(("host".into(), 9))
        );
        assert_eq!(host_and_port("ftp://x"), None);
    }
}
