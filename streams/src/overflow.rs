//! [`OverflowStrategy`]: what a full buffer does with one more element,
//! and [`upfront_capacity`]: how much a bounded buffer reserves before
//! anything arrives.

use crate::tuning::UPFRONT_CAPACITY_CAP;

/// What to reserve up front for a buffer that may hold up to `limit`
/// elements: `limit`, but at most [`UPFRONT_CAPACITY_CAP`].
pub(crate) fn upfront_capacity(limit: usize) -> usize {
    limit.min(UPFRONT_CAPACITY_CAP)
}

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

/// Put `element` into `buf` (which holds at most `capacity`) under
/// `strategy`, handing every element it drops to `dropped` (the arriving
/// one included, under `DropNew`, `Fail` and `Backpressure`).
///
/// # Errors
///
/// `ErrorKind::BufferOverflow` when `buf` is full and `strategy` is `Fail`
/// (or `Backpressure`: a caller that can wait does not offer to a full buffer).
pub(crate) fn offer<T>(
    buf: &mut std::collections::VecDeque<T>,
    capacity: usize,
    strategy: OverflowStrategy,
    element: T,
    mut dropped: impl FnMut(T),
) -> Result<(), crate::error::StreamError> {
    if buf.len() < capacity {
        buf.push_back(element);
        return Ok(());
    }
    match strategy {
        OverflowStrategy::DropHead => buf.pop_front().into_iter().for_each(&mut dropped),
        OverflowStrategy::DropTail => buf.pop_back().into_iter().for_each(&mut dropped),
        OverflowStrategy::DropBuffer => buf.drain(..).for_each(&mut dropped),
        OverflowStrategy::DropNew => {
            dropped(element);
            return Ok(());
        }
        OverflowStrategy::Fail | OverflowStrategy::Backpressure => {
            dropped(element);
            return Err(crate::error::StreamError::from_kind(
                crate::error::ErrorKind::BufferOverflow { capacity },
            ));
        }
    }
    // With a capacity of 0 there was nothing to make room from.
    if capacity == 0 {
        dropped(element);
    } else {
        buf.push_back(element);
    }
    Ok(())
}
