//! A journal that keeps steps whole (`CallJournal::by_step`): the claims of
//! a step's calls that may not run twice are taken in one go when the first
//! of them reaches its body, each call takes its answer there, and the
//! results go back in one go after the step's last call.

use std::sync::{Arc, Mutex};

use iris::journal::{CallJournal, Claimed, JournalError, Journaled};
use iris::serde_json::json;
use iris::tool::BoxFuture;
use iris::{
    Rule, RulePolicy, RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult,
    ToolUseBlock,
};

/// What the journal was asked, and what the tools did, in order.
type Log = Arc<Mutex<Vec<String>>>;

fn note(log: &Mutex<Vec<String>>, line: String) {
    log.lock().unwrap().push(line);
}

/// A step journal in memory; `answer` decides what a claim of the step
/// answers (a fresh run, a replay, a refusal).
struct StepJournal {
    log: Log,
    answer: fn(&[&str]) -> Result<Vec<Claimed>, JournalError>,
}

impl CallJournal for StepJournal {
    fn claim<'a>(
        &'a self,
        _: &'a RunId,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, JournalError>> {
        note(&self.log, format!("claim {id}"));
        Box::pin(async { Ok(Claimed::New) })
    }

    fn record<'a>(
        &'a self,
        _: &'a RunId,
        id: &'a str,
        _: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        note(&self.log, format!("record {id}"));
        Box::pin(async { Ok(()) })
    }

    fn by_step(&self) -> bool {
        true
    }

    fn claim_step<'a>(
        &'a self,
        _: &'a RunId,
        ids: &'a [&'a str],
    ) -> BoxFuture<'a, Result<Vec<Claimed>, JournalError>> {
        note(&self.log, format!("claim_step {}", ids.join(",")));
        let answer = (self.answer)(ids);
        Box::pin(async move { answer })
    }

    fn record_step<'a>(
        &'a self,
        _: &'a RunId,
        results: &'a [(String, ToolResult)],
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        let kept: Vec<String> = results
            .iter()
            .map(|(id, result)| format!("{id}={}", result.text_content()))
            .collect();
        note(&self.log, format!("record_step {}", kept.join(",")));
        Box::pin(async { Ok(()) })
    }
}

/// Look something up.
#[iris::tool(read_only)]
fn look(#[ctx] cx: &ToolContext) -> &'static str {
    note(
        &cx.state::<Mutex<Vec<String>>>().unwrap().0,
        "body look".into(),
    );
    "seen"
}

/// Write something down: may not run twice.
#[iris::tool(write)]
fn write(
    /// What to write.
    text: String,
    #[ctx] cx: &ToolContext,
) -> String {
    note(
        &cx.state::<Mutex<Vec<String>>>().unwrap().0,
        format!("body write {text}"),
    );
    format!("wrote {text}")
}

/// Set something: safe to repeat, so never claimed.
#[iris::tool(write, idempotent)]
fn set(#[ctx] cx: &ToolContext) -> &'static str {
    note(
        &cx.state::<Mutex<Vec<String>>>().unwrap().0,
        "body set".into(),
    );
    "set"
}

/// The executor; `ask_before_writing`: `write` waits for approval.
fn executor(ask_before_writing: bool) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(Look).unwrap();
    registry.register(Write).unwrap();
    registry.register(Set).unwrap();
    let mut policy = RulePolicy::new().write(Rule::Allow);
    if ask_before_writing {
        policy = policy.tool(iris::definition::ToolName::new("write").unwrap(), Rule::Ask);
    }
    ToolExecutor::builder(registry)
        .policy(policy)
        .build()
        .unwrap()
}

fn step() -> Vec<ToolUseBlock> {
    vec![
        ToolUseBlock::new("r", "look", json!({})),
        ToolUseBlock::new("a", "write", json!({"text": "one"})),
        ToolUseBlock::new("s", "set", json!({})),
        ToolUseBlock::new("b", "write", json!({"text": "two"})),
    ]
}

