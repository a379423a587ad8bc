//! A lead agent hands a task to two child agents at once: the researcher
//! asks the person a question (which region?), the writer's save waits for
//! the person's approval (the lead asks before writes, and a child is held
//! to the lead's policy). The run pauses with both items listed flat by
//! their paths, is saved as JSON, and a second process answers, approves
//! and finishes it; the report is written once. The writer starts with the
//! `report-style` skill preloaded (from `examples/skills/`, with a
//! reference file and a script): its instructions are in the writer's
//! first request, and its report follows them.
//!
//! Run with `cargo run --example research_team --features testing,skills` (it
//! starts both processes itself), or by hand: `... -- start STATE
//! WORKSPACE`, then `... -- answer STATE WORKSPACE REGION`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

use iris::agent::{
    Agent, AgentRunner, Answer, ChildAgent, QuestionReply, Questions, Reply, RunContext,
    RunOutcome, RunState, Skills, Wait,
};
use iris::model::{Message, ModelResponse};
use iris::serde_json::json;
use iris::skills::{SkillRoots, SkillScope, Strictness};
use iris::testing::FnModel;
use iris::{ApprovalDecision, Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry, ToolUseBlock};

/// Save the report to `report.md` in the workspace.
#[iris::tool(write)]
fn save_report(
    /// The report's text.
    text: String,
    #[ctx] cx: &iris::ToolContext,
) -> Result<String, std::io::Error> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(cx.workspace_root().join("report.md"))?;
    writeln!(file, "{text}")?;
    Ok("saved report.md".to_owned())
}

/// Models that need no network: each answers from its history alone, so
/// any process asks it and gets the same answer.
fn answer(text: impl Into<String>) -> ModelResponse {
    ModelResponse {
        text: Some(text.into()),
        ..ModelResponse::default()
    }
}

fn call(id: &str, tool: &str, input: iris::serde_json::Value) -> ModelResponse {
    ModelResponse {
        tool_calls: vec![ToolUseBlock::new(id, tool, input)],
        ..ModelResponse::default()
    }
}

/// The lead: delegates to both children, then sums up what they said.
fn lead_model() -> FnModel {
    FnModel::new(|request| {
        let said = request.result_texts();
        if !said.is_empty() {
            return Ok(answer(format!("Team report: {}", said.join(" / "))));
        }
        Ok(ModelResponse {
            tool_calls: vec![
                ToolUseBlock::new(
                    "r1",
                    "researcher",
                    json!({"task": "Find this quarter's sales."}),
                ),
                ToolUseBlock::new("w1", "writer", json!({"task": "Save a report skeleton."})),
            ],
            ..ModelResponse::default()
        })
    })
}

/// The researcher: asks which region, then reports on it.
fn researcher_model() -> FnModel {
    FnModel::new(|request| match request.messages.last() {
        Some(Message::Tool { result, .. }) => {
            let region = result
                .data()
                .and_then(|d| d["answers"][0]["selected"][0].as_str());
            Ok(answer(format!(
                "sales in {} grew 4%",
                region.unwrap_or("every region")
            )))
        }
        _ => Ok(call(
            "q1",
            "ask_question",
            json!({"questions": [{
                "question": "Which region should the research cover?",
                "header": "Region",
                "options": [
                    {"label": "EU", "description": "Europe"},
                    {"label": "US", "description": "North America"}
                ],
                "multi_select": false
            }]}),
        )),
    })
}

/// The writer: saves the skeleton (in the house style when the
/// `report-style` skill is in its first request), then says so.
fn writer_model() -> FnModel {
    FnModel::new(|request| match request.messages.last() {
        Some(Message::Tool { result, .. }) if result.text_content().starts_with("saved") => {
            Ok(answer(result.text_content()))
        }
        _ => {
            let styled = request.messages.iter().any(|m| {
                matches!(m, Message::Tool { result, .. }
                    if result.text_content().starts_with("<skill name=\"report-style\""))
            });
            let text = if styled {
                "# Quarterly report, Q3: Summary / Figures / Risks"
            } else {
                "# Quarterly report"
            };
            Ok(call("s1", "save_report", json!({ "text": text })))
        }
    })
}

/// The team's skills: the house style, kept beside this example and read
/// strictly (a problem in it fails the run at once).
fn team_skills() -> Result<Skills, Box<dyn Error>> {
    let found = SkillRoots::new()
        .with_root(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills"),
            SkillScope::User,
            Strictness::Strict,
        )
        .find();
    if let Some(problem) = found.problems.first() {
        return Err(problem.to_string().into());
    }
    Ok(Skills::new(found.skills))
}

