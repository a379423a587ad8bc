//! `iris run "task" --agent AGENT.yaml`: the agent loop with the file's
//! model, the file assembled as the host assembles it. The
//! model's text streams to stdout (or every run event as JSON Lines with
//! `--jsonl`); calls that wait are asked on the terminal, decided by
//! `--approve`/`--deny`, or saved (`--save`) to be resumed later with
//! `--resume STATE` (or the run's id); Ctrl-C cancels the run between or
//! inside steps.
//!
//! Every run is kept in an embedded SQLite store (`.iris/runs.db`, or
//! `--store`): a pause is resumed once, whichever process or copy of the
//! saved state tries again.
//!
//! The model may ask the person questions (`ask_question`) where one can
//! answer: on a terminal, or with `--answer ID=VALUE` (`--questions` offers
//! the tool to a run that is saved and answered later).

use clap::{Arg, ArgAction, ArgMatches, Command};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use iris_agent::assembly::Assembly;
use iris_agent::store::RunStatus;
use iris_agent::{
    AgentRunner, PendingItem, Questions, RunContext, RunOutcome, RunState, StateKey, Wait,
};
use iris_core::RunId;
use iris_runtime::Reply;
use iris_runtime::observers::{RunEvent, RunEventObserver};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::answer::Scripted;
use crate::approve::{Decide, decide, interactive};
use crate::exit::Exit;
use crate::output::Out;

/// The variable whose secret seals saved states, when set.
const STATE_KEY_VAR: &str = "IRIS_STATE_KEY";

/// Where runs are kept unless `--store` says.
const DEFAULT_STORE: &str = ".iris/runs.db";

pub(crate) struct Options {
    pub(crate) file: PathBuf,
    /// Where the file tools work.
    pub(crate) workspace: PathBuf,
    pub(crate) task: Option<String>,
    /// A saved state's file, or a stored run's id.
    pub(crate) resume: Option<String>,
    pub(crate) save: PathBuf,
    /// The SQLite file runs are kept in.
    pub(crate) store: PathBuf,
    /// A file of the model's answers, asked instead of the file's model.
    pub(crate) script: Option<PathBuf>,
    pub(crate) decide: Decide,
    pub(crate) answers: Scripted,
    /// Whether the model is offered `ask_question` even with no terminal
    /// and no `--answer` (the run is saved, and answered later).
    pub(crate) questions: bool,
    pub(crate) jsonl: bool,
    /// The collector traces are exported to (`--otlp`).
    pub(crate) otlp: Option<String>,
    /// Bounds over the agent file's own (`--budget`), as written and read.
    pub(crate) budget: Option<(String, iris_agent::Budget)>,
}

impl Options {
    /// The run the command line asks for.
    pub(crate) fn of(sub: &ArgMatches, file: PathBuf) -> Result<Self, String> {
        let answers = Scripted::parse(sub.get_many::<String>("answer").into_iter().flatten())?;
        Ok(Self {
            file,
            workspace: crate::catalog::Catalog::workspace(sub),
            task: sub.get_one::<String>("task").cloned(),
            resume: sub.get_one::<String>("resume").cloned(),
            save: sub
                .get_one::<String>("save")
                .map_or_else(|| PathBuf::from("iris-run.json"), PathBuf::from),
            store: sub
                .get_one::<String>("store")
                .map_or_else(|| PathBuf::from(DEFAULT_STORE), PathBuf::from),
            script: sub.get_one::<String>("script").map(PathBuf::from),
            decide: crate::approve::Decide::from_flags(sub),
            answers,
            questions: sub.get_flag("questions"),
            jsonl: sub.get_flag("jsonl"),
            otlp: sub.get_one::<String>("otlp").cloned(),
            budget: sub
                .get_one::<String>("budget")
                .map(|spec| {
                    crate::budget::parse(spec)
                        .map(|budget| (spec.clone(), budget))
                        .map_err(|why| format!("--budget: {why}"))
                })
                .transpose()?,
        })
    }

