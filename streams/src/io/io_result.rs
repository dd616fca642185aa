//! [`IoResult`]: what an IO stage's completion reports.

/// How many bytes an IO source read or an IO sink wrote, reported by its
/// [`Completion`](crate::Completion) when the stream ended well. A failed
/// open, read or write fails the completion with an
/// [`IoError`](super::IoError) instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoResult {
    /// The byte count.
    pub count: u64,
}
