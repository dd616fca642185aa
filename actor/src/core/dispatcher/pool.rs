//! The shared work-stealing pool.
//!
//! One worker thread per core by default, each with a FIFO deque; a global
//! queue takes submissions from threads outside the pool and actors that
//! yielded. A worker takes from its own deque, then the global queue, then
//! steals from its siblings.
//!
//! The global queue is [`GlobalQueue`]; idle workers search, sleep and wake
//! through [`Sleepers`], whose module (`idle`) documents the protocol that
//! loses no wake-up and the fences that keep the watchdog armed.
//!
//! # Locality, and the watchdog that keeps it safe
//!
//! Two actors in conversation should stay on one core: a hand-over between
//! cores per message costs more than the message. So a worker that queues
//! the first task on its own empty deque wakes nobody (it runs that task
//! next), and idle workers steal from a sibling only when it has two or more
//! tasks queued. That alone would leave a task stranded behind a handler that
//! blocks (an actor waiting on an `ask`, say). A watchdog on the timer thread
//! therefore looks every [`WATCHDOG_PERIOD`] while work is queued: a worker
//! that has tasks queued and has not started a new one since the last look is
//! marked *stuck*, its last task becomes stealable, and a sleeper is woken.
//! The watchdog disarms itself once every worker sleeps, so an idle system
//! still burns no CPU, and a busy one arms it once (one allocation); its
//! [`Arming`] guarantees it runs again as soon as a worker is awake.

use std::cell::OnceCell;

use crossbeam_deque::{Steal, Stealer, Worker};

use super::Task;
use super::global::GlobalQueue;
use super::idle::{Arming, Sleepers};
use crate::core::scheduler::{Cancellable, Scheduler};
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, OnceLock, Ordering, Weak};
use crate::threads::Threads;

/// A sibling's deque is stolen from only when it holds at least this many
/// tasks: its owner runs the last one itself. Without this, two actors in
/// conversation were split across cores by idle workers stealing the one
/// runnable task, and paid a cross-core hand-over per message (measured:
/// one PingPong pair at 16 M msgs/s on two threads against 50 M on one).
const STEAL_THRESHOLD: usize = 2;

/// How often the watchdog looks for workers stuck with queued work.
const WATCHDOG_PERIOD: std::time::Duration = std::time::Duration::from_millis(2);

/// Every this many tasks a worker looks at the global queue before its own
/// deque (the same prime tokio uses).
const GLOBAL_QUEUE_INTERVAL: u32 = 61;

/// Distinguishes pools (a system may have several) in the thread-local check.
static NEXT_POOL_ID: AtomicUsize = AtomicUsize::new(1);

pub(crate) struct Pool {
    /// This pool, for the watchdog to hold weakly.
    me: Weak<Pool>,
    id: usize,
    /// How long one actor may run before it yields, whatever its throughput.
    pub(crate) throughput_deadline: Option<std::time::Duration>,
    global: GlobalQueue<Task>,
    stealers: Box<[Stealer<Task>]>,
    sleepers: Sleepers,
    /// Per worker: how many tasks it has started (only the owner writes).
    progress: Box<[AtomicU64]>,
    /// Per worker: the watchdog saw queued work and no progress; even its
    /// last queued task may be stolen.
    stuck: Box<[AtomicBool]>,
    /// Per worker: its progress at the watchdog's last look.
    last_seen: Box<[AtomicU64]>,
    watchdog: Arming,
    /// Workers blocked in a wait that needs other work of the system done
    /// (an `ask`'s `wait`); one worker must always stay free.
    blocked: AtomicUsize,
    /// The timer the watchdog runs on (set once the system's timer exists).
    timer: OnceLock<Scheduler>,
    shutdown: AtomicBool,
    /// Workers that have not returned yet. Once it is 0 after `shutdown`,
    /// a task queued on the global queue would wait for ever: it is
    /// dropped instead (`drop_stranded`), so what it holds ends (a
    /// stream's island reports `AbruptTermination`).
    live: AtomicUsize,
}

struct Local {
    pool_id: usize,
    /// This worker's number in the pool.
    index: usize,
    worker: Worker<Task>,
}

thread_local! {
    static LOCAL: OnceCell<Local> = const { OnceCell::new() };
}