    /// Whether a person can answer the run's questions: on a terminal,
    /// with `--answer`, or later (`--questions`).
    fn can_answer(&self) -> bool {
        self.questions || !self.answers.is_empty() || interactive()
    }
}

/// Prints the run as it happens: the model's streamed text, or every event
/// as one JSON line.
struct Printer {
    jsonl: bool,
    /// Whether the model streams: its text is printed as it arrives, not
    /// from the outcome.
    streaming: AtomicBool,
    /// Set when the drain marker came through: every event before it was
    /// printed.
    drained: (Mutex<bool>, Condvar),
}

/// The run id of the marker event that shows the printer caught up.
const DRAIN_MARK: &str = "iris-cli-drained";

impl Printer {
    /// A printer of text, or of every event as JSON Lines.
    fn new(jsonl: bool) -> Arc<Self> {
        Arc::new(Self {
            jsonl,
            streaming: AtomicBool::new(false),
            drained: (Mutex::new(false), Condvar::new()),
        })
    }

    fn set_streaming(&self, streaming: bool) {
        self.streaming.store(streaming, Ordering::Relaxed);
    }

    /// Waits (a little at most) until every event emitted so far through
    /// `runner` has been printed: observers run on a thread of their own.
    fn drain(&self, runner: &AgentRunner) {
        if let Ok(mut done) = self.drained.0.lock() {
            *done = false;
        }
        runner.agent().executor().emit_event(RunEvent::ModelText {
            run_id: RunId::new(DRAIN_MARK),
            text: String::new(),
        });
        let (lock, signal) = &self.drained;
        let Ok(done) = lock.lock() else { return };
        let _ = signal.wait_timeout_while(done, Duration::from_secs(2), |done| !*done);
    }
}

impl RunEventObserver for Printer {
    fn on_event(&self, event: &RunEvent) {
        if let RunEvent::ModelText { run_id, .. } = event
            && run_id.as_str() == DRAIN_MARK
        {
            let (lock, signal) = &self.drained;
            if let Ok(mut done) = lock.lock() {
                *done = true;
                signal.notify_all();
            }
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if self.jsonl {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(stdout, "{line}");
            }
            return;
        }
        match event {
            // A child agent's text is its own: the root's answer is what
            // the person reads (with `--jsonl`, every run's text).
            RunEvent::ModelText { text, run_id }
                if self.streaming.load(Ordering::Relaxed) && !run_id.as_str().contains('/') =>
            {
                let _ = write!(stdout, "{text}");
                let _ = stdout.flush();
            }
            // Child agents at work, nested by depth, beside the answer.
            RunEvent::ChildStarted { agent, depth, .. } => {
                let indent = "  ".repeat(usize::try_from(*depth).unwrap_or(1));
                let _ = writeln!(std::io::stderr().lock(), "{indent}> {agent} is working");
            }
            RunEvent::ChildEnded {
                agent,
                depth,
                ending,
                ..
            } => {
                let indent = "  ".repeat(usize::try_from(*depth).unwrap_or(1));
                let _ = writeln!(std::io::stderr().lock(), "{indent}< {agent}: {ending}");
            }
            // A skill's instructions joining the run, beside the answer.
            RunEvent::SkillActivated { skill, .. } => {
                let _ = writeln!(std::io::stderr().lock(), "  * skill {skill} activated");
            }
            _ => {}
        }
    }
}

/// `iris run` as the command line `sub` asks, for the agent file `file`,
/// with what `host` brings (its assembly, its model).
pub(crate) async fn from_matches(
    sub: &ArgMatches,
    file: PathBuf,
    host: &crate::Host,
    out: Out,
) -> Exit {
    match Options::of(sub, file) {
        Ok(options) => run(&options, &host.assembly, host.model.clone(), out).await,
        Err(message) => out.fail(Exit::Usage, &message),
    }
}

