//! `iris lint`: what each provider really receives for each tool (from the
//! projection code the adapters send with), descriptions too weak to choose
//! by, and pairs of tools the local ranker confuses. Text, JSON or SARIF;
//! errors fail the command, and warnings too with `--strict`.

mod skills;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iris_core::provider::{self, Projection, ProjectionNote};
use iris_core::{ToolDefinition, ToolSpec};
use iris_tools::discovery::{LocalRanker, SearchScope, TermSource, schema_tokens};
use serde::Serialize;
use serde_json::{Value, json};

use crate::catalog::{Catalog, Source};
use crate::exit::Exit;
use crate::output::Out;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Level {
    /// Worth knowing; never fails.
    Note,
    /// Fails with `--strict`.
    Warning,
    /// Always fails.
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Self::Note => "note",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// One thing lint found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Finding {
    pub(crate) tool: String,
    pub(crate) rule: &'static str,
    pub(crate) level: Level,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<&'static str>,
    /// A JSON Pointer into the tool's input schema, when the finding has a
    /// place there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) at: Option<String>,
    pub(crate) message: String,
}

/// Each rule: its id, its level and what it means (SARIF's rule list).
pub(crate) const RULES: [(&str, Level, &str); 14] = [
    (
        "description-missing",
        Level::Error,
        "The tool has no description: a model cannot tell when to use it.",
    ),
    (
        "description-short",
        Level::Warning,
        "The description is too short to choose the tool by.",
    ),
    (
        "parameter-undescribed",
        Level::Warning,
        "A parameter has no description: the model guesses what to pass.",
    ),
    (
        "not-strict",
        Level::Warning,
        "Strict mode was asked for but the schema cannot be strict: the provider does not enforce it.",
    ),
    (
        "keyword-dropped",
        Level::Warning,
        "A schema keyword the provider refuses was removed: the model does not see the constraint (the runtime still enforces it).",
    ),
    (
        "recursion-cut",
        Level::Warning,
        "A recursive type could not be sent: deeper values are undescribed.",
    ),
    (
        "schema-too-large",
        Level::Error,
        "The schema grew past the inlining limit and was cut.",
    ),
    (
        "schema-large",
        Level::Warning,
        "The schema costs many tokens in every request that offers the tool.",
    ),
    (
        "confusable",
        Level::Warning,
        "Another tool ranks close to this one for this tool's own description: searches confuse them.",
    ),
    (
        "projection",
        Level::Note,
        "A change a provider's projection made on the way (meaning kept).",
    ),
    (
        "skill-format",
        Level::Warning,
        "A skill breaks a rule of the Agent Skills format (read leniently, it loads anyway; other clients may refuse it).",
    ),
    (
        "skill-catalog-shortened",
        Level::Warning,
        "A skill's description was shortened to fit the catalog's budget.",
    ),
    (
        "skill-left-out",
        Level::Error,
        "A skill did not fit the catalog's budget: the model cannot activate it.",
    ),
    (
        "skill-shadowed",
        Level::Warning,
        "A skill's description says nearly what another skill's or a tool's does: the model cannot tell them apart.",
    ),
];

/// Tokens past which a schema is large.
const LARGE_SCHEMA_TOKENS: usize = 1_500;
/// Words a description needs at least.
const MIN_DESCRIPTION_WORDS: usize = 4;
/// A runner-up within this share of a tool's own score for its own
/// description is confusable with it.
const CONFUSABLE_RATIO: f32 = 0.85;

/// The providers lint projects for, with the name `--provider` uses.
/// A provider's projection of a tool.
type Project = fn(&ToolSpec) -> Projection;

const PROJECTIONS: [(&str, Project); 5] = [
    ("openai-strict", |spec| {
        provider::openai_chat(&spec.clone().with_strict(true))
    }),
    ("responses", provider::openai_responses),
    ("anthropic", provider::anthropic),
    ("gemini", provider::gemini),
    ("gemini-openapi", provider::gemini_openapi),
];