impl Pool {
    /// Start `threads` workers named `<name>-<i>`.
    pub(crate) fn start(
        threads: usize,
        name: &str,
        throughput_deadline: Option<std::time::Duration>,
        registry: &Arc<Threads>,
    ) -> std::io::Result<Arc<Self>> {
        let workers: Vec<Worker<Task>> = (0..threads).map(|_| Worker::new_fifo()).collect();
        let pool = Arc::new_cyclic(|me| Self {
            me: me.clone(),
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            throughput_deadline,
            global: GlobalQueue::default(),
            stealers: workers.iter().map(Worker::stealer).collect(),
            sleepers: Sleepers::new(threads),
            progress: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            stuck: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            last_seen: (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect(),
            watchdog: Arming::default(),
            blocked: AtomicUsize::new(0),
            timer: OnceLock::new(),
            shutdown: AtomicBool::new(false),
            live: AtomicUsize::new(0),
        });
        for (index, worker) in workers.into_iter().enumerate() {
            let me = pool.clone();
            pool.live.fetch_add(1, Ordering::SeqCst);
            if let Err(e) =
                registry.spawn(format!("{name}-{index}"), move || me.work(index, worker))
            {
                pool.live.fetch_sub(1, Ordering::SeqCst);
                pool.shutdown();
                return Err(e);
            }
        }
        Ok(pool)
    }

    /// Queue a task: on the caller's own deque when it is one of this pool's
    /// workers, on the global queue otherwise.
    ///
    /// A worker that queues the first task on its own empty deque wakes
    /// nobody: it runs that task itself as soon as its current one returns,
    /// which keeps two actors that talk to each other on one core (as
    /// tokio does for its LIFO slot). Only a second queued task, or one from
    /// outside, wakes a sleeping worker to share the load.
    #[inline]
    pub(crate) fn submit(&self, task: Task) {
        match self.push_local(task) {
            // Kept local without a wake-up: make sure someone looks in case
            // the current handler blocks.
            Ok(true) => self.arm_watchdog(),
            Ok(false) => self.notify_one(),
            Err(task) => {
                self.global.push(task);
                self.notify_one();
                self.after_global_push();
            }
        }
    }

    /// A task was queued on the global queue: if every worker has already
    /// returned, nobody will take it. The worker that returns last drains
    /// the queue after it counted itself out, and a push checks the count
    /// after it queued: whichever comes second under the queue's lock sees
    /// the other, so no task stays behind.
    #[inline]
    fn after_global_push(&self) {
        if self.shutdown.load(Ordering::SeqCst) && self.live.load(Ordering::SeqCst) == 0 {
            self.drop_stranded();
        }
    }

    /// Drop what waits on the global queue of a pool with no workers left
    /// (each task is dropped outside the queue's lock: its destructor may
    /// queue more, which is dropped in turn).
    fn drop_stranded(&self) {
        while let Some(task) = self.global.pop() {
            drop(task);
        }
    }

    /// Queue a task that yielded: behind everything already waiting in the
    /// global queue, for fairness; but when nothing waits there, at the back
    /// of this worker's own deque, so a busy actor keeps its core (it runs
    /// after what is there).
    pub(crate) fn submit_yielded(&self, task: Task) {
        let task = if self.global.is_empty() {
            match self.push_local(task) {
                Ok(_) => return,
                Err(task) => task,
            }
        } else {
            task
        };
        self.global.push(task);
        self.notify_one();
        self.after_global_push();
    }

    /// Push onto the calling worker's own deque; `Ok(true)` if it was empty
    /// before. Gives the task back when the caller is not one of this pool's
    /// workers.
    #[inline]
    fn push_local(&self, task: Task) -> Result<bool, Task> {
        let mut task = Some(task);
        let mut was_empty = false;
        LOCAL.with(|local| {
            if let Some(local) = local.get().filter(|l| l.pool_id == self.id) {
                was_empty = local.worker.is_empty();
                local.worker.push(task.take().expect("task not yet queued"));
            }
        });
        match task {
            None => Ok(was_empty),
            Some(task) => Err(task),
        }
    }

    /// Whether the calling thread is one of this pool's workers.
    pub(crate) fn is_own_worker(&self) -> bool {
        LOCAL.with(|local| local.get().is_some_and(|l| l.pool_id == self.id))
    }

    /// The calling worker wants to block until other work is done: allowed
    /// while at least one other worker of this pool is not blocked so (it
    /// steals what the blocked one has queued: see the watchdog). `None`
    /// when this would be the last free worker.
    ///
    /// The caller blocks at once, so it does not wait for the watchdog to
    /// find it: it marks itself stuck (its queued tasks, typically the
    /// question it just sent, become stealable) and wakes a sleeper.
    pub(crate) fn enter_blocking(&self) -> Option<Blocking<'_>> {
        let blocked = self.blocked.fetch_add(1, Ordering::AcqRel) + 1;
        if blocked >= self.stealers.len() {
            self.blocked.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        if let Some(index) = LOCAL.with(|local| {
            local
                .get()
                .filter(|l| l.pool_id == self.id)
                .map(|l| l.index)
        }) {
            self.stuck[index].store(true, Ordering::Release);
            self.sleepers.notify_one();
        }
        Some(Blocking(self))
    }

    /// Give the pool its timer; the watchdog runs on it.
    pub(crate) fn set_timer(&self, timer: Scheduler) {
        let _ = self.timer.set(timer);
    }

    /// Start the watchdog unless it runs. One periodic timer entry (one
    /// allocation) per arming; it stays armed until every worker sleeps, so a
    /// busy pool arms it once.
    fn arm_watchdog(&self) {
        if !self.watchdog.try_arm() {
            return;
        }
        let Some(timer) = self.timer.get() else {
            self.watchdog.abort();
            return;
        };
        let pool = self.me.clone();
        let watch = Box::new(move || pool.upgrade().is_some_and(|pool| pool.watch()));
        if timer
            .run_repeatedly(
                WATCHDOG_PERIOD,
                WATCHDOG_PERIOD,
                false,
                &Cancellable::new(),
                watch,
            )
            .map_or(true, |scheduled| !scheduled)
        {
            self.watchdog.abort(); // shut down
        }
    }

    /// One look (see the module docs): mark workers stuck with queued work
    /// and wake a sleeper for them. Returns whether to keep watching: until
    /// every worker sleeps.
    fn watch(&self) -> bool {
        if self.shutdown.load(Ordering::Acquire) {
            self.watchdog.abort();
            return false;
        }
        for (i, seen) in self.last_seen.iter().enumerate() {
            let progress = self.progress[i].load(Ordering::Relaxed);
            if !self.stealers[i].is_empty() && progress == seen.load(Ordering::Relaxed) {
                self.stuck[i].store(true, Ordering::Release);
                self.sleepers.notify_one();
            }
            seen.store(progress, Ordering::Relaxed);
        }
        let workers = self.stealers.len();
        if self.sleepers.sleeping() < workers {
            return true;
        }
        // A worker that woke just now may have seen the watchdog armed and
        // not armed it: `stand_down` looks once more (see `idle`).
        if self.watchdog.stand_down(&self.sleepers, workers) {
            self.arm_watchdog();
        }
        false
    }

    fn notify_one(&self) {
        self.sleepers.notify_one();
    }

    /// Stop the workers once they run out of work.
    pub(crate) fn shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.sleepers.notify_all();
    }