pub(crate) async fn run(
    options: &Options,
    assembly: &Assembly,
    model: Option<Arc<dyn iris_model::Model>>,
    out: Out,
) -> Exit {
    let printer = Printer::new(options.jsonl);
    let starting = crate::progress::after_a_second("loading the agent file", out);
    let runner = runner_for(options, assembly, model, &printer).await;
    drop(starting);
    let runner = match runner {
        Ok(runner) => runner,
        Err((exit, message)) => return out.fail(exit, &message),
    };
    // Held to the end of the run: its drop flushes the spans left.
    let _traces = match export_traces(options, &runner) {
        Ok(guard) => guard,
        Err(message) => return out.fail(Exit::Usage, &message),
    };
    let streaming = printer.streaming.load(Ordering::Relaxed);
    let workspace = options.workspace.clone();
    let cancel = cancelled_by_interrupt();
    let first = match (options.resume.as_deref(), options.task.as_deref()) {
        (Some(target), _) => {
            let state = match resumed_state(target, &runner).await {
                Ok(state) => state,
                Err(why) => return out.fail(Exit::Usage, &why),
            };
            let cx =
                RunContext::new(&workspace, state.run_id.clone()).with_cancellation(cancel.clone());
            match go_on(&runner, state, options, &cx, out).await {
                Ok(outcome) => (outcome, cx),
                Err(exit) => return exit,
            }
        }
        (None, Some(task)) => {
            let cx = RunContext::new(&workspace, fresh_run_id()).with_cancellation(cancel.clone());
            let working = crate::progress::after_a_second(
                "working on the task",
                Out {
                    json: options.jsonl || out.json,
                },
            );
            let outcome = runner.run(task, &cx).await;
            drop(working);
            (outcome, cx)
        }
        (None, None) => {
            return out.fail(
                Exit::Usage,
                &format!(
                    "give the task: `{} run \"what to do\" --agent AGENT.yaml`, or `--resume STATE`",
                    crate::output::program()
                ),
            );
        }
    };
    let (mut outcome, cx) = first;
    loop {
        printer.drain(&runner);
        let next = match outcome {
            // A model that could not be reached, or refused the request.
            Err(error @ iris_agent::RunError::Model(_)) => {
                return out.fail(Exit::Unreachable, &error.to_string());
            }
            // A state or a reply the run refused before anything ran: the
            // command line was given something that cannot resume it.
            Err(error) if refused(&error) => return out.fail(Exit::Usage, &error.to_string()),
            Err(error) => return out.fail(Exit::Internal, &error.to_string()),
            Ok(RunOutcome::Finished { text, state }) => {
                return finished(&text, &state, options, streaming, out);
            }
            Ok(RunOutcome::CutOff { text, state }) => {
                return cut_off(&text, &state, options, streaming, out);
            }
            Ok(
                stopped @ (RunOutcome::MaxSteps(_)
                | RunOutcome::Refused { .. }
                | RunOutcome::OverBudget { .. }
                | RunOutcome::OutputInvalid { .. }
                | RunOutcome::Cancelled(_)),
            ) => return ended_early(stopped, options, out),
            Ok(RunOutcome::Waiting(state)) => {
                match go_on(&runner, state, options, &cx, out).await {
                    Ok(outcome) => outcome,
                    Err(exit) => return exit,
                }
            }
        };
        outcome = next;
    }
}

