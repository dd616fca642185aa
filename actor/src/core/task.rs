//! A future run as a task of a dispatcher, and where its output goes: the
//! task machinery under piping (`crate::features::pipe`), spawned tasks and
//! the coordinated shutdown's detached tasks. Its states are
//! [`TaskState`]'s (see `crate::features::pipe` for the protocol).

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use crate::core::actor_ref::ActorRef;
use crate::core::dispatcher::{Dispatcher, Runnable};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering, Weak};
use crate::task_state::TaskState;

/// A future run on the pool, and where its output goes.
pub(crate) struct PipeTask<F: Future> {
    state: TaskState,
    /// Set by [`TaskHandle::abort`]: the next run drops the future unpolled.
    aborted: AtomicBool,
    /// The future, pinned where it lies (see [`PipeTask::poll`]); `None`
    /// once it completed, panicked or was aborted. Only the `RUNNING`
    /// thread locks it, so the lock is never contended.
    pub(crate) future: Mutex<Option<F>>,
    /// Where the future was first polled: it must never move (debug builds
    /// check).
    #[cfg(debug_assertions)]
    pinned_at: crate::sync::AtomicUsize,
    /// Where the output goes; `None` for a detached task (its future
    /// delivers its own result).
    target: Option<ActorRef<F::Output>>,
    dispatcher: Dispatcher,
}

impl<F> PipeTask<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// A task run by `dispatcher` (the system's shared pool), about to be
    /// queued for its first run (`future` may be put in before that).
    pub(crate) fn new(
        future: Option<F>,
        target: Option<ActorRef<F::Output>>,
        dispatcher: Dispatcher,
    ) -> Arc<Self> {
        Arc::new(PipeTask {
            state: TaskState::scheduled(),
            aborted: AtomicBool::new(false),
            future: Mutex::new(future),
            #[cfg(debug_assertions)]
            pinned_at: crate::sync::AtomicUsize::new(0),
            target,
            dispatcher,
        })
    }

    /// The future is gone for good: a pinned dispatcher's thread may end.
    fn finish(&self) {
        self.state.done();
        self.dispatcher.retire();
    }

    pub(crate) fn schedule(self: Arc<Self>) {
        let dispatcher = self.dispatcher.clone();
        dispatcher.submit(self);
    }

    /// Poll the future in its slot.
    fn poll(&self, future: &mut F, cx: &mut TaskContext<'_>) -> Poll<F::Output> {
        #[cfg(debug_assertions)]
        {
            let at = std::ptr::from_mut(future) as usize;
            let first =
                self.pinned_at
                    .compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed);
            debug_assert!(first.is_ok() || first == Err(at), "the future moved");
        }
        // SAFETY: the future is pinned where it lies. It is moved into the
        // slot before the task is first queued, and from then on it stays
        // in this task's `Arc` allocation (which never moves) until it is
        // dropped in place (`*slot = None`, or with the task): nothing
        // takes it out of the slot or swaps it.
        let future = unsafe { Pin::new_unchecked(future) };
        future.poll(cx)
    }
}

/// Drop the future where it lies (it is pinned: never moved out). A panic
/// in its destructor (a value it owns reports from its `drop`, as a stream
/// sink's completion callback does when an abort drops it) is caught here,
/// as one in its poll is, and never unwinds into the worker that runs it.
fn drop_in_place_guarded<F>(slot: &mut Option<F>) {
    // On unwinding, the assignment still leaves `None` in the slot.
    let _ = catch_unwind(AssertUnwindSafe(|| *slot = None));
}

impl<F> Runnable for PipeTask<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn run(self: Arc<Self>) {
        self.state.start();
        let mut slot = self.future.lock();
        // After `start`: an abort's wake-up came before it (and its flag
        // is seen here) or after it (and queues another run).
        if self.aborted.load(Ordering::Acquire) {
            drop_in_place_guarded(&mut slot);
            self.finish();
            return;
        }
        let Some(future) = slot.as_mut() else {
            self.finish();
            return;
        };
        let waker = Waker::from(self.clone());
        let mut cx = TaskContext::from_waker(&waker);
        match catch_unwind(AssertUnwindSafe(|| self.poll(future, &mut cx))) {
            Ok(Poll::Ready(msg)) => {
                drop_in_place_guarded(&mut slot);
                drop(slot);
                self.finish();
                if let Some(target) = &self.target {
                    target.tell(msg);
                }
            }
            Ok(Poll::Pending) => {
                drop(slot);
                // Woken while polling: queue again, behind what waits, so a
                // future that wakes itself (a long job in slices) yields its
                // worker instead of keeping it.
                if self.state.pending() {
                    let dispatcher = self.dispatcher.clone();
                    dispatcher.submit_yielded(self);
                }
            }
            Err(_) => {
                // A panicking future is dropped: nothing to deliver.
                drop_in_place_guarded(&mut slot);
                self.finish();
            }
        }
    }
}

