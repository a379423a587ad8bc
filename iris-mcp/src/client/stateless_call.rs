//! The rounds of a remote call whose caller has no session (revision
//! 2026-07-28): whatever the server asks goes back to the caller in the
//! call's result, and the call goes on in the caller's next call.
//!
//! A server of 2026-07-28 asks in its own result (see
//! [`upstream_input`](crate::upstream_input)). A server of the 2025
//! revisions asks with a request of its own while the call runs: the call
//! runs on a task of its own, and when the server asks, it is parked (see
//! [`parked`](super::parked)) and the request handed over.

use std::sync::Arc;

use iris_core::{ToolErrorKind, ToolResult};
use iris_runtime::ToolProgress;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, InputRequests, ServerResult};
use serde_json::Value;
use tokio::sync::mpsc;

use super::parked::{self, Asked, InFlight};
use super::remote_tool::{Caller, Next, RemoteTool, send_request};
use crate::upstream_input::{Handover, MAX_ROUNDS, Pending, Relayed};

/// What a wait for the server ends in.
enum Waited {
    Answer(Result<Result<ServerResult, rmcp::service::ServiceError>, tokio::task::JoinError>),
    Asked(Asked),
}

impl RemoteTool {
    /// The rounds of a call of a caller with no session, through
    /// `handover`: a call parked in the round before goes on with the
    /// caller's answer; a new one is sent with what the caller answered
    /// the server, if anything.
    pub(super) async fn send_for_stateless(
        &self,
        handover: &Handover,
        session: &Arc<super::connection::Session>,
        mut params: CallToolRequestParams,
        can: &ClientCapabilities,
        timeout: std::time::Duration,
    ) -> ToolResult {
        let connection = &self.connection;
        let mut going = match handover.parked() {
            Some(id) => {
                let Some(parked) = connection.parked.take(id, handover.owner()) else {
                    return self.failed(
                        ToolErrorKind::Execution,
                        format!(
                            "the call of `{}` this answers no longer waits (it waited longer than ten minutes, or the server restarted); call again",
                            self.wire_name
                        ),
                    );
                };
                // The caller's answer to the one request handed over.
                let answer = handover
                    .answers()
                    .and_then(|(responses, _)| responses.values().next().cloned())
                    .unwrap_or(Value::Null);
                let _ = parked.answer.send(answer);
                Some((parked.call, parked.asks))
            }
            None => None,
        };
        let caller = Caller {
            asker: None,
            handover: Some(handover.clone()),
            sampled: Arc::default(),
        };
        for _round in 0..MAX_ROUNDS {
            let (mut call, mut asks) = going.take().unwrap_or_else(|| {
                let (tell, asks) = mpsc::unbounded_channel();
                // What the caller may be asked: nothing when the server may
                // not ask it (`relay_input`).
                let may_ask = if self.connection.config.relay_input {
                    handover.can().clone()
                } else {
                    ClientCapabilities::default()
                };
                let asker = parked::parking(
                    &tell,
                    &may_ask,
                    self.connection.config.sampler(),
                    handover.audit(),
                )
                .counting_in(Arc::clone(&caller.sampled));
                (self.spawn_call(session, params.clone(), can, asker), asks)
            });
            let waited = tokio::time::timeout(timeout, async {
                tokio::select! {
                    answer = &mut call => Waited::Answer(answer),
                    Some(asked) = asks.recv() => Waited::Asked(asked),
                }
            })
            .await;
            let answer = match waited {
                Err(elapsed) => {
                    drop(call);
                    return self.finish(Err(elapsed), session, timeout);
                }
                Ok(Waited::Asked(asked)) => return self.park(handover, call, asked, asks),
                Ok(Waited::Answer(Err(ended))) => {
                    return self.failed(
                        ToolErrorKind::Internal,
                        format!("the call of `{}` ended abnormally: {ended}", self.wire_name),
                    );
                }
                Ok(Waited::Answer(Ok(answer))) => answer,
            };
            let asked = match answer {
                Ok(ServerResult::InputRequiredResult(asked)) => asked,
                answer => return self.finish(Ok(answer), session, timeout),
            };
            match self.answer_input(asked, &caller).await {
                Ok(Next::Again(responses, state)) => {
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                Ok(Next::HandedOver) => return self.handed_over(),
                Err(why) => {
                    return self.failed(
                        ToolErrorKind::Execution,
                        format!(
                            "MCP server `{}` {why}; `{}` did not finish",
                            self.connection.name(),
                            self.wire_name
                        ),
                    );
                }
            }
        }
        self.too_many_rounds()
    }

    /// Sends the call on a task of its own, the server's requests during it
    /// going to `asker`.
    fn spawn_call(
        &self,
        session: &Arc<super::connection::Session>,
        params: CallToolRequestParams,
        can: &ClientCapabilities,
        asker: crate::elicitation::Asker,
    ) -> InFlight {
        let connection = Arc::clone(&self.connection);
        let session = Arc::clone(session);
        let peer = session.service.peer().clone();
        let can = can.clone();
        let progress = ToolProgress::current();
        let mut out = connection.routing.asking.route(Some(asker));
        InFlight::spawn(async move {
            let answer =
                send_request(&connection, &session, &peer, params, &can, &out, progress).await;
            // The server answered (a result, or an error of its own): it has
            // nothing of the call running.
            if matches!(
                answer,
                Ok(_) | Err(rmcp::service::ServiceError::McpError(_))
            ) {
                out.answered();
            }
            answer
        })
    }

    /// Parks the call and hands the server's request to the caller, or
    /// says why the call cannot wait.
    fn park(
        &self,
        handover: &Handover,
        call: InFlight,
        asked: Asked,
        asks: mpsc::UnboundedReceiver<Asked>,
    ) -> ToolResult {
        let key = asked.key();
        let request = asked.request.clone();
        match self
            .connection
            .parked
            .park(call, asked, asks, handover.owner())
        {
            Ok(id) => {
                if let Some(audit) = handover.audit() {
                    let method = crate::upstream_input::method(&request);
                    audit(method, "handed_over", std::time::Instant::now());
                }
                handover.hand_over(Relayed {
                    requests: InputRequests::from([(key.to_owned(), request)]),
                    pending: Pending {
                        keys: vec![key.to_owned()],
                        parked: Some(id),
                        ..Pending::default()
                    },
                });
                self.handed_over()
            }
            Err(why) => self.failed(
                ToolErrorKind::Execution,
                format!(
                    "MCP server `{}` asked the caller for input, and the call cannot wait for the answer: {why}; `{}` was given up on",
                    self.connection.name(),
                    self.wire_name
                ),
            ),
        }
    }
}
