//! [`ConsumerInfo`]: what a stateful `PartitionHub` partitioner sees of
//! the consumers attached.

use super::Out;

/// The consumers attached to a [`PartitionHub`](crate::PartitionHub), as
/// its stateful partitioner sees them for one element (Pekko's
/// `PartitionHub.ConsumerInfo`): how many there are (indices `0..size()`,
/// in order of attaching among those still attached) and how many
/// elements each has queued.
///
/// # Examples
///
/// Route to the consumer with the shortest queue (the "fastest consumer"
/// router of Pekko's documentation):
///
/// ```
/// use weir_streams::ConsumerInfo;
///
/// fn fastest<T>(info: &ConsumerInfo<'_>, _: &T) -> Option<usize> {
///     (0..info.size()).min_by_key(|&i| info.queue_size(i))
/// }
/// # let _ = fastest::<u32>;
/// ```
pub struct ConsumerInfo<'a> {
    queues: &'a dyn QueueSizes,
}

impl<'a> ConsumerInfo<'a> {
    pub(super) fn new(queues: &'a dyn QueueSizes) -> Self {
        Self { queues }
    }

    /// The number of consumers attached.
    pub fn size(&self) -> usize {
        self.queues.count()
    }

    /// The elements routed to consumer `index` that it has not taken yet,
    /// as the hub last heard (it learns of what a consumer took when it
    /// hands the next batch over); 0 for an index out of range.
    pub fn queue_size(&self, index: usize) -> usize {
        self.queues.queue_size(index)
    }
}

impl std::fmt::Debug for ConsumerInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sizes: Vec<usize> = (0..self.size()).map(|i| self.queue_size(i)).collect();
        f.debug_struct("ConsumerInfo")
            .field("queue_sizes", &sizes)
            .finish()
    }
}

/// The queue sizes behind a [`ConsumerInfo`], whatever the element type.
pub(super) trait QueueSizes {
    fn count(&self) -> usize;
    fn queue_size(&self, index: usize) -> usize;
}

/// The hub's consumers' hand-overs, each with room for `buffer` elements.
pub(super) struct Queues<'a, T: Send + 'static> {
    pub(super) outs: &'a [Out<T>],
    pub(super) buffer: usize,
}

impl<T: Send + 'static> QueueSizes for Queues<'_, T> {
    fn count(&self) -> usize {
        self.outs.len()
    }

    fn queue_size(&self, index: usize) -> usize {
        self.outs
            .get(index)
            .map_or(0, |out| self.buffer.saturating_sub(out.credit()))
    }
}
