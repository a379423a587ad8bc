//! Permission policies and the approvals that answer `Ask`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use iris_core::{Capability, RunId, ToolDefinition, ToolName, ToolUseBlock};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::digest::{arguments_hash, hex};

/// What a policy sees of a call.
#[derive(Debug, Clone, Copy)]
pub struct PermissionRequest<'a> {
    /// The called tool.
    pub definition: &'a ToolDefinition,
    /// The arguments as parsed JSON.
    pub arguments: &'a Value,
    /// Whether the tool says this call only reads.
    pub read_only: bool,
    /// The run asking.
    pub run_id: &'a RunId,
}

/// A policy's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Permission {
    /// Run it.
    Allow,
    /// Ask a person first; the call waits.
    Ask {
        /// Shown to the person deciding.
        reason: Option<String>,
    },
    /// Refuse; the model reads the reason.
    Deny {
        /// Why, written for the model.
        reason: String,
    },
}

/// Decides whether a call may run. Consulted before hooks and again at the
/// side-effect gate right before the body. When no hook or middleware sees
/// the call nothing runs in between, and one check is both.
pub trait PermissionPolicy: Send + Sync + 'static {
    /// The decision for this call.
    fn check(&self, request: &PermissionRequest<'_>) -> Permission;
}

/// Policies above the executor's own for the calls of one context: a
/// child agent's calls carry the policies of the agents that delegated to
/// it, so that a child never does what an ancestor may not. Put in the
/// context as an extension
/// ([`ToolContextBuilder::extension`](iris_core::ToolContextBuilder::extension));
/// the strictest answer of the executor's policy and these wins (deny over
/// ask over allow).
#[derive(Clone, Default)]
pub struct PolicyCeiling {
    policies: Vec<(Arc<dyn PermissionPolicy>, CeilingReach)>,
}

/// How much of an ancestor's policy a ceiling carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeilingReach {
    /// Every answer: what it asks about asks, what it denies is denied.
    Whole,
    /// Only its denials (the host widened what the descendant may do; deny
    /// rules still hold for every descendant).
    DenialsOnly,
}

impl std::fmt::Debug for PolicyCeiling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyCeiling")
            .field("policies", &self.policies.len())
            .finish()
    }
}

impl PolicyCeiling {
    /// This ceiling with `policy` above it too.
    #[must_use]
    pub fn with(mut self, policy: Arc<dyn PermissionPolicy>, reach: CeilingReach) -> Self {
        self.policies.push((policy, reach));
        self
    }

    /// The strictest of `own` and every policy of the ceiling for `request`.
    #[must_use]
    pub fn check(&self, own: Permission, request: &PermissionRequest<'_>) -> Permission {
        self.policies
            .iter()
            .fold(own, |strictest, (policy, reach)| {
                let above = match (policy.check(request), reach) {
                    (deny @ Permission::Deny { .. }, _) => deny,
                    (_, CeilingReach::DenialsOnly) => Permission::Allow,
                    (other, CeilingReach::Whole) => other,
                };
                stricter(strictest, above)
            })
    }
}

