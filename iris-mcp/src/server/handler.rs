//! The MCP requests a connection answers (`rmcp`'s `ServerHandler`):
//! initialisation, `tools/list`, `tools/call`, resources, logging level,
//! subscriptions, and the protocol revisions it speaks.

use std::sync::Arc;

use iris_core::{Capability, ToolDefinition};
use rmcp::model::{
    self as mcp, CacheScope, CallToolRequestParams, CallToolResponse, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use super::call::principal_of;
use iris_runtime::question::ASK_QUESTION;
use iris_skills::ACTIVATE_SKILL;

use super::{McpConnection, announce_changes, formats, listen, questions, read_artifact};

impl McpConnection {
    /// The protocol revisions served: the current one, stateless, and the
    /// two before it, with sessions.
    pub const SUPPORTED_PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ];
}

/// How long a client may keep a `tools/list` answer: the catalog changes
/// when an MCP server behind the gateway changes its tools, which a
/// stateless client is not told of.
pub(super) const LIST_FRESH_FOR_MS: u64 = 30_000;

/// Whether `context`'s request is of a stateless revision (2026-07-28 on):
/// no session, so the person is asked through input requests.
pub(super) fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// The MCP listing of one Iris tool.
pub(super) fn listing(definition: &ToolDefinition) -> mcp::Tool {
    let mut schema = match definition.input_schema() {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    formats::standard(&mut schema);
    let caps = definition.capabilities();
    let mut annotations = ToolAnnotations::new()
        .read_only(caps.is_read_only())
        .open_world(caps.contains(Capability::Network));
    if caps.is_read_only() {
        annotations = annotations.destructive(false).idempotent(true);
    }
    let mut tool = mcp::Tool::new(
        definition.name().to_string(),
        definition.description().to_owned(),
        schema,
    )
    .with_annotations(annotations);
    if let Some(output) = definition.output_schema() {
        let mut output = crate::content::object_output_schema(output);
        formats::standard(&mut output);
        tool = tool.with_raw_output_schema(Arc::new(output));
    }
    tool
}

impl ServerHandler for McpConnection {
    fn get_info(&self) -> ServerConfig {
        // Resources: the artifacts that previews name, read by handle.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources();
        #[allow(
            deprecated,
            reason = "logging is part of the 2025 revisions this server still serves (deprecated from 2026-07-28 on)"
        )]
        let capabilities = capabilities.enable_logging().build();
        let mut config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.name.clone(),
            self.options.version.clone(),
        ));
        if let Some(instructions) = &self.options.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &mcp::SubscriptionFilter,
    ) -> Option<mcp::SubscriptionFilter> {
        Some(listen::offered())
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), ErrorData> {
        listen::listen(self.executor.shared_registry(), &self.ended, subscription).await
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        announce_changes(
            self.executor.shared_registry(),
            context.peer,
            self.ended.clone(),
        );
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(
                    format!("`{cursor}` is not a cursor this server gave"),
                    None,
                )
            })?,
        };
        let started = std::time::Instant::now();
        let page_size = self.options.page_size.max(1);
        let registry = self.executor.registry();
        let principal = principal_of(&context);
        let mut page: Vec<mcp::Tool> = self
            .visible(&registry, principal.as_ref())
            .skip(start)
            .take(page_size + 1)
            .map(listing)
            .collect();
        let more = page.len() > page_size;
        page.truncate(page_size);
        // Run control is listed to whom the rules grant it, as any tool.
        let principal = principal.as_ref();
        if !more
            && self.offers_questions(&registry, &context)
            && self.control_listed(principal, ASK_QUESTION)
        {
            page.push(questions::listing());
        }
        if !more
            && self.control_listed(principal, ACTIVATE_SKILL)
            && let Some(tool) = self.skills_listing(&registry)
        {
            page.push(tool);
        }
        self.audit_request(principal, &context, "tools/list", None, "ok", started);
        let mut result = ListToolsResult::with_all_items(page);
        if more {
            result.next_cursor = Some((start + page_size).to_string());
        }
        // The same for every request with the same authorization (and, when
        // questions are served, the same capabilities): shared caches may
        // keep it unless it was filtered for the caller.
        result.ttl_ms = Some(LIST_FRESH_FOR_MS);
        result.cache_scope = Some(if self.shared.gate.is_some() || self.options.questions {
            CacheScope::Private
        } else {
            CacheScope::Public
        });
        Ok(result)
    }

    #[allow(
        deprecated,
        reason = "logging is part of the 2025 revisions this server still serves (deprecated from 2026-07-28 on)"
    )]
    async fn set_level(
        &self,
        request: mcp::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // What the session's calls say while they run is sent as log
        // messages at `info` from now on, when the level lets it through.
        self.log_level.set(request.level);
        Ok(())
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(Self::SUPPORTED_PROTOCOL_VERSIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<mcp::ListResourcesResult, ErrorData> {
        // The artifacts are named by the results that made them, never
        // listed; the skills' files are, to whom `activate_skill` is
        // granted.
        let granted = self
            .control_granted(principal_of(&context).as_ref(), ACTIVATE_SKILL)
            .is_ok();
        Ok(mcp::ListResourcesResult::with_all_items(if granted {
            self.skill_resources()
        } else {
            Vec::new()
        }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        use iris_runtime::artifacts::scope;
        let started = std::time::Instant::now();
        if let Some(read) = self.granted_skill_read(&request.uri, &context) {
            return read.map(|contents| {
                ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents]))
            });
        }
        let ledger = self.executor.ledger();
        scope::scope_run(ledger, &self.run_id);
        let principal = principal_of(&context);
        let uri = iris_runtime::__wings::shorten(&request.uri);
        if !scope::may_open(ledger, &self.run_id, &request.uri) {
            self.audit_request(
                principal.as_ref(),
                &context,
                "resources/read",
                Some(&uri),
                "not_found",
                started,
            );
            return Err(ErrorData::resource_not_found(
                format!(
                    "`{}` was not named by a result of this session; a session reads only the artifacts its own calls produced",
                    iris_runtime::__wings::shorten(&request.uri)
                ),
                // The URI as asked (SEP-2164): the caller's own words back.
                Some(json!({"uri": request.uri})),
            ));
        }
        let store = self.executor.artifact_store(&self.context());
        let contents = read_artifact(&store, &request.uri);
        let outcome = if contents.is_ok() { "ok" } else { "not_found" };
        self.audit_request(
            principal.as_ref(),
            &context,
            "resources/read",
            Some(&uri),
            outcome,
            started,
        );
        let contents = contents?;
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![contents],
        )))
    }

    fn get_tool(&self, name: &str) -> Option<mcp::Tool> {
        // Looked up by the MCP service (on a server made for the request)
        // to check a call's headers and structured output: only what the
        // caller may see, so a hidden tool reads as one that does not exist
        // here too.
        let registry = self.executor.registry();
        self.visible(&registry, self.principal())
            .find(|definition| definition.answers_to(name))
            .map(listing)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }
}

impl McpConnection {
    /// Audits a request that is not a call (a listing, a resource read),
    /// when the server has a gate.
    fn audit_request(
        &self,
        principal: Option<&super::auth::Principal>,
        context: &RequestContext<RoleServer>,
        method: &str,
        resource: Option<&str>,
        outcome: &str,
        started: std::time::Instant,
    ) {
        let Some(gate) = &self.shared.gate else {
            return;
        };
        gate.log(&super::auth::AuditEntry {
            method: Some(method),
            tool: resource,
            rule_decision: if principal.is_some() {
                "allowed"
            } else {
                "open"
            },
            outcome,
            duration_ms: super::auth::millis(started.elapsed()),
            ..super::auth::AuditEntry::by(principal, super::call::address_of(context))
        });
    }
}
