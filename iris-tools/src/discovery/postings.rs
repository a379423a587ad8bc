//! A term's postings, four bytes each: the tool id in the low 22 bits and
//! the weighted frequency, in tenths, in the high 10 (saturating at 102.3,
//! far past where BM25 stops counting). Fixed width, so a query reads them
//! as fast as a plain array, at two thirds of the six bytes a `u32` id and
//! `u16` frequency would take; postings are most of the index.

/// Bits of a posting that hold the tool id.
const TOOL_BITS: u32 = 22;
const TOOL_MASK: u32 = (1 << TOOL_BITS) - 1;
/// The most tools an index holds (ids `0..MAX_TOOLS`).
pub(super) const MAX_TOOLS: u32 = 1 << TOOL_BITS;
/// The largest frequency in tenths a posting holds.
const MAX_TENTHS: u16 = (1 << (32 - TOOL_BITS)) - 1;

/// One term's postings, in tool order.
#[derive(Debug, Clone, Default)]
pub(super) struct PostingList(Vec<u32>);

impl PostingList {
    /// Appends `tool` (below [`MAX_TOOLS`]) with its weighted frequency in
    /// tenths.
    pub(super) fn push(&mut self, tool: u32, tenths: u16) {
        let tenths = u32::from(tenths.min(MAX_TENTHS));
        self.0.push((tenths << TOOL_BITS) | (tool & TOOL_MASK));
    }

    /// How many tools have the term.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// (tool, tenths) of each posting, in tool order.
    #[inline]
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        self.0.iter().map(|&packed| {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "the high bits hold at most 10 bits"
            )]
            let tenths = (packed >> TOOL_BITS) as u16;
            (packed & TOOL_MASK, tenths)
        })
    }

    /// Gives back the room kept for appends.
    pub(super) fn shrink(&mut self) {
        self.0.shrink_to_fit();
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// What is pushed is read back, frequencies saturating.
        #[test]
        fn reads_back_what_was_pushed(
            postings in proptest::collection::vec((0..MAX_TOOLS, any::<u16>()), 0..300),
        ) {
            let mut list = PostingList::default();
            for &(tool, tenths) in &postings {
                list.push(tool, tenths);
            }
            let expected: Vec<(u32, u16)> = postings
                .iter()
                .map(|&(tool, tenths)| (tool, tenths.min(MAX_TENTHS)))
                .collect();
            prop_assert_eq!(list.len(), expected.len());
            prop_assert_eq!(list.iter().collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn a_posting_takes_four_bytes() {
        let mut list = PostingList::default();
        for tool in 0..100 {
            list.push(tool, 30);
        }
        list.shrink();
        assert_eq!(list.heap_bytes(), 4 * list.len());
        list.push(MAX_TOOLS - 1, 1_023);
        assert_eq!(list.iter().last(), Some((MAX_TOOLS - 1, 1_023)));
    }
}
