//! The gateway under floods from callers with no valid token, against the
//! real `OpenID` provider: junk opaque tokens cost its issuer a bounded
//! number of introspections (as the provider counts them),
//! and anonymous refusals never push a decision out of the audit log;
//! every request is audited with the address it came from.

use std::path::Path;
use std::time::Duration;

use iris::mcp::gateway::AuditConfig;
use serde_json::Value;

use super::gateway::{
    AUDIENCE, auth, gateway, gateway_holding, initialize, list_in, open_session, post,
};
use super::oidc::Provider;

/// The audit log's lines, rotated files included.
fn audit_lines(path: &Path) -> Vec<Value> {
    let mut lines = Vec::new();
    for file in [path.to_owned(), path.with_extension("jsonl.1")] {
        if let Ok(text) = std::fs::read_to_string(&file) {
            lines.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
    }
    lines
}

/// Finding: junk opaque tokens from an anonymous caller became one
/// introspection call each. A token the issuer called inactive is refused
/// again without asking, and an address whose tokens keep failing may no
/// longer make the gateway ask (429, `Retry-After`), while a JWT from the
/// same address (another caller behind the same proxy) is still checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_opaque_tokens_cost_the_issuer_a_bounded_number_of_questions() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let (url, stop) = gateway(auth(&provider.issuer(), &keys.path().join("audit.jsonl"))).await;

    for _ in 0..10 {
        let (status, _, body) = post(&url, Some("Bearer junk-the-same")).await;
        assert_eq!(status, 401);
        assert!(body.contains("not active at its issuer"), "{body}");
    }
    assert_eq!(
        provider.introspections().await,
        1,
        "the same inactive token is asked about once"
    );

    let mut limited = 0;
    for i in 0..200 {
        let (status, _, _) = post(&url, Some(&format!("Bearer junk-{i}"))).await;
        assert!(status == 401 || status == 429, "{status}");
        limited += usize::from(status == 429);
    }
    let questions = provider.introspections().await;
    assert!(
        questions <= 30,
        "200 junk tokens made {questions} introspections"
    );
    assert!(limited >= 170, "{limited} of 200 were limited");

    // Another caller behind the same address, with a JWT, is let in.
    let token = provider.token("alice", "tools:read", AUDIENCE).await;
    let (status, _, body) = post(&url, Some(&format!("Bearer {token}"))).await;
    assert_eq!(status, 200, "{body}");
    stop.cancel();
}

/// Finding: an address barred for its junk tokens barred every caller
/// behind it (a proxy or a NAT shared with the flooder), opaque tokens
/// included. An opaque token its issuer called active before is still
/// asked about from a barred address, so a caller let in before the flood
/// stays in (and is still refused once revoked); only a token never seen
/// active waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_let_in_before_is_not_shut_out_by_a_neighbours_junk() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    // Asked on every request (nothing believed from memory), so each
    // request below really meets the bar.
    let mut asking = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    asking.issuers[0].introspection = asking.issuers[0]
        .introspection
        .take()
        .map(|i| i.remember_for(0));
    let (url, stop) = gateway(asking).await;

    // Two opaque tokens of the same client: one used before the flood,
    // one first shown after it.
    let seen = format!(
        "Bearer {}",
        provider.token("dora", "tools:read", AUDIENCE).await
    );
    let unseen = format!(
        "Bearer {}",
        provider.token("dora", "tools:read", AUDIENCE).await
    );
    let (status, _, body) = post(&url, Some(&seen)).await;
    assert_eq!(status, 200, "{body}");

    let mut limited = 0;
    for i in 0..200 {
        let (status, _, _) = post(&url, Some(&format!("Bearer junk-{i}"))).await;
        limited += usize::from(status == 429);
    }
    assert!(
        limited >= 150,
        "the address is barred: {limited} of 200 limited"
    );

    let before = provider.introspections().await;
    let (status, _, body) = post(&url, Some(&seen)).await;
    assert_eq!(status, 200, "a caller let in before stays in: {body}");
    assert_eq!(
        provider.introspections().await,
        before + 1,
        "and was asked about"
    );

    // Barred again (a bar lasts until the address's rate allows another
    // failure), and then a token never seen active waits.
    for i in 0..100 {
        let (status, _, _) = post(&url, Some(&format!("Bearer junk-again-{i}"))).await;
        if status == 429 {
            break;
        }
    }
    let (status, _, body) = post(&url, Some(&unseen)).await;
    assert_eq!(status, 429, "a token never seen active waits: {body}");
    assert!(body.contains("tokens already let in still are"), "{body}");

    let revoked = reqwest::Client::new()
        .post(format!("{}/token/revocation", provider.issuer()))
        .basic_auth("dora", Some("dora-secret"))
        .form(&[("token", seen.trim_start_matches("Bearer "))])
        .send()
        .await
        .unwrap();
    assert!(revoked.status().is_success(), "{}", revoked.status());
    for _ in 0..2 {
        let (status, _, body) = post(&url, Some(&seen)).await;
        assert_eq!(status, 401, "revoked, it is refused: {body}");
        assert!(body.contains("not active"), "{body}");
    }
    stop.cancel();
}

