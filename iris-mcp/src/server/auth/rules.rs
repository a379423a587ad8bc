//! Which tools a principal may call: a tool is granted when a rule selects
//! it and the principal holds every scope and claim the rule names;
//! anything no rule grants is refused. When a rule would grant the tool
//! but for scopes the principal lacks, the caller is told every scope that
//! rule needs at once (so one step-up suffices).

use iris_core::{ToolDefinition, ToolOrigin};

use super::config::AccessRule;
use super::principal::Principal;

/// The verdict on one tool for one principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Grant {
    /// Granted by the rule at this index.
    Allowed { rule: usize },
    /// A rule selects the tool and the principal's claims, but the token
    /// lacks scopes: every scope that rule needs.
    NeedsScopes(Vec<String>),
    /// No rule could grant it: the tool is neither listed nor callable.
    Hidden,
}

/// The verdict of `rules` on `definition` for `principal`.
pub(crate) fn judge(
    rules: &[AccessRule],
    principal: &Principal,
    definition: &ToolDefinition,
) -> Grant {
    let mut closest: Option<(usize, &AccessRule)> = None;
    for (i, rule) in rules.iter().enumerate() {
        if !selects(rule, definition)
            || !rule
                .claims
                .iter()
                .all(|(name, value)| principal.claim_matches(name, value))
        {
            continue;
        }
        let missing = rule
            .scopes
            .iter()
            .filter(|s| !principal.scopes().contains(*s))
            .count();
        if missing == 0 {
            return Grant::Allowed { rule: i };
        }
        if closest.is_none_or(|(fewest, _)| missing < fewest) {
            closest = Some((missing, rule));
        }
    }
    match closest {
        Some((_, rule)) => Grant::NeedsScopes(rule.scopes.clone()),
        None => Grant::Hidden,
    }
}

/// Whether `rule` names `definition`: by name (or `*`), by capabilities
/// (all of them), or by its MCP server.
fn selects(rule: &AccessRule, definition: &ToolDefinition) -> bool {
    let by_name = rule
        .tools
        .iter()
        .any(|name| name == "*" || definition.answers_to(name));
    let capabilities = definition.capabilities();
    let by_capability = !rule.capabilities.is_empty()
        && rule.capabilities.iter().all(|c| capabilities.contains(*c));
    let by_server = match definition.origin() {
        ToolOrigin::Mcp { server, .. } => rule.servers.iter().any(|s| s == server),
        _ => false,
    };
    by_name || by_capability || by_server
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use iris_core::{Capability, ToolDefinition};
    use serde_json::json;

    fn principal(scopes: &str, groups: &[&str]) -> Principal {
        let claims = json!({"sub": "alice", "scope": scopes, "groups": groups});
        Principal::from_claims("https://idp", claims.as_object().unwrap().clone()).unwrap()
    }

    fn tool(name: &str, capabilities: &[Capability]) -> ToolDefinition {
        ToolDefinition::builder(
            iris_core::ToolName::new(name.to_owned()).unwrap(),
            "A tool.",
        )
        .capabilities(iris_core::Capabilities::from_slice(capabilities))
        .build()
        .unwrap()
    }

    #[test]
    fn a_rule_grants_by_name_capability_or_server_and_nothing_else_is_granted() {
        let rules = vec![
            AccessRule {
                scopes: vec!["tools:read".into()],
                capabilities: vec![Capability::ReadOnly],
                ..AccessRule::default()
            },
            AccessRule {
                scopes: vec!["tools:write".into(), "tickets".into()],
                claims: [("groups".to_owned(), "support".to_owned())].into(),
                tools: vec!["close_ticket".into()],
                ..AccessRule::default()
            },
        ];
        let reader = principal("tools:read", &[]);
        let lookup = tool("lookup", &[Capability::ReadOnly]);
        let close = tool("close_ticket", &[Capability::Write]);
        assert_eq!(judge(&rules, &reader, &lookup), Grant::Allowed { rule: 0 });
        // Not in the group: no rule could grant it, so it stays hidden.
        assert_eq!(judge(&rules, &reader, &close), Grant::Hidden);
        let support = principal("tools:read tickets", &["support"]);
        assert_eq!(
            judge(&rules, &support, &close),
            Grant::NeedsScopes(vec!["tools:write".into(), "tickets".into()])
        );
        let writer = principal("tools:write tickets", &["support", "ops"]);
        assert_eq!(judge(&rules, &writer, &close), Grant::Allowed { rule: 1 });
        assert_eq!(judge(&[], &writer, &close), Grant::Hidden);
    }
}
