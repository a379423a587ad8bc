//! An agent file's hooks and middleware: each name resolved to the host's
//! factory (or a command hook), called with its options, and every problem
//! placed at its key.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use serde_saphyr::{Location, Spanned};

use super::error::Issues;
use super::file::{AgentFile, HandlerKind, HandlerSection, HookSection};
use super::names::{Assembly, unknown_name, unknown_tool};
use super::sources::expand_variables;
use iris_runtime::hooks::{CommandHook, Hook, HookEvent, HookRegistration};

pub(super) fn hooks(
    names: &Assembly,
    sections: &[HookSection],
    tools: &BTreeSet<String>,
    base: &Path,
    issues: &mut Issues,
) -> Vec<HookRegistration> {
    let known: Vec<String> = tools.iter().cloned().collect();
    let mut built = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        let key = format!("hooks[{i}]");
        // Run and model-turn events have no call to filter by tool.
        let run_event = matches!(
            section.event,
            HookEvent::RunStarted
                | HookEvent::RunFinished
                | HookEvent::ModelBefore
                | HookEvent::ModelAfter
        );
        if run_event && let Some(first) = section.tools.first() {
            issues.at(
                first.referenced,
                format!("{key}.tools"),
                format!(
                    "`{}` hooks see {}, not calls, and take no tool filter; remove `tools`",
                    section.event,
                    if matches!(
                        section.event,
                        HookEvent::ModelBefore | HookEvent::ModelAfter
                    ) {
                        "the model's turns"
                    } else {
                        "whole runs"
                    }
                ),
            );
        }
        let mut filter_ok = true;
        for (j, tool) in section.tools.iter().enumerate() {
            if !tools.contains(&tool.value) {
                filter_ok = false;
                issues.at(
                    tool.referenced,
                    format!("{key}.tools[{j}]"),
                    unknown_tool(&tool.value, &known),
                );
            }
        }
        let Some(hook) = handler(names, section, &key, base, issues) else {
            continue;
        };
        if section.timeout.is_some() && section.handler.value.timeout.is_some() {
            issues.at(
                section.handler.referenced,
                format!("{key}.handler.timeout"),
                "a hook has one deadline, and this one sets it twice (`timeout` beside `handler.timeout`): keep one",
            );
            continue;
        }
        let mut registration = HookRegistration::new(section.name.clone(), section.event, hook);
        if let Some(timeout) = section.timeout.or(section.handler.value.timeout) {
            registration = registration.timeout(timeout.0);
        }
        if filter_ok && !section.tools.is_empty() && !run_event {
            registration = registration.for_tools(section.tools.iter().map(|t| t.value.clone()));
        }
        if section.tree_wide {
            if !matches!(
                section.event,
                HookEvent::ToolBefore | HookEvent::ModelBefore | HookEvent::ModelAfter
            ) {
                issues.at(
                    section.handler.referenced,
                    format!("{key}.tree_wide"),
                    "only `tool.before`, `model.before` and `model.after` hooks hold over child agents; drop `tree_wide` or use one of those events",
                );
                continue;
            }
            registration = registration.tree_wide();
        }
        built.push(registration);
    }
    built
}

fn handler(
    names: &Assembly,
    section: &HookSection,
    key: &str,
    base: &Path,
    issues: &mut Issues,
) -> Option<Hook> {
    let handler = &section.handler.value;
    let place = section.handler.referenced;
    let at = format!("{key}.handler");
    match handler.kind {
        HandlerKind::Factory => {
            if handler.command.is_some() || !handler.env.is_empty() || handler.cwd.is_some() {
                issues.at(
                    place,
                    at.clone(),
                    "`command`, `env` and `cwd` belong to `type: command`; a factory hook takes `factory` and `options`",
                );
            }
            let Some(factory) = &handler.factory else {
                issues.at(
                    place,
                    at,
                    "`type: factory` needs `factory`: the name of a `#[hook_factory]` function",
                );
                return None;
            };
            let Some(entry) = names.hook_factory(&factory.value) else {
                issues.at(
                    factory.referenced,
                    format!("{at}.factory"),
                    unknown_name(
                        &names.hook_factories,
                        &factory.value,
                        "hook factory",
                        names.from_catalog,
                    ),
                );
                return None;
            };
            let (options, options_at) = options_of(handler.options.as_ref());
            match entry.item.build(&options) {
                Ok(hook) if hook.answers_event(section.event) => Some(hook),
                Ok(hook) => {
                    issues.at(
                        factory.referenced,
                        format!("{key}.event"),
                        format!(
                            "hook factory `{}` makes a hook that answers {}, but this hook is for `{}`; change `event`, or use a factory for `{}`",
                            entry.name,
                            hook.answers(),
                            section.event,
                            section.event
                        ),
                    );
                    None
                }
                Err(err) => {
                    let factory_name = format!("hook factory `{}`", entry.name);
                    let at_factory = (options_at, factory.referenced);
                    options_refused(issues, &at, &factory_name, at_factory, &err);
                    None
                }
            }
        }
        HandlerKind::Command => command_hook(section, handler, place, &at, base, issues),
    }
}