async fn run_step(
    answer: fn(&[&str]) -> Result<Vec<Claimed>, JournalError>,
) -> (Vec<iris::ToolOutcome>, Vec<String>) {
    let log = Log::default();
    let journal = StepJournal {
        log: Arc::clone(&log),
        answer,
    };
    let cx = ToolContext::builder(".", RunId::new("run"))
        .shared_state(Arc::clone(&log))
        .extension(Journaled(Arc::new(journal)))
        .build();
    let outcomes = executor(false).execute_batch(step(), &cx).await;
    let log = log.lock().unwrap().clone();
    (outcomes, log)
}

fn result(outcome: &iris::ToolOutcome) -> &ToolResult {
    match outcome {
        iris::ToolOutcome::Finished { result, .. } => result,
        iris::ToolOutcome::Waiting(_) => panic!("the call finished"),
    }
}

#[tokio::test]
async fn the_writes_of_a_step_are_claimed_together_when_the_first_runs() {
    let (outcomes, log) = run_step(|ids| Ok(vec![Claimed::New; ids.len()])).await;
    assert_eq!(
        log,
        [
            // The read runs before anything is claimed.
            "body look",
            "claim_step a,b",
            "body write one",
            // The idempotent write is claimed by none.
            "body set",
            "body write two",
            "record_step a=wrote one,b=wrote two",
        ]
    );
    let texts: Vec<String> = outcomes.iter().map(|o| result(o).text_content()).collect();
    assert_eq!(texts, ["seen", "wrote one", "set", "wrote two"]);
}

#[tokio::test]
async fn a_replayed_step_runs_none_of_its_claimed_writes_and_records_nothing() {
    let (outcomes, log) = run_step(|_| {
        Ok(vec![
            Claimed::Ran(ToolResult::text("wrote one, before")),
            Claimed::Unfinished,
        ])
    })
    .await;
    assert_eq!(log, ["body look", "claim_step a,b", "body set"]);
    assert_eq!(result(&outcomes[1]).text_content(), "wrote one, before");
    assert_eq!(
        result(&outcomes[3]).error_kind(),
        Some(ToolErrorKind::Interrupted)
    );
}

#[tokio::test]
async fn a_step_the_journal_will_not_claim_runs_none_of_its_writes() {
    let (outcomes, log) =
        run_step(|_| Err(JournalError::new("claiming a step", "the store is gone"))).await;
    assert_eq!(log, ["body look", "claim_step a,b", "body set"]);
    for at in [1, 3] {
        let result = result(&outcomes[at]);
        assert_eq!(result.error_kind(), Some(ToolErrorKind::Internal));
        assert!(
            result.text_content().contains("the store is gone"),
            "{}",
            result.text_content()
        );
    }
}

#[tokio::test]
async fn a_step_of_reads_claims_nothing() {
    let log = Log::default();
    let journal = StepJournal {
        log: Arc::clone(&log),
        answer: |_| panic!("nothing to claim"),
    };
    let cx = ToolContext::builder(".", RunId::new("run"))
        .shared_state(Arc::clone(&log))
        .extension(Journaled(Arc::new(journal)))
        .build();
    let calls = vec![
        ToolUseBlock::new("r1", "look", json!({})),
        ToolUseBlock::new("s", "set", json!({})),
    ];
    executor(false).execute_batch(calls, &cx).await;
    assert_eq!(*log.lock().unwrap(), ["body look", "body set"]);
}

#[tokio::test]
async fn a_claimed_write_that_waits_for_approval_leaves_the_others_to_run() {
    let log = Log::default();
    let journal = StepJournal {
        log: Arc::clone(&log),
        answer: |ids| Ok(vec![Claimed::New; ids.len()]),
    };
    let cx = ToolContext::builder(".", RunId::new("run"))
        .shared_state(Arc::clone(&log))
        .extension(Journaled(Arc::new(journal)))
        .build();
    let calls = vec![
        ToolUseBlock::new("a", "write", json!({"text": "one"})),
        ToolUseBlock::new("s", "set", json!({})),
    ];
    let outcomes = executor(true).execute_batch(calls, &cx).await;
    assert!(matches!(outcomes[0], iris::ToolOutcome::Waiting(_)));
    // Nothing reached a claimed body: nothing is claimed or recorded.
    assert_eq!(*log.lock().unwrap(), ["body set"]);
}
