//! The typed slot of one connection: where the one element in flight
//! between two stages waits.
//!
//! A slot holds an `Option<T>` for the connection's element type `T`,
//! which the island erases. Small elements (an `Option<T>` of at most
//! [`INLINE_WORDS`] words, word-aligned) live in the slot itself, so a
//! hop touches the connection's cache line and nothing else; larger ones
//! live in a box made once at materialization. Either way no element
//! allocates. The two functions in [`SlotKind`] know `T`: the island calls
//! them to empty the slot and to drop it.

use std::any::TypeId;
use std::fmt;
use std::mem::{MaybeUninit, align_of, size_of};

/// Words an element's `Option` may take to live inline.
pub(crate) const INLINE_WORDS: usize = 3;

/// Storage for one `Option<T>` (see the module docs). Only
/// [`SlotKind::of::<T>`] makes one, and only accesses checked against
/// its element type (`Conn::slot_mut`) read it as `Option<T>`.
pub(crate) struct Slot {
    /// The `Option<T>` when it fits, else a `*mut Option<T>` from `Box::into_raw`.
    words: MaybeUninit<[usize; INLINE_WORDS]>,
    /// Drops the `Option<T>` (and frees its box); runs once, in `Drop`.
    drop: unsafe fn(&mut Slot),
}

// SAFETY: a slot only ever holds an `Option<T>` with `T: Send` (the
// bound of `SlotKind::of`), inline or in a box it owns.
unsafe impl Send for Slot {}

/// Whether `Option<T>` lives inline in a [`Slot`].
const fn fits<T>() -> bool {
    size_of::<Option<T>>() <= size_of::<[usize; INLINE_WORDS]>()
        && align_of::<Option<T>>() <= align_of::<usize>()
}

impl Slot {
    fn new<T: Send + 'static>() -> Self {
        let mut words = MaybeUninit::<[usize; INLINE_WORDS]>::uninit();
        if fits::<T>() {
            // SAFETY: `fits` checked size and alignment.
            unsafe { words.as_mut_ptr().cast::<Option<T>>().write(None) };
        } else {
            let boxed = Box::into_raw(Box::new(None::<T>));
            // SAFETY: a pointer fits in the first word.
            unsafe { words.as_mut_ptr().cast::<*mut Option<T>>().write(boxed) };
        }
        Self {
            words,
            drop: drop_slot::<T>,
        }
    }

    /// The slot's `Option<T>`.
    ///
    /// # Safety
    ///
    /// The slot was made by `SlotKind::of::<T>()` for this very `T`.
    #[inline(always)]
    pub(crate) unsafe fn get<T>(&mut self) -> &mut Option<T> {
        let words = self.words.as_mut_ptr();
        if fits::<T>() {
            // SAFETY: made inline by `Slot::new::<T>` (the caller's promise).
            unsafe { &mut *words.cast::<Option<T>>() }
        } else {
            // SAFETY: made boxed by `Slot::new::<T>`; the box lives until drop.
            unsafe { &mut **words.cast::<*mut Option<T>>() }
        }
    }
}

/// Drop the slot's `Option<T>` and free its box.
///
/// # Safety
///
/// `slot` was made for `T` and is not used afterwards.
unsafe fn drop_slot<T>(slot: &mut Slot) {
    let words = slot.words.as_mut_ptr();
    if fits::<T>() {
        // SAFETY: the inline `Option<T>`, dropped once.
        unsafe { words.cast::<Option<T>>().drop_in_place() };
    } else {
        // SAFETY: the box made in `Slot::new`, freed once.
        drop(unsafe { Box::from_raw(*words.cast::<*mut Option<T>>()) });
    }
}

/// Empty the slot of an `Option<T>`.
///
/// # Safety
///
/// `slot` was made for `T`.
unsafe fn clear_slot<T>(slot: &mut Slot) {
    // SAFETY: the caller's promise.
    unsafe { *slot.get::<T>() = None };
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: `drop` was set for the slot's own type; this runs once.
        unsafe { (self.drop)(self) }
    }
}

/// How to make and empty the slot of one connection (the element type is
/// erased in the island; these functions know it).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct SlotKind {
    pub(crate) element: TypeId,
    pub(crate) new: fn() -> Slot,
    /// Empties a slot made by `new` (safe to call only on those).
    pub(crate) clear: unsafe fn(&mut Slot),
}

impl fmt::Debug for SlotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SlotKind")
    }
}

impl SlotKind {
    pub(crate) fn of<T: Send + 'static>() -> Self {
        Self {
            element: TypeId::of::<T>(),
            new: Slot::new::<T>,
            clear: clear_slot::<T>,
        }
    }
}