/// Everything lint finds in `definitions`, tool by tool in name order.
pub(crate) fn findings(definitions: &[&ToolDefinition], scope: &SearchScope<'_>) -> Vec<Finding> {
    let mut found = Vec::new();
    for definition in definitions {
        descriptions(definition, &mut found);
        projections(definition, &mut found);
        confusion(definition, scope, &mut found);
    }
    found
}

fn finding(tool: &ToolDefinition, rule: &'static str, message: String) -> Finding {
    let level = RULES
        .iter()
        .find(|(id, _, _)| *id == rule)
        .map_or(Level::Warning, |(_, level, _)| *level);
    Finding {
        tool: tool.name().to_string(),
        rule,
        level,
        provider: None,
        at: None,
        message,
    }
}

fn descriptions(definition: &ToolDefinition, found: &mut Vec<Finding>) {
    let words = definition.description().split_whitespace().count();
    if words == 0 {
        found.push(finding(
            definition,
            "description-missing",
            "no description: say what the tool does and when to use it".to_owned(),
        ));
    } else if words < MIN_DESCRIPTION_WORDS {
        found.push(finding(
            definition,
            "description-short",
            format!("the description has {words} word(s): say what the tool does, on what, and when to use it"),
        ));
    }
    let Some(properties) = definition
        .input_schema()
        .get("properties")
        .and_then(Value::as_object)
    else {
        return;
    };
    for (name, schema) in properties {
        let described = ["description", "title"].iter().any(|k| {
            schema
                .get(k)
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty())
        });
        if !described {
            let mut undescribed = finding(
                definition,
                "parameter-undescribed",
                format!(
                    "parameter `{name}` has no description (a doc comment on the parameter, or `description:`)"
                ),
            );
            undescribed.at = Some(format!(
                "/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            ));
            found.push(undescribed);
        }
    }
}

fn projections(definition: &ToolDefinition, found: &mut Vec<Finding>) {
    let spec = definition.spec();
    for (provider, project) in PROJECTIONS {
        for note in project(&spec).report.notes {
            let (rule, message) = match &note {
                ProjectionNote::NotStrict { reason, .. } => {
                    ("not-strict", format!("sent non-strict: {reason}"))
                }
                // Annotations a model does not choose values by: their loss
                // changes nothing it sees of the constraints.
                ProjectionNote::DroppedKeyword { keyword, .. }
                    if matches!(
                        keyword.as_str(),
                        "additionalProperties" | "format" | "$schema" | "title" | "examples"
                    ) =>
                {
                    ("projection", format!("`{keyword}` is not sent"))
                }
                ProjectionNote::DroppedKeyword { keyword, .. } => {
                    ("keyword-dropped", format!("`{keyword}` is not sent"))
                }
                ProjectionNote::RecursionCut { reference, .. } => (
                    "recursion-cut",
                    format!("recursive `{reference}` sent as a plain object"),
                ),
                ProjectionNote::RecursionLimited { reference, .. } => (
                    "recursion-cut",
                    format!("recursive `{reference}` expanded to a limited depth only"),
                ),
                ProjectionNote::TooLarge { limit, .. } => (
                    "schema-too-large",
                    format!("inlining stopped at {limit} nodes"),
                ),
                other => (
                    "projection",
                    serde_json::to_string(other).unwrap_or_default(),
                ),
            };
            let mut projected = finding(definition, rule, message);
            projected.provider = Some(provider);
            projected.at = Some(if note.at().is_empty() {
                "/".to_owned()
            } else {
                note.at().to_owned()
            });
            found.push(projected);
        }
    }
    let tokens = schema_tokens(definition);
    if tokens > LARGE_SCHEMA_TOKENS {
        found.push(finding(
            definition,
            "schema-large",
            format!("about {tokens} tokens in every request that offers it (over {LARGE_SCHEMA_TOKENS}); defer it behind tool_search, or split it"),
        ));
    }
}

fn confusion(definition: &ToolDefinition, scope: &SearchScope<'_>, found: &mut Vec<Finding>) {
    let own = definition.name().as_str();
    let query = definition.description();
    if query.trim().is_empty() {
        return;
    }
    let ranking = LocalRanker::default().rank(query, scope, 3);
    let own_score = ranking
        .candidates
        .iter()
        .find(|c| c.name.as_str() == own)
        .map_or(0.0, |c| c.score);
    let Some(rival) = ranking
        .candidates
        .iter()
        .find(|c| c.name.as_str() != own && c.score >= own_score * CONFUSABLE_RATIO)
    else {
        return;
    };
    let shared = shared_terms(scope, query, own, rival.name.as_str());
    let standing = if rival.score > own_score {
        format!("ranks above it ({:.2} against {own_score:.2})", rival.score)
    } else {
        format!(
            "ranks within {:.0}% of it ({:.2} against {own_score:.2})",
            (1.0 - CONFUSABLE_RATIO) * 100.0,
            rival.score
        )
    };
    found.push(finding(
        definition,
        "confusable",
        format!(
            "for this tool's own description, `{}` {standing}; shared terms: {}; say what sets them apart",
            rival.name.as_str(),
            if shared.is_empty() { "none".to_owned() } else { shared.join(", ") }
        ),
    ));
}

/// The terms of `query` that score for both tools, largest first.
fn shared_terms(scope: &SearchScope<'_>, query: &str, a: &str, b: &str) -> Vec<String> {
    let (Some(first), Some(second)) = (scope.explain(query, a), scope.explain(query, b)) else {
        return Vec::new();
    };
    first
        .terms
        .iter()
        .filter(|t| t.gain > 0.0 && t.source == TermSource::Query)
        .filter(|t| {
            second
                .terms
                .iter()
                .any(|o| o.term == t.term && o.gain > 0.0)
        })
        .take(6)
        .map(|t| t.term.clone())
        .collect()
}

/// How lint prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
    Sarif,
}