/// A run that stopped before the model finished: its state saved, and why
/// it stopped said, with its exit.
fn ended_early(outcome: RunOutcome, options: &Options, out: Out) -> Exit {
    match outcome {
        RunOutcome::MaxSteps(state) => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Incomplete,
                &format!(
                    "the run took its {} steps without finishing; its state is in {}",
                    state.step,
                    options.save.display()
                ),
            )
        }
        RunOutcome::Refused {
            hook,
            reason,
            state,
        } => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Denied,
                &format!(
                    "hook `{hook}` refused the run: {reason}; the run's state is in {}",
                    options.save.display()
                ),
            )
        }
        RunOutcome::OverBudget { over, state } => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Incomplete,
                &format!(
                    "{over}; spent {}; the run's state is in {}",
                    state.spent,
                    options.save.display()
                ),
            )
        }
        RunOutcome::OutputInvalid { error, state, .. } => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Incomplete,
                &format!(
                    "the model's answer did not fit the agent's output after {} tries ({error}); the run's state is in {}",
                    state.output_faults + 1,
                    options.save.display()
                ),
            )
        }
        RunOutcome::Cancelled(state) => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Cancelled,
                &format!(
                    "cancelled; the run's state is in {}",
                    options.save.display()
                ),
            )
        }
        // Only the outcomes above stop a run early.
        RunOutcome::Finished { state, .. }
        | RunOutcome::CutOff { state, .. }
        | RunOutcome::Waiting(state) => {
            let _ = save(&state, &options.save);
            out.fail(
                Exit::Internal,
                "the run ended in a way `iris run` did not expect",
            )
        }
    }
}

/// The model's final text, unless it was printed as it streamed.
fn print_answer(text: &str, streaming: bool, out: Out) {
    if streaming {
        out.line("");
    } else {
        out.line(text);
    }
}

/// A run that finished: its answer, and what it took.
fn finished(text: &str, state: &RunState, options: &Options, streaming: bool, out: Out) -> Exit {
    match (&state.output, options.jsonl) {
        // A typed output is printed as the value it is.
        (Some(output), true) => out.line(
            &json!({"event": "run_output", "run_id": state.run_id, "output": output}).to_string(),
        ),
        (Some(output), false) => {
            if streaming {
                out.line("");
            }
            out.line(&serde_json::to_string_pretty(output).unwrap_or_else(|_| output.to_string()));
        }
        (None, false) => print_answer(text, streaming, out),
        (None, true) => {}
    }
    out.note(&format!(
        "finished in {} step(s), {} token(s)",
        state.step,
        state.usage.total()
    ));
    if !state.spent.is_empty() {
        out.note(&format!("spent: {}", state.spent));
    }
    Exit::Ok
}

/// An answer cut off by the token limit: what the model wrote is shown and
/// said to be cut (a `run_cut_off` line with `--jsonl`), the run saved,
/// and the exit is 10.
fn cut_off(text: &str, state: &RunState, options: &Options, streaming: bool, out: Out) -> Exit {
    if options.jsonl {
        out.line(
            &json!({"event": "run_cut_off", "run_id": state.run_id, "text": text, "state": options.save})
                .to_string(),
        );
    } else {
        print_answer(text, streaming, out);
    }
    let _ = save(state, &options.save);
    Out {
        json: options.jsonl || out.json,
    }
    .fail(
        Exit::Incomplete,
        &format!(
            "the model's answer was cut off by its token limit before it finished (raise `max_tokens` in the agent file's `model` section); the run's state is in {}",
            options.save.display()
        ),
    )
}

