//! Seeded cuts of a text into pieces, for streamed answers: the same seed
//! cuts the same way on every run, and every cut falls on a character
//! boundary.

/// A small, seeded generator (xorshift64*): enough to vary cuts, the same
/// on every machine.
#[derive(Debug, Clone)]
pub(crate) struct Seeded(u64);

impl Seeded {
    pub(crate) fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point.
        Self(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// `text` cut into pieces of 1 to 7 characters, as `rng` says.
pub(crate) fn cut<'t>(text: &'t str, rng: &mut Seeded) -> Vec<&'t str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let chars = 1 + usize::try_from(rng.below(7)).unwrap_or(0);
        let end = rest
            .char_indices()
            .nth(chars)
            .map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_join_back_and_repeat_with_the_seed() {
        let text = "héllo, wörld — ünïcödé 🌍 text";
        let a = cut(text, &mut Seeded::new(7));
        let b = cut(text, &mut Seeded::new(7));
        assert_eq!(a, b);
        assert_eq!(a.concat(), text);
        assert!(a.len() > 3, "{a:?}");
        assert_ne!(cut(text, &mut Seeded::new(8)), a);
    }
}
