//! Files opened with `O_NONBLOCK` so that opening a FIFO cannot wait for a
//! writer, made ordinary again once they are known to be regular files.

/// Reads of a regular file never block anyway; clearing the flag keeps the
/// descriptor ordinary for whoever holds it next.
#[cfg(unix)]
pub fn clear_nonblocking(file: &std::fs::File) {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    if let Ok(bits) = fcntl(file, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_truncate(bits) - OFlag::O_NONBLOCK;
        let _ = fcntl(file, FcntlArg::F_SETFL(flags));
    }
}