/// Lint as the command line asks: `--format`, `--json`, `--strict`.
pub(crate) fn from_matches(sub: &ArgMatches, catalog: &Catalog, source: &Source, out: Out) -> Exit {
    let format = match (
        sub.get_one::<String>("format").map(String::as_str),
        out.json,
    ) {
        (Some("sarif"), _) => Format::Sarif,
        (Some("json"), _) | (None, true) => Format::Json,
        _ => Format::Text,
    };
    let out = Out {
        json: format != Format::Text,
    };
    let file = match source {
        Source::Agent(path) => Some(path.display().to_string()),
        _ => None,
    };
    run(
        catalog,
        file.as_deref(),
        format,
        sub.get_flag("strict"),
        out,
    )
}

pub(crate) fn run(
    catalog: &Catalog,
    source: Option<&str>,
    format: Format,
    strict: bool,
    out: Out,
) -> Exit {
    let registry = catalog.agent.registry();
    let mut definitions: Vec<&ToolDefinition> =
        registry.tools().map(|t| t.definition_dyn()).collect();
    definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
    let scope = SearchScope::every_tool(&registry);
    let mut found = findings(&definitions, &scope);
    if let Some(skills) = catalog.agent.skills() {
        found.extend(skills::findings(skills, &definitions));
    }
    // A parent's catalog is what its children can do too: their tools are
    // linted as theirs (`writer/save_note`).
    let linted = definitions.len() + children_findings(&catalog.agent, None, &mut found);
    let count = |level| found.iter().filter(|f| f.level == level).count();
    let (errors, warnings, notes) = (
        count(Level::Error),
        count(Level::Warning),
        count(Level::Note),
    );
    match format {
        Format::Json => out.json(json!({
            "tools": linted,
            "findings": found,
            "summary": {"errors": errors, "warnings": warnings, "notes": notes},
        })),
        Format::Sarif => out.line(&sarif(&found, source).to_string()),
        Format::Text => {
            for f in found.iter().filter(|f| f.level > Level::Note) {
                let provider = f.provider.map(|p| format!(" ({p})")).unwrap_or_default();
                let at =
                    f.at.as_deref()
                        .map(|a| format!(" at {a}"))
                        .unwrap_or_default();
                out.line(&format!(
                    "{}: {}[{}]{provider}{at}: {}",
                    f.tool,
                    f.level.name(),
                    f.rule,
                    f.message
                ));
            }
            out.note(&format!(
                "{linted} tool(s): {errors} error(s), {warnings} warning(s), {notes} note(s) (projection changes that keep the meaning; `--json` lists them)"
            ));
        }
    }
    verdict(errors, warnings, strict)
}

