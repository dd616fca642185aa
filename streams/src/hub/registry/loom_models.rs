//! Loom model of hub registration against the hub closing (module docs
//! of `hub::registry`). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib registry`.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::Registry;
use crate::handover::Notify;

#[derive(Clone, Default)]
struct Count(Arc<AtomicUsize>);

impl Notify for Count {
    fn notify(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Two registrants race the hub, which takes once and then closes: every
/// entry ends up in exactly one place, and each accepted one woke the hub.
#[test]
fn register_against_close() {
    loom::model(|| {
        let wakes = Count::default();
        let registry = Arc::new(Registry::new(wakes.clone()));
        let registrants: Vec<_> = (0..2)
            .map(|i| {
                let registry = Arc::clone(&registry);
                thread::spawn(move || registry.register(i).err().map(|(entry, _)| entry))
            })
            .collect();
        let mut taken = Vec::new();
        registry.take(&mut taken);
        let returned = registry.close(Ok(()));
        let rejected: Vec<usize> = registrants
            .into_iter()
            .filter_map(|r| r.join().unwrap())
            .collect();
        let mut all: Vec<usize> = taken
            .iter()
            .chain(&returned)
            .chain(&rejected)
            .copied()
            .collect();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1], "each entry is owned exactly once");
        assert_eq!(wakes.0.load(Ordering::SeqCst), 2 - rejected.len());
        // After the close nothing is left behind.
        assert!(registry.close(Ok(())).is_empty());
    });
}
