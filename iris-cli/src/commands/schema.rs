//! `iris schema TOOL --provider P`: what a provider receives for a tool,
//! from the same projection code the adapters send with, and what the
//! projection changed.

use clap::{Arg, Command};
use iris_core::provider::{self, Projection};
use serde_json::json;

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// The providers `--provider` names.
pub(crate) const PROVIDERS: [&str; 6] = [
    "openai",
    "openai-strict",
    "responses",
    "anthropic",
    "gemini",
    "gemini-openapi",
];

pub(crate) fn run(catalog: &Catalog, tool: &str, provider: &str, out: Out) -> Exit {
    let registry = catalog.agent.registry();
    let Some(found) = registry.resolve(tool) else {
        let known: Vec<String> = registry
            .tools()
            .map(|t| t.definition_dyn().name().to_string())
            .collect();
        let hint = closest(tool, &known)
            .map(|name| format!("; did you mean `{name}`?"))
            .unwrap_or_default();
        return out.fail(Exit::Usage, &format!("no tool is named `{tool}`{hint}"));
    };
    let spec = found.definition_dyn().spec();
    let Projection { tool, report } = match provider {
        "openai" => provider::openai_chat(&spec.with_strict(false)),
        "openai-strict" => provider::openai_chat(&spec.with_strict(true)),
        "responses" => provider::openai_responses(&spec),
        "anthropic" => provider::anthropic(&spec),
        "gemini" => provider::gemini(&spec),
        "gemini-openapi" => provider::gemini_openapi(&spec),
        other => {
            return out.fail(
                Exit::Usage,
                &format!(
                    "unknown provider `{other}`; use one of {}",
                    PROVIDERS.join(", ")
                ),
            );
        }
    };
    if out.json {
        out.json(json!({"provider": provider, "tool": tool, "report": report}));
        return Exit::Ok;
    }
    out.line(&serde_json::to_string_pretty(&tool).unwrap_or_default());
    if report.notes.is_empty() {
        out.note(&format!(
            "{provider}: sent as declared (strict: {})",
            report.strict
        ));
    } else {
        out.note(&format!(
            "{provider}: {} change(s) on the way (strict: {}):",
            report.notes.len(),
            report.strict
        ));
        for note in &report.notes {
            out.note(&format!(
                "  {}",
                serde_json::to_string(note).unwrap_or_default()
            ));
        }
    }
    Exit::Ok
}

/// The known name closest to `name`, when one is close.
pub(crate) fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("schema")
        .about("Show what a provider receives for a tool, and what changed on the way")
        .arg(
            Arg::new("tool")
                .required(true)
                .value_name("TOOL")
                .help("The tool, by the name the model calls it"),
        )
        .arg(
            Arg::new("provider")
                .long("provider")
                .value_name("PROVIDER")
                .default_value("openai")
                .value_parser(PROVIDERS)
                .help("openai, openai-strict, responses, anthropic, gemini or gemini-openapi"),
        )
        .args(crate::catalog::args())
}