fn runner() -> Result<AgentRunner, Box<dyn Error>> {
    let mut tools = ToolRegistry::new();
    tools.register(SaveReport)?;
    // The writer's own policy lets it write; the lead's asks first, and a
    // child never does more than the agents above it allow.
    let writer = Agent::builder(
        ToolExecutor::builder(tools)
            .policy(RulePolicy::new().write(Rule::Allow))
            .build()?,
    )
    .name("writer")
    .instructions("Write what you are asked to.")
    .build()?;
    let researcher = Agent::builder(ToolExecutor::builder(ToolRegistry::new()).build()?)
        .name("researcher")
        .instructions("Research what you are asked to; ask when the scope is unclear.")
        .build()?;
    let lead = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .policy(RulePolicy::new().other(Rule::Allow).write(Rule::Ask))
            .build()?,
    )
    .name("lead")
    .instructions("Split the work between your team.")
    .child(
        ChildAgent::new("researcher", "Finds facts.", researcher)
            .model(researcher_model())
            .concurrency_safe(),
    )
    .child(
        ChildAgent::new("writer", "Writes files.", writer)
            .model(writer_model())
            .preload_skills(["report-style"])
            .concurrency_safe(),
    )
    .build()?;
    Ok(AgentRunner::new(lead, lead_model())
        .with_questions(Questions::new())
        .with_skills(team_skills()?))
}

/// The first process: starts the run, which waits on the question and the
/// approval, and saves it.
async fn start(saved: &Path, workspace: &Path) -> Result<(), Box<dyn Error>> {
    let cx = RunContext::new(
        workspace,
        RunId::new(format!("team-{}", std::process::id())),
    );
    let RunOutcome::Waiting(state) = runner()?.run("Prepare the quarterly report.", &cx).await?
    else {
        return Err("expected the run to wait for the person".into());
    };
    for pending in state.pending() {
        let what = match pending.item.wait() {
            Wait::Question { request } => format!("asks: {}", request.questions[0].question),
            Wait::Approval { request } => {
                format!("wants to run `{}` with {}", request.tool, request.arguments)
            }
            _ => "waits".to_owned(),
        };
        println!(
            "[process {}] `{}` ({}) {what}",
            std::process::id(),
            pending.id,
            pending.agents.join(" > ")
        );
    }
    std::fs::write(saved, iris::serde_json::to_string_pretty(&state)?)?;
    println!("[process {}] saved the run", std::process::id());
    Ok(())
}

/// The second process: the person answers the question and approves the
/// save; the run goes on here and finishes.
async fn answer_and_approve(
    saved: &Path,
    workspace: &Path,
    region: &str,
) -> Result<(), Box<dyn Error>> {
    let state: RunState = iris::serde_json::from_str(&std::fs::read_to_string(saved)?)?;
    let mut replies: Vec<(String, Reply)> = Vec::new();
    for pending in state.pending() {
        let reply = match pending.item.wait() {
            Wait::Question { request } => {
                QuestionReply::answer(request, vec![Answer::choose(region)]).into()
            }
            Wait::Approval { request } => ApprovalDecision::approve(request).into(),
            _ => return Err("a child agent cannot be replied to itself".into()),
        };
        replies.push((pending.id, reply));
    }
    let cx = RunContext::new(workspace, state.run_id.clone());
    match runner()?.resume(state, replies, &cx).await? {
        RunOutcome::Finished { text, state } => {
            println!("[process {}] {text}", std::process::id());
            for child in &state.children {
                println!(
                    "[process {}]   {} ran as {} in {} step(s)",
                    std::process::id(),
                    child.agent,
                    child.state.run_id,
                    child.state.step
                );
            }
            Ok(())
        }
        other => Err(format!("expected the run to finish, got {other:?}").into()),
    }
}

/// Runs this program again with `args`, and returns what it printed.
fn step(args: &[&str]) -> Result<String, Box<dyn Error>> {
    let output = Command::new(std::env::current_exe()?).args(args).output()?;
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{printed}");
    if !output.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(printed)
}

fn demo() -> Result<(), Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("iris-team-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let saved = dir.join("run.json");
    let (saved_arg, dir_arg) = (saved.to_string_lossy(), dir.to_string_lossy());
    step(&["start", &saved_arg, &dir_arg])?;
    step(&["answer", &saved_arg, &dir_arg, "EU"])?;
    let report = std::fs::read_to_string(dir.join("report.md"))?;
    println!(
        "report.md holds {} line(s): {report:?}",
        report.lines().count()
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = |i: usize| -> Result<PathBuf, Box<dyn Error>> {
        Ok(PathBuf::from(args.get(i).ok_or("missing argument")?))
    };
    match args.first().map(String::as_str) {
        None => demo(),
        Some("start") => start(&path(1)?, &path(2)?).await,
        Some("answer") => {
            let region = args.get(3).ok_or("missing the region")?;
            answer_and_approve(&path(1)?, &path(2)?, region).await
        }
        Some(other) => Err(format!("unknown step `{other}`; use `start` or `answer`").into()),
    }
}
