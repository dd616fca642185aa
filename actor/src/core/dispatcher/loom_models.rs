//! Loom models of the pool's idle protocol (module docs of `idle`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-actor --release --lib dispatcher`.
//! Each model names the property it proves. The "pool" here is the global
//! queue and the sleepers with the worker loop of `pool::work` around them;
//! a lost wake-up shows as a worker parked for ever, which loom reports as a
//! deadlock.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Condvar, Mutex};
use loom::thread;

use super::global::GlobalQueue;
use super::idle::{Arming, Sleepers};

struct Pool {
    global: GlobalQueue<usize>,
    sleepers: Sleepers,
    shutdown: AtomicBool,
    ran: AtomicUsize,
}

impl Pool {
    fn new(workers: usize) -> Arc<Self> {
        Arc::new(Self {
            global: GlobalQueue::default(),
            sleepers: Sleepers::new(workers),
            shutdown: AtomicBool::new(false),
            ran: AtomicUsize::new(0),
        })
    }

    fn submit(&self, task: usize) {
        self.global.push(task);
        self.sleepers.notify_one();
    }

    /// `pool::work`: run what is queued, sleep when there is nothing, stop
    /// at shutdown.
    fn work(&self) {
        loop {
            if self.global.take(&self.sleepers).is_some() {
                // The one task of the model: once it has run, stop the pool
                // (as `terminate` would), without a thread spinning on it.
                self.ran.fetch_add(1, Ordering::SeqCst);
                self.shutdown();
                continue;
            }
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            self.sleepers
                .idle(|| !self.global.is_empty() || self.shutdown.load(Ordering::SeqCst));
        }
    }

    /// `pool::shutdown`.
    fn shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.sleepers.notify_all();
    }
}

/// No lost wake-up: a task pushed while the worker goes to sleep (at any
/// point of its search, registration, last check or park) is run.
#[test]
fn a_task_pushed_while_a_worker_goes_to_sleep_is_run() {
    loom::model(|| {
        let pool = Pool::new(1);
        let worker = {
            let pool = pool.clone();
            thread::spawn(move || {
                // Runs until the task is taken: only a wake-up can get it
                // there once it sleeps.
                while pool.ran.load(Ordering::SeqCst) == 0 {
                    if pool.global.pop().is_some() {
                        pool.ran.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                    pool.sleepers.idle(|| !pool.global.is_empty());
                }
            })
        };
        pool.submit(7);
        worker.join().unwrap();
        assert_eq!(pool.ran.load(Ordering::SeqCst), 1);
    });
}

/// With two workers, a submitter that skips the wake-up because one is
/// searching still gets its task run (the searcher checks once more before
/// it sleeps), and shutdown then wakes every sleeper.
#[test]
fn a_skipped_wake_up_is_covered_by_the_searcher_and_shutdown_wakes_all() {
    loom::model(|| {
        let pool = Pool::new(2);
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let pool = pool.clone();
                thread::spawn(move || pool.work())
            })
            .collect();
        pool.submit(1);
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(pool.ran.load(Ordering::SeqCst), 1);
    });
}

/// The watchdog never stands down while a worker is awake: a worker woken
/// while the watchdog makes its last look (it saw every worker asleep)
/// queues local work and arms; exactly one watchdog runs afterwards.
#[test]
fn the_watchdog_keeps_running_for_a_worker_that_wakes_as_it_stands_down() {
    loom::model(|| {
        let pool = Pool::new(1);
        let arming = Arc::new(Arming::default());
        // The watchdog was armed by earlier work and runs.
        assert!(arming.try_arm());
        let running = Arc::new(AtomicUsize::new(1));
        let worker = {
            let (pool, arming, running) = (pool.clone(), arming.clone(), running.clone());
            thread::spawn(move || {
                // Sleeps until the task below; it then queues work on its
                // own deque, which arms the watchdog (`Pool::submit`).
                while pool.global.pop().is_none() {
                    pool.sleepers.idle(|| !pool.global.is_empty());
                }
                if arming.try_arm() {
                    running.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let watchdog = {
            let (pool, arming, running) = (pool.clone(), arming.clone(), running.clone());
            thread::spawn(move || {
                // One look of `Pool::watch`.
                if pool.sleepers.sleeping() < 1 {
                    return; // keeps running
                }
                running.fetch_sub(1, Ordering::SeqCst);
                if arming.stand_down(&pool.sleepers, 1) && arming.try_arm() {
                    running.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        pool.submit(1);
        worker.join().unwrap();
        watchdog.join().unwrap();
        assert_eq!(
            running.load(Ordering::SeqCst),
            1,
            "the awake worker is watched, once"
        );
    });
}

/// A searcher covers one skipped wake-up, not two: with one worker
/// searching and one asleep, two submissions both skip their wake-ups. The
/// worker that takes the first task from the global queue wakes a sleeper
/// for the rest (`GlobalQueue::take`), so the second runs even while the
/// first blocks until it has (a handler waiting on an `ask`). Without that,
/// the sleeper sleeps on and loom reports the deadlock.
#[test]
fn a_task_queued_behind_a_blocking_one_is_run_by_a_sleeper() {
    loom::model(|| {
        let pool = Pool::new(2);
        let second_ran = Arc::new((Mutex::new(false), Condvar::new()));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (pool, second_ran) = (pool.clone(), second_ran.clone());
                thread::spawn(move || {
                    loop {
                        if let Some(task) = pool.global.take(&pool.sleepers) {
                            let (ran, changed) = &*second_ran;
                            if task == 0 {
                                // Blocks until task 1 has run.
                                let mut ran = ran.lock().unwrap();
                                while !*ran {
                                    ran = changed.wait(ran).unwrap();
                                }
                            } else {
                                *ran.lock().unwrap() = true;
                                changed.notify_all();
                            }
                            if pool.ran.fetch_add(1, Ordering::SeqCst) + 1 == 2 {
                                pool.shutdown();
                            }
                            continue;
                        }
                        if pool.shutdown.load(Ordering::SeqCst) {
                            return;
                        }
                        pool.sleepers.idle(|| {
                            !pool.global.is_empty() || pool.shutdown.load(Ordering::SeqCst)
                        });
                    }
                })
            })
            .collect();
        pool.submit(0);
        pool.submit(1);
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(pool.ran.load(Ordering::SeqCst), 2);
    });
}
