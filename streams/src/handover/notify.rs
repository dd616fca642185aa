//! [`Notify`]: how one side of a hand-over wakes the other.

use std::task::Waker;

/// How one side of a hand-over is told that the other did something it
/// waits for.
///
/// # Examples
///
/// ```
/// use weir_streams::handover::Notify;
///
/// #[derive(Clone)]
/// struct Print;
/// impl Notify for Print {
///     fn notify(&self) {
///         println!("go on");
///     }
/// }
/// Print.notify();
/// ```
pub trait Notify: Clone + Send + Sync {
    /// Tell the side to look again. May be called when there is nothing
    /// new (a side must tolerate spurious notifications).
    fn notify(&self);

    /// Whether `self` and `other` notify the same side (so registering
    /// `other` again can keep `self`). `false` unless known.
    fn same(&self, other: &Self) -> bool {
        let _ = other;
        false
    }
}

impl Notify for Waker {
    fn notify(&self) {
        self.wake_by_ref();
    }

    fn same(&self, other: &Self) -> bool {
        self.will_wake(other)
    }
}

impl Notify for std::thread::Thread {
    fn notify(&self) {
        self.unpark();
    }

    fn same(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

#[cfg(not(loom))]
impl Notify for crate::stage::AsyncCallback<()> {
    fn notify(&self) {
        self.invoke(());
    }
}