impl<F> Wake for PipeTask<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        if self.state.wake() {
            self.clone().schedule();
        }
    }
}

/// A task started by [`ActorSystem::spawn_task`](crate::ActorSystem::spawn_task): it can abort the task.
/// Dropping it leaves the task running.
#[derive(Clone)]
pub struct TaskHandle {
    pub(crate) task: Weak<dyn Abortable>,
}

impl TaskHandle {
    /// Stop the task: its future is dropped, on a worker, without being
    /// polled again (a poll running now ends first). Nothing happens if
    /// the task has already finished.
    pub fn abort(&self) {
        if let Some(task) = self.task.upgrade() {
            task.abort();
        }
    }
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("finished", &(self.task.strong_count() == 0))
            .finish()
    }
}

/// A task [`TaskHandle`] can abort.
pub(crate) trait Abortable: Send + Sync {
    fn abort(self: Arc<Self>);
}

impl<F> Abortable for PipeTask<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn abort(self: Arc<Self>) {
        self.aborted.store(true, Ordering::Release);
        // Queues the task if it waits; one being polled runs again.
        self.wake_by_ref();
    }
}

impl<F: Future<Output: Send + 'static>> fmt::Debug for PipeTask<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipeTask")
            .field("state", &self.state.get())
            .field("target", &self.target.as_ref().map(ActorRef::path))
            .finish()
    }
}

/// Single-threaded (the calling-thread dispatcher), so memcheck can run
/// them (`.ci/memcheck`): the futures are polled in place through the
/// `unsafe` pin in [`PipeTask::poll`].
#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::Arc;

    use super::{Abortable, PipeTask};
    use crate::core::dispatcher::Dispatcher;
    use crate::system::promise::Promise;

    /// An `async` block holding a borrow of its own local across an
    /// await (so it is `!Unpin`): it is polled in place, woken, and polled
    /// again where it lies.
    #[test]
    fn a_self_borrowing_future_is_polled_in_place_across_a_wake_up() {
        let (gate, out) = (Arc::new(Promise::<u32>::new()), Arc::new(Promise::new()));
        let (waited, result) = (Arc::clone(&gate), Arc::clone(&out));
        let future = async move {
            let local = [1u32, 2, 3];
            let borrowed = &local;
            let n = poll_fn(|cx| waited.poll_take(cx)).await;
            let _ = result.complete(borrowed.iter().sum::<u32>() + n);
        };
        let task = PipeTask::new(Some(future), None, Dispatcher::CallingThread);
        task.clone().schedule(); // runs now, up to the await
        assert!(!out.is_completed());
        gate.complete(4).unwrap(); // wakes it: it runs again now
        assert_eq!(out.wait_take(), 10);
        assert!(task.future.lock().is_none(), "dropped in place when done");
    }

    /// An abort drops a waiting future in place, unpolled.
    #[test]
    fn an_aborted_future_is_dropped_in_place() {
        let gate = Arc::new(Promise::<u32>::new());
        let waited = Arc::clone(&gate);
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&polls);
        let future = async move {
            let local = vec![1u32; 4]; // on the heap: a leak would show
            let borrowed = &local;
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let n = poll_fn(|cx| waited.poll_take(cx)).await;
            counted.fetch_add(
                borrowed.len() + n as usize,
                std::sync::atomic::Ordering::SeqCst,
            );
        };
        let task = PipeTask::new(Some(future), None, Dispatcher::CallingThread);
        task.clone().schedule();
        Arc::clone(&task).abort();
        assert!(task.future.lock().is_none());
        assert!(gate.complete(1).is_ok());
        assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
