//! Callers with no valid token, kept from costing what they cannot pay
//! for: an address whose tokens keep failing may no longer make the
//! server ask an issuer about an opaque token (a JWT is still checked
//! here, so callers sharing a proxy's address are not shut out). Refusals
//! at the door (theirs, and a principal's past its limits) are audited one
//! by one only up to a few a minute, the rest counted and summarised once
//! a minute, so that a flood cannot rotate the decisions out of the audit
//! log.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde::Serialize;

use super::audit::AuditLog;

/// Failed token checks an address may make a minute before it may no
/// longer make the server ask an issuer.
const FAILURES_PER_MINUTE: u32 = 60;

/// Failed checks in a burst.
const FAILURE_BURST: u32 = 20;

/// How often the refusals beyond the first few are summarised.
const WINDOW: Duration = Duration::from_secs(60);

/// Refusals audited one by one in each window.
const IN_FULL_PER_WINDOW: u32 = 20;

/// Addresses named in a summary (the most refused first).
const NAMED_PER_SUMMARY: usize = 10;

/// Addresses counted apart in a window; the rest are counted together.
const MAX_COUNTED_ADDRESSES: usize = 1_024;

/// Addresses tracked for failed checks before idle ones are dropped.
const MAX_TRACKED_ADDRESSES: usize = 16_384;

/// The refusals of callers with no valid token, and their failed checks.
pub(crate) struct Strangers {
    failures: DefaultKeyedRateLimiter<IpAddr>,
    /// Addresses over their rate of failures, until when.
    barred: Mutex<HashMap<IpAddr, Instant>>,
    /// When the maps of addresses were last swept: at most once a second,
    /// so that a flood that keeps them full does not pay a sweep per
    /// request.
    swept: Mutex<Option<Instant>>,
    tally: Mutex<Tally>,
}

struct Tally {
    since: Instant,
    in_full: u32,
    counted: u64,
    by_address: HashMap<IpAddr, u64>,
}

/// The audit line that stands for the refusals of a window not written
/// one by one.
#[derive(Serialize)]
struct Summary<'a> {
    principal: Option<&'a str>,
    rule_decision: &'a str,
    outcome: &'a str,
    /// Refusals counted, beyond those written one by one.
    count: u64,
    /// Over how many seconds.
    seconds: u64,
    /// The most refused addresses, with their counts.
    addresses: Vec<Counted>,
}

#[derive(Serialize)]
struct Counted {
    address: IpAddr,
    count: u64,
}

impl Strangers {
    pub(crate) fn new() -> Self {
        let per_minute = NonZeroU32::new(FAILURES_PER_MINUTE).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(FAILURE_BURST).unwrap_or(NonZeroU32::MIN);
        Self {
            failures: RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst)),
            barred: Mutex::new(HashMap::new()),
            swept: Mutex::new(None),
            tally: Mutex::new(Tally {
                since: Instant::now(),
                in_full: 0,
                counted: 0,
                by_address: HashMap::new(),
            }),
        }
    }

    /// Whether a caller from `address` may make the server ask an issuer
    /// about a token: not while its failed checks are over their rate. The
    /// seconds until it may again, when not.
    pub(crate) fn may_ask_issuer(&self, address: Option<IpAddr>) -> Result<(), u64> {
        let Some(address) = address else {
            return Ok(());
        };
        let holder = crate::server::places::holder(address);
        let mut barred = self.barred.lock().unwrap_or_else(PoisonError::into_inner);
        match barred.get(&holder) {
            Some(until) if Instant::now() < *until => Err(until
                .saturating_duration_since(Instant::now())
                .as_secs()
                .max(1)),
            Some(_) => {
                barred.remove(&holder);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Counts a failed token check from `address`; past the rate, the
    /// address may not make the server ask an issuer until its rate allows
    /// another failure.
    pub(crate) fn failed(&self, address: Option<IpAddr>) {
        let Some(address) = address else {
            return;
        };
        if self.failures.len() > MAX_TRACKED_ADDRESSES && self.sweep_due() {
            self.failures.retain_recent();
        }
        let holder = crate::server::places::holder(address);
        if let Err(not_until) = self.failures.check_key(&holder) {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            let mut barred = self.barred.lock().unwrap_or_else(PoisonError::into_inner);
            if barred.len() >= MAX_TRACKED_ADDRESSES && self.sweep_due() {
                let now = Instant::now();
                barred.retain(|_, until| now < *until);
            }
            if barred.len() < MAX_TRACKED_ADDRESSES {
                barred.insert(holder, Instant::now() + wait);
            }
        }
    }

    /// Whether a sweep of the address maps may run now (and, if so, marks
    /// it done).
    fn sweep_due(&self) -> bool {
        let mut swept = self.swept.lock().unwrap_or_else(PoisonError::into_inner);
        if swept.is_some_and(|at| at.elapsed() < Duration::from_secs(1)) {
            return false;
        }
        *swept = Some(Instant::now());
        true
    }

    /// Whether this refusal from `address` is audited one by one; if not,
    /// it is counted for the window's summary.
    pub(crate) fn audit_in_full(&self, address: Option<IpAddr>, audit: &AuditLog) -> bool {
        let mut tally = self.lock();
        Self::close_window(&mut tally, audit, false);
        if tally.in_full < IN_FULL_PER_WINDOW {
            tally.in_full += 1;
            return true;
        }
        tally.counted += 1;
        let counted = tally.by_address.len();
        let key = address.map(crate::server::places::holder);
        match key {
            Some(key) if counted < MAX_COUNTED_ADDRESSES || tally.by_address.contains_key(&key) => {
                *tally.by_address.entry(key).or_insert(0) += 1;
            }
            _ => {}
        }
        false
    }

    /// Writes the summary of a window that has passed (or, `now`, of the
    /// window so far, as the server stops).
    pub(crate) fn summarise(&self, audit: &AuditLog, now: bool) {
        Self::close_window(&mut self.lock(), audit, now);
    }

    fn close_window(tally: &mut Tally, audit: &AuditLog, now: bool) {
        if !now && tally.since.elapsed() < WINDOW {
            return;
        }
        if tally.counted > 0 {
            let mut addresses: Vec<Counted> = tally
                .by_address
                .drain()
                .map(|(address, count)| Counted { address, count })
                .collect();
            addresses.sort_by_key(|counted| std::cmp::Reverse(counted.count));
            addresses.truncate(NAMED_PER_SUMMARY);
            audit.write(&Summary {
                principal: None,
                rule_decision: "unauthenticated",
                outcome: "summary",
                count: tally.counted,
                seconds: tally.since.elapsed().as_secs(),
                addresses,
            });
        }
        tally.since = Instant::now();
        tally.in_full = 0;
        tally.counted = 0;
        tally.by_address.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