/// Finding: an anonymous 401 flood rotated earlier decisions out of a
/// small audit log within seconds, and no line said where a request came
/// from. Anonymous refusals are written one by one only up to a few a
/// minute and summarised after; `tools/list` and a `Host` the server does
/// not serve are audited with the principal and its address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_floods_cannot_push_decisions_out_of_the_audit_log() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let log = keys.path().join("audit.jsonl");
    let mut rules = auth(&provider.issuer(), &log);
    rules.audit = Some(AuditConfig {
        max_bytes: 16 * 1024,
        keep: 1,
        ..AuditConfig::new(&log)
    });
    let (url, stop) = gateway(rules).await;
    let token = provider.token("alice", "tools:read", AUDIENCE).await;
    let (status, session) = open_session(&url, &token).await;
    assert_eq!(status, 200);
    assert_eq!(list_in(&url, &token, &session.unwrap()).await, 200);
    let foreign_host = reqwest::Client::new()
        .post(&url)
        .header("host", "evil.test")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign_host.status().as_u16(), 403);

    for i in 0..1_000 {
        let authorization = if i % 2 == 0 {
            None
        } else {
            Some("Bearer a.b.c")
        };
        let (status, _, _) = post(&url, authorization).await;
        assert_eq!(status, 401);
    }

    let lines = audit_lines(&log);
    let alice = format!("{}#alice", provider.issuer());
    assert!(
        lines.iter().any(|l| l["method"] == "tools/list"
            && l["principal"] == alice.as_str()
            && l["address"] == "127.0.0.1"),
        "the listing is still audited, with its address: {lines:?}"
    );
    assert!(
        lines.iter().any(|l| l["rule_decision"] == "host_or_origin"
            && l["outcome"] == "403"
            && l["principal"] == alice.as_str()),
        "{lines:?}"
    );
    let one_by_one = lines
        .iter()
        .filter(|l| l["principal"].is_null() && l["outcome"] == "401")
        .count();
    assert!(
        one_by_one <= 20,
        "{one_by_one} anonymous refusals written one by one"
    );

    // The rest are summarised, at the latest when the server stops.
    stop.cancel();
    let mut summary = None;
    for _ in 0..50 {
        summary = audit_lines(&log)
            .into_iter()
            .find(|l| l["outcome"] == "summary");
        if summary.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let summary = summary.expect("a summary of the refusals not written one by one");
    assert_eq!(summary["count"].as_u64(), Some(1_000 - one_by_one as u64));
    assert_eq!(summary["addresses"][0]["address"], "127.0.0.1");
}

