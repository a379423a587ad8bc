// Every way to write a hook compiles: a type implementing the event's
// trait, an `async fn` borrowing the input, closures answering at once or
// later, async closures, fallible or not, and a factory as short as its Python original.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris::hooks::{AfterAnswer, AfterHook, BeforeAnswer, Hook, HookFailure, HookInput, HookRegistration, RunHook};

struct Reminder {
    text: String,
}

impl AfterHook for Reminder {
    async fn after(&self, _: &HookInput) -> Result<AfterAnswer, HookFailure> {
        Ok(AfterAnswer::feedback(&self.text))
    }
}

struct Count(AtomicUsize);

impl RunHook for Count {
    async fn on_run(&self, _: &HookInput) -> Result<(), HookFailure> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

async fn no_deletes(input: &HookInput) -> BeforeAnswer {
    match input.tool.as_ref().map(|t| t.as_str()) {
        Some("delete_file") => BeforeAnswer::deny("deleting is not allowed here"),
        _ => BeforeAnswer::Allow,
    }
}

async fn audit(input: &HookInput) -> Result<(), std::io::Error> {
    let _ = &input.run_id;
    Ok(())
}

fn create_feedback(text: String) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

fn main() {
    let seen = Arc::new(AtomicUsize::new(0));
    let _ = [
        HookRegistration::before("no-deletes", no_deletes),
        HookRegistration::before("count", move |_: &HookInput| {
            seen.fetch_add(1, Ordering::Relaxed);
            BeforeAnswer::Allow
        }),
        HookRegistration::before("fallible", |input: &HookInput| -> Result<BeforeAnswer, String> {
            input.arguments.as_ref().ok_or("no arguments")?;
            Ok(BeforeAnswer::Allow)
        }),
        HookRegistration::before("later", |input: &HookInput| {
            let tool = input.tool.clone();
            async move { tool.map_or(BeforeAnswer::Allow, |_| BeforeAnswer::Allow) }
        }),
        // The form that awaits while it reads the input: an async closure.
        HookRegistration::before("awaits", async |input: &HookInput| {
            std::future::ready(()).await;
            match input.tool.as_ref() {
                Some(tool) if tool.as_str() == "delete_file" => BeforeAnswer::deny("not here"),
                _ => BeforeAnswer::Allow,
            }
        }),
        HookRegistration::after("remind", Reminder { text: "Check the units.".into() }),
        HookRegistration::after("explain", |_: &HookInput| AfterAnswer::Nothing),
        HookRegistration::run_started("count-runs", Count(AtomicUsize::new(0))),
        HookRegistration::run_finished("audit", audit),
        HookRegistration::new("feedback", iris::hooks::HookEvent::ToolAfter, create_feedback("Mind the units.".into())),
    ];
}