/// The runner of the agent file, reporting to `printer`, sealing saved
/// states when `IRIS_STATE_KEY` is set.
async fn runner_for(
    options: &Options,
    assembly: &Assembly,
    model: Option<Arc<dyn iris_model::Model>>,
    printer: &Arc<Printer>,
) -> Result<AgentRunner, (Exit, String)> {
    let model = match (model, &options.script) {
        (Some(model), _) => Some(model),
        (None, Some(script)) => Some(Arc::new(
            crate::script::model(script).map_err(|why| (Exit::Usage, why))?,
        ) as Arc<dyn iris_model::Model>),
        (None, None) => None,
    };
    let observer: Arc<dyn RunEventObserver> = printer.clone();
    let assembly = assembly.clone().with_observers([observer]);
    let connected = match model {
        // The host's model, or the script's, instead of the file's.
        Some(model) => assembly
            .connect(&options.file)
            .await
            .map(|agent| AgentRunner::new(agent, model)),
        None => assembly.open_runner(&options.file).await,
    };
    let mut runner = connected.map_err(|error| {
        // A file that is not there was named wrong; one that is there
        // has problems of its own.
        let exit = if options.file.exists() {
            Exit::Invalid
        } else {
            Exit::Usage
        };
        (exit, error.to_string())
    })?;
    // The printer is shared with the executor already; whether it prints
    // deltas is known only now that the file is read.
    printer.set_streaming(runner.agent().model().is_some_and(|m| m.stream));
    if std::env::var_os(STATE_KEY_VAR).is_some() {
        let key = StateKey::from_env(STATE_KEY_VAR)
            .map_err(|error| (Exit::Usage, format!("{STATE_KEY_VAR}: {error}")))?;
        runner = runner.with_state_key(key);
    }
    if options.can_answer() {
        runner = runner.with_questions(Questions::new());
    }
    if let Some((_, budget)) = &options.budget {
        // Bound by bound over the file's: `--budget requests=30` keeps the
        // file's money bound.
        let budget = match runner.agent().budget() {
            Some(file) => budget.over(file),
            None => budget.clone(),
        };
        if budget.max_usd().is_some() && runner.agent().prices().is_none() {
            return Err((
                Exit::Usage,
                "`--budget usd=…` counts at the prices you pay: name them in the agent file's `budget.prices` (by model, or `*` for any)".to_owned(),
            ));
        }
        runner = runner.with_budget(budget);
    }
    Ok(runner.with_store(open_store(&options.store).map_err(|why| (Exit::Unreachable, why))?))
}

/// The SQLite store at `path`, its folder made when missing.
fn open_store(path: &Path) -> Result<iris_sqlite::SqliteStore, String> {
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(|e| {
            format!(
                "cannot make the folder of the run store `{}`: {e}",
                path.display()
            )
        })?;
    }
    iris_sqlite::SqliteStore::open(path).map_err(|e| {
        format!(
            "cannot open the run store `{}` ({e}); name another with `--store`",
            path.display()
        )
    })
}

/// The state `--resume` names: a saved state's file, or the id of a run
/// in the store.
async fn resumed_state(target: &str, runner: &AgentRunner) -> Result<RunState, String> {
    let path = Path::new(target);
    if path.is_file() {
        return read_state(path);
    }
    let store = runner
        .store()
        .ok_or_else(|| format!("`{target}` is not a file"))?;
    match store.load(&RunId::new(target)).await {
        Ok(Some(stored)) if stored.status == RunStatus::Waiting => Ok(stored.state),
        Ok(Some(stored)) => Err(format!(
            "run `{target}` does not wait for a person (it is {}); there is nothing to resume",
            stored.status.as_str()
        )),
        Ok(None) => Err(format!(
            "`{target}` is neither a saved state's file nor a run in the store; give the file `--save` wrote, or the run's id (with `--store` when it was kept elsewhere)"
        )),
        Err(e) => Err(format!("the run store could not read run `{target}`: {e}")),
    }
}

/// Whether `error` refused a resume before anything ran: a state that is
/// not the one its run waits with (edited, an older copy, resumed
/// already), replies that do not fit, or a run the store does not hold
/// waiting.
fn refused(error: &iris_agent::RunError) -> bool {
    use iris_agent::RunError;
    use iris_agent::store::StoreError;
    matches!(
        error,
        RunError::WrongState { .. }
            | RunError::StateMismatch { .. }
            | RunError::MissingDecision { .. }
            | RunError::UnknownDecision { .. }
            | RunError::WrongReply { .. }
            | RunError::Store(
                StoreError::NotFound { .. }
                    | StoreError::Finished { .. }
                    | StoreError::NotWaiting { .. }
                    | StoreError::Held { .. }
            )
    )
}

