//! The agent file's `auth:` section: who may call the agent's tools when
//! it is served over HTTP. Read into the MCP gateway's own settings
//! ([`iris_mcp::gateway::GatewayAuth`]), every problem reported at the
//! section with its line and column.

use super::error::Issues;
use super::file::AgentFile;

/// The gateway settings `file` gives, checked whole.
#[cfg(feature = "mcp")]
pub(super) fn gateway_auth(
    file: &AgentFile,
    issues: &mut Issues,
) -> Option<iris_mcp::gateway::GatewayAuth> {
    let section = file.auth.as_ref()?;
    match serde_path_to_error::deserialize::<_, iris_mcp::gateway::GatewayAuth>(
        section.value.clone(),
    ) {
        Ok(auth) => {
            let problems = auth.check();
            for problem in &problems {
                let (key, message) = problem
                    .split_once(' ')
                    .filter(|(key, _)| key.starts_with("auth"))
                    .unwrap_or(("auth", problem));
                issues.at(section.referenced, key.trim_end_matches(':'), message);
            }
            problems.is_empty().then_some(auth)
        }
        Err(error) => {
            let inner = error.path().to_string();
            let key = if inner == "." {
                "auth".to_owned()
            } else {
                format!("auth.{inner}")
            };
            issues.at(section.referenced, key, error.into_inner().to_string());
            None
        }
    }
}

/// Without MCP there is no server to guard: the section is refused.
#[cfg(not(feature = "mcp"))]
pub(super) fn gateway_auth(file: &AgentFile, issues: &mut Issues) -> Option<()> {
    let section = file.auth.as_ref()?;
    issues.at(
        section.referenced,
        "auth",
        "`auth` guards the agent served over MCP, which this build of Iris does not have (enable the `mcp` feature); remove `auth`",
    );
    None
}