/// The findings of the tools of every child agent under `agent`, each
/// named by its path (`writer/save_note`), added to `found`; how many tools
/// were linted.
fn children_findings(
    agent: &iris_agent::Agent,
    prefix: Option<&str>,
    found: &mut Vec<Finding>,
) -> usize {
    let mut linted = 0;
    for child in agent.children() {
        let path = prefix.map_or_else(
            || child.name().to_owned(),
            |p| format!("{p}/{}", child.name()),
        );
        let registry = child.agent().registry();
        let mut definitions: Vec<&ToolDefinition> =
            registry.tools().map(|t| t.definition_dyn()).collect();
        definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
        let scope = SearchScope::every_tool(&registry);
        found.extend(findings(&definitions, &scope).into_iter().map(|mut f| {
            f.tool = format!("{path}/{}", f.tool);
            f
        }));
        linted += definitions.len() + children_findings(child.agent(), Some(&path), found);
    }
    linted
}

/// Errors always fail; warnings only under `--strict`.
fn verdict(errors: usize, warnings: usize, strict: bool) -> Exit {
    if errors > 0 || (strict && warnings > 0) {
        Exit::LintFailed
    } else {
        Exit::Ok
    }
}

/// The findings as a SARIF 2.1.0 log, located in `source` (the agent
/// file) when there is one and by tool name always.
fn sarif(found: &[Finding], source: Option<&str>) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, level, text)| {
            json!({
                "id": id,
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level.name()},
            })
        })
        .collect();
    let results: Vec<Value> = found
        .iter()
        .map(|f| {
            let mut location = json!({
                "logicalLocations": [{"name": f.tool, "kind": "function"}],
            });
            if let Some(file) = source {
                location["physicalLocation"] = json!({"artifactLocation": {"uri": file}});
            }
            let mut result = json!({
                "ruleId": f.rule,
                "level": f.level.name(),
                "message": {"text": format!("{}: {}", f.tool, f.message)},
                "locations": [location],
            });
            if let Some(provider) = f.provider {
                result["properties"] = json!({"provider": provider, "at": f.at});
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "iris",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://docs.rs/iris-sdk-cli",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("lint")
        .about(
            "Find what each provider really receives, weak descriptions and tools searches confuse",
        )
        .arg(
            Arg::new("format")
                .long("format")
                .value_name("FORMAT")
                .value_parser(["text", "json", "sarif"])
                .help("text (the default), json or sarif"),
        )
        .arg(
            Arg::new("strict")
                .long("strict")
                .action(ArgAction::SetTrue)
                .help("Fail on warnings too (exit 7), for CI"),
        )
        .args(crate::catalog::args())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iris_core::ToolName;
    use serde_json::json;

    #[test]
    fn errors_always_fail_and_warnings_only_when_strict() {
        assert_eq!(verdict(1, 0, false), Exit::LintFailed);
        assert_eq!(verdict(0, 3, false), Exit::Ok);
        assert_eq!(verdict(0, 3, true), Exit::LintFailed);
        assert_eq!(verdict(0, 0, true), Exit::Ok);
    }

    #[test]
    fn a_schema_that_strict_mode_cannot_hold_is_reported_per_provider() {
        // An open object: strict mode needs every object closed.
        let definition = ToolDefinition::builder(
            ToolName::new("tag_items".to_owned()).expect("a valid name"),
            "Attach free-form labels to stored items.",
        )
        .input_schema(json!({
            "type": "object",
            "properties": {"labels": {
                "type": "object",
                "description": "Label names to values",
                "additionalProperties": {"type": "string", "pattern": "^[a-z]+$"}
            }},
            "required": ["labels"]
        }))
        .build()
        .expect("a valid definition");
        let mut found = Vec::new();
        projections(&definition, &mut found);
        assert!(
            found
                .iter()
                .any(|f| f.rule == "not-strict" && f.provider == Some("openai-strict")),
            "{found:?}"
        );
    }
}