/// Starts exporting the run's traces to `--otlp`, else to the agent file's
/// `telemetry.otlp`, when either names a collector.
fn export_traces(
    options: &Options,
    runner: &AgentRunner,
) -> Result<Option<iris_telemetry::TelemetryGuard>, String> {
    let settings = runner.agent().telemetry();
    let Some(endpoint) = options
        .otlp
        .clone()
        .or_else(|| settings.and_then(|t| t.otlp.clone()))
    else {
        crate::logging::install(None::<tracing_subscriber::layer::Identity>);
        return Ok(None);
    };
    let mut otlp = iris_telemetry::Otlp::new(endpoint);
    if let Some(name) = settings.and_then(|t| t.service_name.as_deref()) {
        otlp = otlp.service_name(name);
    }
    let (layer, guard) = otlp.layer().map_err(|e| e.to_string())?;
    crate::logging::install(Some(layer));
    Ok(Some(guard))
}

/// A token Ctrl-C cancels.
fn cancelled_by_interrupt() -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    cancel
}

/// Resumes a waiting run with a reply to each of its items, or saves it
/// for later when one cannot be given here (the exit to end with).
async fn go_on(
    runner: &AgentRunner,
    state: RunState,
    options: &Options,
    cx: &RunContext,
    out: Out,
) -> Result<Result<RunOutcome, iris_agent::RunError>, Exit> {
    match replies(&state, options) {
        Ok(Some(replies)) => Ok(runner.resume(state, replies, cx).await),
        Ok(None) => Err(wait(&state, options, out)),
        Err(why) => {
            let _ = save(&state, &options.save);
            Err(out.fail(
                Exit::Usage,
                &format!("{why}; the run's state is in {}", options.save.display()),
            ))
        }
    }
}

/// A reply to every waiting item of `state`, or `None` when one cannot be
/// given here (the run is saved for later).
///
/// # Errors
/// An `--answer` that does not fit its question.
fn replies(state: &RunState, options: &Options) -> Result<Option<Vec<(String, Reply)>>, String> {
    let pending = state.pending();
    if let Some(stray) = options
        .answers
        .ids()
        .find(|id| !pending.iter().any(|p| p.id == *id))
    {
        let waiting: Vec<String> = pending
            .iter()
            .filter(|p| p.item.question_request().is_some())
            .map(|p| format!("`{}`", p.id))
            .collect();
        let waiting = if waiting.is_empty() {
            "no question waits".to_owned()
        } else {
            format!("the questions that wait are {}", waiting.join(", "))
        };
        return Err(format!(
            "`--answer {stray}=...` names no item that waits ({waiting}); nothing was answered"
        ));
    }
    let mut replies = Vec::with_capacity(pending.len());
    for PendingItem { id, item, .. } in &pending {
        let reply = match item.wait() {
            Wait::Approval { request } => decide(request, options.decide).map(Reply::from),
            Wait::Question { request } => match options.answers.reply(id, request) {
                Some(answer) => Some(Reply::from(answer?)),
                None if interactive() => crate::answer::ask(request).map(Reply::from),
                None => None,
            },
            _ => None,
        };
        let Some(reply) = reply else { return Ok(None) };
        replies.push((id.clone(), reply));
    }
    Ok(Some(replies))
}

/// Saves a waiting run and says how to resume it (exit 4).
fn wait(state: &RunState, options: &Options, out: Out) -> Exit {
    let path = &options.save;
    if let Err(why) = save(state, path) {
        return out.fail(Exit::Internal, &why);
    }
    if out.json {
        out.json(json!({"outcome": "waiting", "state": path, "waiting": state.pending()}));
    }
    let mut questions = false;
    for PendingItem { id, item, .. } in state.pending() {
        match item.wait() {
            Wait::Approval { request } => out.note(&format!(
                "waiting: `{}` with {}",
                request.tool, request.arguments
            )),
            Wait::Question { request } => {
                questions = true;
                for question in &request.questions {
                    out.note(&format!(
                        "question `{id}`: {}",
                        iris_runtime::__wings::for_person(&question.question, 500)
                    ));
                }
            }
            _ => {}
        }
    }
    let how = if questions {
        "`--answer ID=VALUE` for each question, `--approve` or `--deny` for each call"
    } else {
        "`--approve` or `--deny`"
    };
    out.fail(
        Exit::Waiting,
        &format!(
            "the run waits for a person; its state is in {p}: resume with `{program} run --agent AGENT.yaml --resume {p}{budget}` (or `--resume {id}`) and {how} (or answer on a terminal)",
            program = crate::output::program(),
            p = path.display(),
            id = state.run_id,
            // The bounds given here are not kept with the run.
            budget = options
                .budget
                .as_ref()
                .map(|(spec, _)| format!(" --budget '{spec}'"))
                .unwrap_or_default(),
        ),
    )
}