/// Finding: 260 principals holding 4 sessions each filled the server, and
/// the next caller got HTTP 500. On a crowded server no principal holds
/// more than its share (the capacity over the principals holding sessions
/// and one more who may come), and a full one says 503 with `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowded_server_keeps_each_principal_to_its_share() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let (url, stop) = gateway_holding(
        auth(&provider.issuer(), &keys.path().join("audit.jsonl")),
        6,
    )
    .await;
    let mut held = Vec::new();
    for (client, share) in [("alice", 3), ("bob", 2), ("carol", 1)] {
        let token = provider.token(client, "tools:read", AUDIENCE).await;
        let mut opened = 0;
        loop {
            let (status, session) = open_session(&url, &token).await;
            if status != 200 {
                // Past its share (429), or the server is full (503).
                let full = held.len() == 6;
                assert_eq!(status, if full { 503 } else { 429 }, "{client}");
                break;
            }
            held.push(session);
            opened += 1;
            assert!(opened <= share, "{client} took more than its share");
        }
        assert_eq!(opened, share, "{client} got its share");
    }
    // Every place is held: the next caller is told to come back.
    let dora = provider.token("dora", "tools:read", AUDIENCE).await;
    let response = initialize(&url, &dora).await;
    assert_eq!(response.status().as_u16(), 503);
    assert!(response.headers().contains_key("retry-after"));
    stop.cancel();
}

/// Finding: a principal's own refusals (429 past its rate) were written
/// one line each, so a holder of any valid token could rotate another
/// principal's decisions out of the audit log. Refusals are summarised
/// past the first few a minute, whoever provokes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principals_refusals_cannot_push_decisions_out_of_the_audit_log() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let log = keys.path().join("audit.jsonl");
    let mut rules = auth(&provider.issuer(), &log);
    rules.limits.requests_per_minute = 60;
    rules.audit = Some(AuditConfig {
        max_bytes: 16 * 1024,
        keep: 1,
        ..AuditConfig::new(&log)
    });
    let (url, stop) = gateway(rules).await;
    let bob = provider.token("bob", "tools:read", AUDIENCE).await;
    let (status, session) = open_session(&url, &bob).await;
    assert_eq!(status, 200);
    assert_eq!(list_in(&url, &bob, &session.unwrap()).await, 200);

    let alice = provider.token("alice", "tools:read", AUDIENCE).await;
    let mut limited = 0;
    for _ in 0..600 {
        let (status, _, _) = post(&url, Some(&format!("Bearer {alice}"))).await;
        limited += usize::from(status == 429);
    }
    assert!(limited >= 500, "{limited}");
    let lines = audit_lines(&log);
    let bob_key = format!("{}#bob", provider.issuer());
    assert!(
        lines
            .iter()
            .any(|l| l["method"] == "tools/list" && l["principal"] == bob_key.as_str()),
        "bob's listing is still audited"
    );
    let one_by_one = lines.iter().filter(|l| l["outcome"] == "429").count();
    assert!(one_by_one <= 20, "{one_by_one} refusals written one by one");
    stop.cancel();
}

/// A burst of `initialize` requests opens no more sessions than the
/// principal's limit: a session is counted against its principal the
/// moment the MCP service makes it, under one lock (before, the limit was
/// checked before any of the burst was bound, and a session whose opener
/// hung up was counted against no one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_initializes_opens_no_more_than_the_limit() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    rules.limits.sessions = 4;
    let (url, stop) = gateway(rules).await;
    let token = provider.token("alice", "tools:read", AUDIENCE).await;
    let burst: Vec<_> = (0..24)
        .map(|_| {
            let (url, token) = (url.clone(), token.clone());
            tokio::spawn(async move { open_session(&url, &token).await.0 })
        })
        .collect();
    let mut opened = 0;
    for answer in burst {
        let status = answer.await.unwrap();
        assert!(status == 200 || status >= 400, "{status}");
        opened += usize::from(status == 200);
    }
    assert_eq!(opened, 4, "a limit of 4 sessions");
    stop.cancel();
}
