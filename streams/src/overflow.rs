//! [`OverflowStrategy`]: what a full buffer does with one more element.

/// What a bounded buffer does when an element arrives and it is full.
/// Shared by `buffer` and the actor-backed sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverflowStrategy {
    /// Drop the oldest buffered element to make room.
    DropHead,
    /// Drop the youngest buffered element to make room.
    DropTail,
    /// Drop everything buffered, then take the new element.
    DropBuffer,
    /// Drop the arriving element.
    DropNew,
    /// Fail the stream with `ErrorKind::BufferOverflow`.
    Fail,
    /// Stop asking upstream until there is room (only where upstream can wait).
    Backpressure,
}

/// Put `element` into `buf` (capacity `capacity`) under `strategy`.
/// Returns how many elements were dropped, or the overflow error.
pub(crate) fn offer<T>(
    buf: &mut std::collections::VecDeque<T>,
    capacity: usize,
    strategy: OverflowStrategy,
    element: T,
) -> Result<usize, crate::StreamError> {
    if buf.len() < capacity {
        buf.push_back(element);
        return Ok(0);
    }
    let dropped = match strategy {
        OverflowStrategy::DropBuffer => buf.len(),
        _ => 1,
    };
    match strategy {
        OverflowStrategy::DropHead => {
            buf.pop_front();
            buf.push_back(element);
        }
        OverflowStrategy::DropTail => {
            buf.pop_back();
            buf.push_back(element);
        }
        OverflowStrategy::DropBuffer => {
            buf.clear();
            buf.push_back(element);
        }
        OverflowStrategy::DropNew => {}
        OverflowStrategy::Fail | OverflowStrategy::Backpressure => {
            return Err(crate::StreamError::from_kind(
                crate::ErrorKind::BufferOverflow { capacity },
            ));
        }
    }
    Ok(dropped)
}