fn save(state: &RunState, path: &Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
    std::fs::write(path, text)
        .map_err(|e| format!("cannot write the run's state to `{}`: {e}", path.display()))
}

fn read_state(path: &Path) -> Result<RunState, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("`{}` is not a saved run ({e})", path.display()))
}

/// A run id no other run of this machine has: the time and the process.
fn fresh_run_id() -> RunId {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    RunId::new(format!("cli-{nanos:x}-{}", std::process::id()))
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("run")
        .about("Run the agent file's agent on a task with its model")
        .arg(crate::catalog::agent_file_arg())
        .arg(crate::catalog::workspace_arg())
        .arg(
            Arg::new("task")
                .value_name("TASK")
                .help("What to do (not with --resume)"),
        )
        .arg(
            Arg::new("resume")
                .long("resume")
                .value_name("STATE|RUN_ID")
                .conflicts_with("task")
                .help("Resume a run that waits for a person: the file --save wrote, or the run's id in the store"),
        )
        .arg(
            Arg::new("script")
                .long("script")
                .value_name("FILE")
                .help("Ask a script instead of the file's model: a JSON list of answers, one per step ({\"text\": ...} or {\"calls\": [{\"name\": ..., \"input\": {...}}]})"),
        )
        .arg(
            Arg::new("store")
                .long("store")
                .value_name("FILE")
                .default_value(DEFAULT_STORE)
                .help("The SQLite file runs are kept in: a pause is resumed once, from any process"),
        )
        .arg(
            Arg::new("save")
                .long("save")
                .value_name("STATE")
                .default_value("iris-run.json")
                .help("Where a run that waits (or stops) is saved"),
        )
        .arg(
            Arg::new("approve")
                .long("approve")
                .action(ArgAction::SetTrue)
                .conflicts_with("deny")
                .help("Approve every call that waits for approval"),
        )
        .arg(
            Arg::new("deny")
                .long("deny")
                .action(ArgAction::SetTrue)
                .help("Deny every call that waits for approval"),
        )
        .arg(
            Arg::new("answer")
                .long("answer")
                .value_name("ID=VALUE")
                .action(ArgAction::Append)
                .help("Answer the model's question ID: an option's label, `text:` and your own words, a JSON list (one answer per question), or nothing to decline"),
        )
        .arg(
            Arg::new("questions")
                .long("questions")
                .action(ArgAction::SetTrue)
                .help("Let the model ask questions with no terminal and no --answer: the run is saved, to be answered with --resume"),
        )
        .arg(
            Arg::new("jsonl")
                .long("jsonl")
                .action(ArgAction::SetTrue)
                .help("Print every run event as one JSON line"),
        )
        .arg(
            Arg::new("budget")
                .long("budget")
                .value_name("BOUNDS")
                .help("Bound what the run spends, its child agents included, over the agent file's `budget:`: tokens=N, input_tokens=N, output_tokens=N, usd=D (at the file's `budget.prices`), requests=N, tool_calls=N, active_seconds=N, comma-separated"),
        )
        .arg(
            Arg::new("otlp")
                .long("otlp")
                .value_name("URL")
                .help("Export the run's traces (OpenTelemetry GenAI spans) to this collector's OTLP/HTTP address, such as http://127.0.0.1:4318"),
        )
}
