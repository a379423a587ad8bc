//! Names for temporary files that nobody can guess in advance: a name
//! planted beforehand can neither block a write nor catch its content.

use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};

/// The ending every temporary file of Iris carries; `read_file` refuses
/// names with it, and leftovers of dead processes are recognised by it.
pub const TEMP_SUFFIX: &str = ".iris-tmp";

/// `.{stem}.{pid}-{64 random bits}.iris-tmp`. The bits come from the
/// standard library's randomly keyed hasher over a counter and the clock,
/// so they differ per call and cannot be predicted from outside.
pub fn temp_name(stem: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    // Short enough that a long target name still leaves room for the rest.
    let stem = iris_core::text::prefix(stem, 64);
    format!(
        ".{stem}.{}-{:016x}{TEMP_SUFFIX}",
        std::process::id(),
        hasher.finish()
    )
}

/// The process that made temporary file `name`, if it is one of ours.
#[must_use]
pub fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_suffix(TEMP_SUFFIX)?;
    let (_, tail) = rest.rsplit_once('.')?;
    let (pid, random) = tail.split_once('-')?;
    (random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| pid.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_and_name_their_process() {
        let a = temp_name("a.txt");
        let b = temp_name("a.txt");
        assert_ne!(a, b);
        assert!(a.starts_with(".a.txt.") && a.ends_with(TEMP_SUFFIX));
        {
            assert_eq!(temp_owner(&a), Some(std::process::id()));
            assert_eq!(temp_owner("a.txt"), None);
            assert_eq!(temp_owner(".a.txt.12-0.iris-tmp"), None);
        }
    }
}