fn command_hook(
    section: &HookSection,
    handler: &HandlerSection,
    place: Location,
    at: &str,
    base: &Path,
    issues: &mut Issues,
) -> Option<Hook> {
    if handler.factory.is_some() || handler.options.is_some() {
        issues.at(
            place,
            at,
            "`factory` and `options` belong to `type: factory`; a command hook takes `command`, `env`, `cwd` and `timeout`",
        );
    }
    let Some(argv) = handler.command.as_ref().filter(|argv| !argv.is_empty()) else {
        issues.at(
            place,
            format!("{at}.command"),
            "`type: command` needs `command`: the program and its arguments, such as `[\"./hooks/audit.sh\"]`",
        );
        return None;
    };
    let mut hook = match CommandHook::new(&section.name, argv.iter().cloned()) {
        Ok(hook) => hook,
        Err(err) => {
            issues.at(place, format!("{at}.command"), err.to_string());
            return None;
        }
    };
    for (name, value) in &handler.env {
        match expand_variables(&value.value) {
            Ok(expanded) => hook = hook.env(name, expanded),
            Err(variable) => issues.at(
                value.referenced,
                format!("{at}.env.{name}"),
                format!(
                    "environment variable `{variable}` is not set; set it before starting the agent"
                ),
            ),
        }
    }
    if let Some(dir) = &handler.cwd {
        hook = hook.current_dir(base.join(dir));
    }
    Some(Hook::command(hook))
}

/// A factory's options as JSON, and where they start in the file.
fn options_of(
    options: Option<&Spanned<serde_json::Value>>,
) -> (serde_json::Value, Option<Location>) {
    options.map_or((serde_json::Value::Null, None), |o| {
        (o.value.clone(), Some(o.referenced))
    })
}

/// Reports options `factory` refused: at the option at fault when the file
/// shows where it is, else at the options or the factory's name.
fn options_refused(
    issues: &mut Issues,
    at: &str,
    factory: &str,
    (options_at, factory_at): (Option<Location>, Location),
    err: &iris_core::ArgumentError,
) {
    let message = format!("{factory}: {}", option_message(err.message()));
    let key = option_key(at, err.path());
    match options_at {
        Some(options) => issues.at_option(options, err.path(), key, message),
        None => issues.at(factory_at, key, message),
    }
}

/// A factory's parse error in the words of options.
fn option_message(message: &str) -> String {
    iris_runtime::config::yaml::reworded_as(message, "option", "agent file")
        .unwrap_or_else(|| message.to_owned())
}

/// `hooks[0].handler.options.text` from the option path `$.text`.
fn option_key(at: &str, path: &str) -> String {
    let inner = path.strip_prefix('$').unwrap_or(path);
    format!("{at}.options{inner}")
}

pub(super) fn middleware(
    names: &Assembly,
    file: &AgentFile,
    issues: &mut Issues,
) -> Vec<Arc<dyn iris_core::Middleware>> {
    let mut built = Vec::new();
    for (i, entry) in file.middleware.tools.iter().enumerate() {
        let at = format!("middleware.tools[{i}]");
        let factory = &entry.factory;
        let Some(found) = names.middleware_factory(&factory.value) else {
            issues.at(
                factory.referenced,
                format!("{at}.factory"),
                unknown_name(
                    &names.middleware_factories,
                    &factory.value,
                    "middleware factory",
                    names.from_catalog,
                ),
            );
            continue;
        };
        let (options, options_at) = options_of(entry.options.as_ref());
        match found.item.build(&options) {
            Ok(layer) => built.push(layer),
            Err(err) => {
                let factory_name = format!("middleware factory `{}`", found.name);
                let at_factory = (options_at, factory.referenced);
                options_refused(issues, &at, &factory_name, at_factory, &err);
            }
        }
    }
    built
}