/// The stricter of two answers: deny over ask over allow (the first of
/// two alike).
fn stricter(a: Permission, b: Permission) -> Permission {
    let rank = |p: &Permission| match p {
        Permission::Allow => 0,
        Permission::Ask { .. } => 1,
        Permission::Deny { .. } => 2,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

/// One rule of a [`RulePolicy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Run without asking.
    Allow,
    /// Ask a person.
    Ask,
    /// Refuse.
    Deny,
}

/// Allow, ask or deny by capability, with per-tool overrides.
///
/// The class of a call is decided in this order: a per-tool rule; `exec`;
/// `write`; read-only (per the tool's answer for these arguments); anything
/// else. Defaults: read-only allowed, everything else asks. Per-tool rules
/// can change while the executor runs ([`RulePolicy::set_tool`], on a policy
/// given with `shared_policy`); approvals are checked again at the gate.
#[derive(Debug)]
pub struct RulePolicy {
    read_only: Rule,
    write: Rule,
    exec: Rule,
    other: Rule,
    tools: RwLock<HashMap<ToolName, Rule>>,
    /// Set once a per-tool rule exists: until then a check never takes the
    /// lock, which would cost every call more than the rest of the check.
    has_tool_rules: AtomicBool,
}

impl Default for RulePolicy {
    fn default() -> Self {
        Self {
            read_only: Rule::Allow,
            write: Rule::Ask,
            exec: Rule::Ask,
            other: Rule::Ask,
            tools: RwLock::new(HashMap::new()),
            has_tool_rules: AtomicBool::new(false),
        }
    }
}

impl RulePolicy {
    /// The default rules: read-only allowed, the rest asks.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the rule for tools tagged `write`.
    #[must_use]
    pub fn write(mut self, rule: Rule) -> Self {
        self.write = rule;
        self
    }

    /// Sets the rule for tools tagged `exec`.
    #[must_use]
    pub fn exec(mut self, rule: Rule) -> Self {
        self.exec = rule;
        self
    }

    /// Sets the rule for read-only calls.
    #[must_use]
    pub fn read_only(mut self, rule: Rule) -> Self {
        self.read_only = rule;
        self
    }

    /// Sets the rule for calls that are neither read-only, write nor exec.
    #[must_use]
    pub fn other(mut self, rule: Rule) -> Self {
        self.other = rule;
        self
    }

    /// Sets the rule for one tool, over its capabilities.
    #[must_use]
    pub fn tool(self, name: ToolName, rule: Rule) -> Self {
        self.set_tool(name, rule);
        self
    }

    /// Changes the rule for one tool while the policy is in use.
    pub fn set_tool(&self, name: ToolName, rule: Rule) {
        // A poisoned lock only means a writer panicked mid-insert; the
        // rules are plain values, so carry on with what is there.
        self.tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name, rule);
        self.has_tool_rules.store(true, Ordering::Release);
    }

    /// The per-tool rule for `name`, if any.
    fn tool_rule(&self, name: &ToolName) -> Option<Rule> {
        if !self.has_tool_rules.load(Ordering::Acquire) {
            return None;
        }
        self.tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .copied()
    }
}

impl PermissionPolicy for RulePolicy {
    fn check(&self, request: &PermissionRequest<'_>) -> Permission {
        let caps = request.definition.capabilities();
        let name = request.definition.name();
        let (rule, class) = if let Some(rule) = self.tool_rule(name) {
            (rule, "this tool")
        } else if caps.contains(Capability::Exec) {
            (self.exec, "tools that run programs")
        } else if caps.contains(Capability::Write) {
            (self.write, "tools that write")
        } else if request.read_only {
            (self.read_only, "read-only tools")
        } else {
            (self.other, "tools that are not read-only")
        };
        match rule {
            Rule::Allow => Permission::Allow,
            Rule::Ask => Permission::Ask {
                reason: Some(format!(
                    "`{name}` needs approval: the policy asks before {class} run"
                )),
            },
            Rule::Deny => Permission::Deny {
                reason: format!(
                    "the permission policy does not allow {class} such as `{name}`; do not call it again, find another way or ask the user"
                ),
            },
        }
    }
}

/// The calls that wait, in words for an error: "the call that waits is
/// `c2` (`write_file`)", "the calls that wait are ...", or "no call waits".
/// The one wording of every refusal of a decision for a call that does not
/// wait.
pub fn waiting_words<'a>(requests: impl IntoIterator<Item = &'a ApprovalRequest>) -> String {
    let calls: Vec<String> = requests
        .into_iter()
        .map(|request| format!("`{}` (`{}`)", request.call_id, request.tool))
        .collect();
    match calls.as_slice() {
        [] => "no call waits".to_owned(),
        [one] => format!("the call that waits is {one}"),
        many => format!("the calls that wait are {}", many.join(", ")),
    }
}

