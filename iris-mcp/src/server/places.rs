//! Who holds the server's connections. A connection is anonymous until
//! one of its requests is let in (by the gate, or read whole where there
//! is none); anonymous connections are capped per address, and when every
//! place is taken the oldest connection still waiting for its first whole
//! request gives its place to the newcomer. So a flood of half-sent
//! requests, from one address or many, cannot shut out the callers who
//! send theirs: the flood's own connections are the ones cut.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The server's connection places.
#[derive(Debug)]
pub(crate) struct Places {
    max: usize,
    per_address: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    /// Every place held, by id.
    held: HashMap<u64, Held>,
    /// Anonymous places, by address.
    anonymous: HashMap<IpAddr, usize>,
    /// Places still waiting for a first whole request, oldest first (an
    /// id may linger after it stopped waiting; it is skipped).
    waiting: VecDeque<u64>,
}

#[derive(Debug)]
struct Held {
    address: IpAddr,
    anonymous: bool,
    waiting: bool,
    evict: CancellationToken,
}

/// Why a connection got no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoPlace {
    /// Its address holds its most anonymous connections.
    Address,
    /// Every place is held by callers who sent their requests.
    Full,
}

impl Places {
    /// `max` places, at most `per_address` of them anonymous per address.
    pub(crate) fn new(max: usize, per_address: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            per_address: per_address.max(1),
            state: Mutex::new(State::default()),
        })
    }

    /// A place for a connection from `address`, taking the place of the
    /// oldest connection still waiting for its first request when every
    /// place is held.
    pub(crate) fn take(self: &Arc<Self>, address: IpAddr) -> Result<Place, NoPlace> {
        let address = holder(address);
        let mut state = self.lock();
        if state.anonymous.get(&address).copied().unwrap_or(0) >= self.per_address {
            return Err(NoPlace::Address);
        }
        if state.held.len() >= self.max {
            let oldest = loop {
                let Some(id) = state.waiting.pop_front() else {
                    return Err(NoPlace::Full);
                };
                if state.held.get(&id).is_some_and(|held| held.waiting) {
                    break id;
                }
            };
            if let Some(held) = state.release(oldest) {
                held.evict.cancel();
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        let evict = CancellationToken::new();
        state.held.insert(
            id,
            Held {
                address,
                anonymous: true,
                waiting: true,
                evict: evict.clone(),
            },
        );
        *state.anonymous.entry(address).or_insert(0) += 1;
        state.waiting.push_back(id);
        Ok(Place {
            places: Arc::clone(self),
            id,
            evict,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Who holds connections from `address`, for the per-address share: an
/// IPv4 address (mapped into IPv6 or not), or an IPv6 /64 (what one host
/// or network is given, so a host cannot take a share per address).
pub(crate) fn holder(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or_else(
            || IpAddr::V6((u128::from(v6) & !((1_u128 << 64) - 1)).into()),
            IpAddr::V4,
        ),
    }
}

impl State {
    /// Frees place `id`, if it is still held.
    fn release(&mut self, id: u64) -> Option<Held> {
        let held = self.held.remove(&id)?;
        if held.anonymous {
            self.forget_anonymous(held.address);
        }
        Some(held)
    }

    fn forget_anonymous(&mut self, address: IpAddr) {
        if let Some(count) = self.anonymous.get_mut(&address) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.anonymous.remove(&address);
            }
        }
    }
}

/// One connection's place, freed when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    places: Arc<Places>,
    id: u64,
    evict: CancellationToken,
}

impl Place {
    /// Cancelled when a newcomer took this place.
    pub(crate) fn evicted(&self) -> CancellationToken {
        self.evict.clone()
    }

    /// A whole request arrived: the connection is no longer one that
    /// only waits.
    pub(crate) fn request_read(&self) {
        let mut state = self.places.lock();
        if let Some(held) = state.held.get_mut(&self.id) {
            held.waiting = false;
        }
    }

    /// A request was let in: the connection is its caller's, no longer
    /// anonymous.
    pub(crate) fn admitted(&self) {
        let mut state = self.places.lock();
        let Some(held) = state.held.get_mut(&self.id) else {
            return;
        };
        held.waiting = false;
        if held.anonymous {
            held.anonymous = false;
            let address = held.address;
            state.forget_anonymous(address);
        }
    }

    /// Whether the connection was ever let in.
    pub(crate) fn is_anonymous(&self) -> bool {
        self.places
            .lock()
            .held
            .get(&self.id)
            .is_none_or(|held| held.anonymous)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places.lock().release(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn an_address_holds_its_share_and_a_full_server_cuts_the_oldest_waiting() {
        let places = Places::new(4, 2);
        let a1 = places.take(address(2)).expect("a place");
        let a2 = places.take(address(2)).expect("a place");
        assert_eq!(places.take(address(2)).err(), Some(NoPlace::Address));
        let b1 = places.take(address(3)).expect("a place");
        b1.admitted();
        let b2 = places.take(address(3)).expect("a place");
        b2.request_read();
        // Full: the newcomer takes the oldest waiting place (a1).
        let c1 = places
            .take(address(4))
            .expect("the oldest waiting gives way");
        assert!(a1.evicted().is_cancelled());
        assert!(!a2.evicted().is_cancelled());
        drop(a1);
        // a2 next; then only callers who sent requests are left.
        let c2 = places.take(address(4)).expect("a place");
        assert!(a2.evicted().is_cancelled());
        c2.request_read();
        drop(a2);
        c1.admitted();
        assert_eq!(places.take(address(5)).err(), Some(NoPlace::Full));
        assert!(!b1.is_anonymous());
        drop(b2);
        assert!(places.take(address(5)).is_ok());
    }

    #[test]
    fn an_ipv6_network_holds_one_share_and_a_mapped_ipv4_address_is_itself() {
        let places = Places::new(16, 2);
        let host = |last: u16| IpAddr::from([0x2001, 0xdb8, 0, 1, 0, 0, 0, last]);
        let _a = places.take(host(1)).expect("a place");
        let _b = places.take(host(2)).expect("a place");
        assert_eq!(
            places.take(host(3)).err(),
            Some(NoPlace::Address),
            "one /64, one share"
        );
        let _c = places.take(address(9)).expect("a place");
        let mapped = IpAddr::from(std::net::Ipv4Addr::new(127, 0, 0, 9).to_ipv6_mapped());
        let _d = places.take(mapped).expect("a place");
        assert_eq!(places.take(address(9)).err(), Some(NoPlace::Address));
    }
}
