//! Single-threaded tests of the connection's typed slot, the interpreter
//! core's one `unsafe` (`Conn::slot_mut`). They start no actor system and
//! no thread, so they run under valgrind's memcheck (see the notes in
//! `.ci/run`):
//!
//! ```text
//! cargo test -p weir-streams --lib --no-run
//! valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
//!     --errors-for-leak-kinds=definite <lib test binary> stage::core::slot_tests --test-threads=1
//! ```

use super::*;
use crate::sync::{Arc, AtomicUsize, Ordering};

fn conn<T: Send + 'static>() -> Conn {
    Conn::new(0, 0, 1, 0, SlotKind::of::<T>())
}

/// Counts its drops, so a test sees every element dropped exactly once.
struct Counted(Arc<AtomicUsize>, #[allow(dead_code)] String);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_slot_holds_elements_of_its_own_type() {
    let mut c = conn::<u32>();
    *c.slot_mut::<u32>().unwrap() = Some(7);
    assert_eq!(c.slot_mut::<u32>().unwrap().take(), Some(7));
    assert_eq!(c.slot_mut::<u32>().unwrap().take(), None);

    let mut c = conn::<String>();
    *c.slot_mut::<String>().unwrap() = Some("a heap string".repeat(10));
    let s = c.slot_mut::<String>().unwrap().take().unwrap();
    assert_eq!(s.len(), 130);

    // Large, zero-sized and nested heap-owning elements.
    let mut c = conn::<Box<[u64; 512]>>();
    *c.slot_mut::<Box<[u64; 512]>>().unwrap() = Some(Box::new([3; 512]));
    assert_eq!(
        c.slot_mut::<Box<[u64; 512]>>().unwrap().as_ref().unwrap()[511],
        3
    );
    let mut c = conn::<()>();
    *c.slot_mut::<()>().unwrap() = Some(());
    assert_eq!(c.slot_mut::<()>().unwrap().take(), Some(()));
    let mut c = conn::<Vec<String>>();
    *c.slot_mut::<Vec<String>>().unwrap() = Some(vec!["x".into(), "y".into()]);
    assert_eq!(
        c.slot_mut::<Vec<String>>().unwrap().take().unwrap().len(),
        2
    );
}

#[test]
fn a_slot_refuses_another_type_and_keeps_its_element() {
    let mut c = conn::<u32>();
    *c.slot_mut::<u32>().unwrap() = Some(1);
    let error = c.slot_mut::<u64>().unwrap_err();
    assert!(matches!(error.kind(), crate::error::ErrorKind::Protocol(_)));
    assert!(c.slot_mut::<String>().is_err());
    assert!(c.slot_mut::<Option<u32>>().is_err());
    assert_eq!(c.slot_mut::<u32>().unwrap().take(), Some(1));
}

#[test]
fn clearing_overwriting_and_dropping_a_slot_drop_each_element_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let element = || Counted(Arc::clone(&drops), "owned".to_owned());
    let mut c = conn::<Counted>();
    *c.slot_mut::<Counted>().unwrap() = Some(element());
    c.slot_clear();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "clear drops the element");
    c.slot_clear();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "clearing an empty slot drops nothing"
    );
    *c.slot_mut::<Counted>().unwrap() = Some(element());
    *c.slot_mut::<Counted>().unwrap() = Some(element());
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "overwriting drops the old element"
    );
    let taken = c.slot_mut::<Counted>().unwrap().take();
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    drop(taken);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    *c.slot_mut::<Counted>().unwrap() = Some(element());
    drop(c);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        4,
        "a dropped connection drops its element"
    );
}

#[test]
fn many_connections_of_mixed_types_keep_their_elements_apart() {
    let mut conns: Vec<Conn> = (0..64)
        .map(|i| {
            if i % 2 == 0 {
                conn::<String>()
            } else {
                conn::<u8>()
            }
        })
        .collect();
    for round in 0..100u32 {
        for (i, c) in conns.iter_mut().enumerate() {
            if i % 2 == 0 {
                *c.slot_mut::<String>().unwrap() = Some(format!("{round}-{i}"));
            } else {
                *c.slot_mut::<u8>().unwrap() = Some((round as u8).wrapping_add(i as u8));
            }
        }
        for (i, c) in conns.iter_mut().enumerate() {
            if i % 2 == 0 {
                let s = c.slot_mut::<String>().unwrap().take();
                assert_eq!(s, Some(format!("{round}-{i}")));
            } else if round % 3 == 0 {
                c.slot_clear();
            } else {
                let b = c.slot_mut::<u8>().unwrap().take();
                assert_eq!(b, Some((round as u8).wrapping_add(i as u8)));
            }
        }
    }
}

#[test]
fn inline_and_boxed_slots_both_hold_their_elements() {
    // Inline: an `Option` of at most three words, word-aligned.
    let mut c = conn::<(u64, u64)>();
    *c.slot_mut::<(u64, u64)>().unwrap() = Some((1, 2));
    assert_eq!(c.slot_mut::<(u64, u64)>().unwrap().take(), Some((1, 2)));
    // Boxed: too large, or aligned past a word.
    let mut c = conn::<[u64; 4]>();
    *c.slot_mut::<[u64; 4]>().unwrap() = Some([1, 2, 3, 4]);
    assert_eq!(c.slot_mut::<[u64; 4]>().unwrap().take(), Some([1, 2, 3, 4]));
    let mut c = conn::<u128>();
    *c.slot_mut::<u128>().unwrap() = Some(u128::MAX - 1);
    assert_eq!(c.slot_mut::<u128>().unwrap().take(), Some(u128::MAX - 1));
    // A heap-owning element left in either kind is freed with the slot.
    let mut c = conn::<String>();
    *c.slot_mut::<String>().unwrap() = Some("inline".repeat(3));
    drop(c);
    let mut c = conn::<(String, String)>();
    *c.slot_mut::<(String, String)>().unwrap() = Some(("boxed".into(), "too".into()));
    drop(c);
}