    fn work(&self, index: usize, worker: Worker<Task>) {
        LOCAL.with(|local| {
            let _ = local.set(Local {
                pool_id: self.id,
                index,
                worker,
            });
        });
        let mut tick: u32 = 0;
        loop {
            tick = tick.wrapping_add(1);
            if let Some(task) = self.find_task(index, tick.is_multiple_of(GLOBAL_QUEUE_INTERVAL)) {
                // Progress: only this worker writes its counter.
                let progress = &self.progress[index];
                progress.store(
                    progress.load(Ordering::Relaxed).wrapping_add(1),
                    Ordering::Relaxed,
                );
                if self.stuck[index].load(Ordering::Relaxed) {
                    self.stuck[index].store(false, Ordering::Relaxed);
                }
                task.run();
                continue;
            }
            if self.shutdown.load(Ordering::SeqCst) {
                if self.live.fetch_sub(1, Ordering::SeqCst) == 1 {
                    self.drop_stranded();
                }
                return;
            }
            self.idle();
        }
    }

    /// The next task: own deque, global queue, siblings. With `global_first`
    /// the global queue goes first, so a worker whose deque never empties
    /// (two actors playing ping-pong) still serves it.
    fn find_task(&self, index: usize, global_first: bool) -> Option<Task> {
        LOCAL.with(|local| {
            let worker = &local.get().expect("worker thread has its deque").worker;
            if global_first && let Some(task) = self.global.take(&self.sleepers) {
                return Some(task);
            }
            if let Some(task) = worker.pop().or_else(|| self.global.take(&self.sleepers)) {
                return Some(task);
            }
            let n = self.stealers.len();
            (1..n).map(|k| (index + k) % n).find_map(|victim| {
                loop {
                    // Leave a sibling its last queued task: it is busy now and
                    // runs that task next, on the core that has its data warm.
                    if !self.may_steal_from(victim) {
                        break None;
                    }
                    match self.stealers[victim].steal() {
                        Steal::Success(task) => break Some(task),
                        Steal::Empty => break None,
                        Steal::Retry => {}
                    }
                }
            })
        })
    }

    /// Work this worker may take (must agree with `find_task`, or an idle
    /// worker would spin on work it is not allowed to steal).
    fn has_work(&self) -> bool {
        !self.global.is_empty() || (0..self.stealers.len()).any(|i| self.may_steal_from(i))
    }

    /// Two or more queued tasks, or a stuck owner (see the module docs).
    fn may_steal_from(&self, victim: usize) -> bool {
        let queued = self.stealers[victim].len();
        queued >= STEAL_THRESHOLD || (queued > 0 && self.stuck[victim].load(Ordering::Acquire))
    }

    fn idle(&self) {
        self.sleepers
            .idle(|| self.has_work() || self.shutdown.load(Ordering::SeqCst));
    }
}

/// A worker blocked in a wait (from [`Pool::enter_blocking`]); dropping it
/// frees the worker again.
pub(crate) struct Blocking<'a>(&'a Pool);

impl Drop for Blocking<'_> {
    fn drop(&mut self) {
        self.0.blocked.fetch_sub(1, Ordering::AcqRel);
    }
}