/// A call waiting for a person's decision.
///
/// The approval is bound to everything shown here: `approval_id` is a hash
/// of the run, the call id, the canonical tool and the arguments' hash, and
/// an approval runs a call only when its id matches. A decision made for one
/// request can never run another call, even one that reused the call id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// What an approval of this request must carry: SHA-256 (hex) of the
    /// run, the call id, the tool and the arguments' hash.
    pub approval_id: String,
    /// The call that waits.
    pub call_id: String,
    /// The tool it calls.
    pub tool: ToolName,
    /// The exact arguments the person approves.
    pub arguments: Value,
    /// A SHA-256 of the canonical arguments; the approval is bound to it.
    pub arguments_hash: String,
    /// The run the approval is bound to.
    pub run_id: RunId,
    /// Why the policy asks.
    pub reason: Option<String>,
}

/// A person's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run exactly the call that was shown: this run, this call id, this
    /// tool, these arguments.
    Approve {
        /// The `approval_id` of the request that was shown.
        approval_id: String,
    },
    /// Do not run it; the model reads the reason.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

impl ApprovalDecision {
    /// Approves `request` as shown.
    #[must_use]
    pub fn approve(request: &ApprovalRequest) -> Self {
        ApprovalDecision::Approve {
            approval_id: request.approval_id.clone(),
        }
    }

    /// Denies with a reason the model will see.
    pub fn deny(reason: impl Into<String>) -> Self {
        ApprovalDecision::Deny {
            reason: reason.into(),
        }
    }
}

impl ApprovalRequest {
    /// A request for `call_id` of `run` calling `tool` with `arguments`:
    /// the executor makes those of its calls; run control makes those of
    /// the calls it answers itself (starting a child agent).
    #[must_use]
    pub fn new(
        run_id: RunId,
        call_id: String,
        tool: ToolName,
        arguments: Value,
        reason: Option<String>,
    ) -> Self {
        let arguments_hash = arguments_hash(&arguments);
        Self {
            approval_id: approval_id(&run_id, &call_id, &tool, &arguments_hash),
            call_id,
            tool,
            arguments,
            arguments_hash,
            run_id,
            reason,
        }
    }
}

impl ApprovalRequest {
    /// The request `call` of `run_id` makes when it waits to call `tool`
    /// (the tool its name resolves to): the arguments are the call's, read
    /// the way the executor reads them (`null` is `{}`, an object sent as
    /// a JSON string is that object), so the request derived from a call
    /// is the one the executor paused it with.
    #[must_use]
    pub fn for_call(
        run_id: RunId,
        call: &ToolUseBlock,
        tool: ToolName,
        reason: Option<String>,
    ) -> Self {
        let (arguments, _) = super::resolve::repair_input(call.input.clone());
        Self::new(run_id, call.id.clone(), tool, arguments, reason)
    }

    /// Whether the request is what its `approval_id` binds: its run, call
    /// id, tool and arguments hash to that id. A request kept outside the
    /// process (a saved run state) and edited afterwards is not: what it
    /// shows is then not what an approval of it would run.
    #[must_use]
    pub fn is_intact(&self) -> bool {
        self.arguments_hash == arguments_hash(&self.arguments)
            && self.approval_id
                == approval_id(
                    &self.run_id,
                    &self.call_id,
                    &self.tool,
                    &self.arguments_hash,
                )
    }
}

/// The id an approval of a call must carry.
fn approval_id(run_id: &RunId, call_id: &str, tool: &ToolName, arguments_hash: &str) -> String {
    let mut hasher = Sha256::new();
    // Each part is prefixed by its length, so no two different calls hash
    // the same parts into the same bytes.
    for part in [run_id.as_str(), call_id, tool.as_str(), arguments_hash] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}
