//! The one thread that waits for the crossbeam channels of every bridge.
//!
//! Crossbeam channels have no wakers, so something must block on them for
//! an island that must not. One waiter thread serves every bridge in the
//! process: it blocks in one `Select` over its command channel and the
//! channel ends of the bridges that are waiting (armed), and when one is
//! ready it disarms it and wakes its stage through the stage's async
//! callback. No polling, no timeout.
//!
//! # Protocol
//!
//! - A bridge [`Watched::start`]s in its stage's `pre_start`: it joins the
//!   running waiter (starting one if none runs) and registers its channel
//!   end and wake callback under a key.
//! - When its channel is not ready the stage arms its key; the waiter
//!   selects over it and, once ready, disarms it and invokes the callback
//!   once. The stage then tries the channel again and re-arms if needed.
//!   Commands from one stage arrive in order, and a channel that became
//!   ready before its arm was seen is ready when selected, so no wake-up
//!   is lost.
//! - When the stage stops, dropping its [`Watched`] removes its entry (the
//!   waiter drops its clone of the channel end, so the other side sees the
//!   disconnection) and its share of the waiter.
//! - The waiter lives while any bridge is registered: the last `Watched`
//!   dropped closes the command channel and joins the thread. A system's
//!   `terminate` stops every island, so once it has completed no waiter
//!   started for its bridges is left.

use std::collections::HashMap;
use std::io;

use crossbeam_channel::{Receiver, Select, Sender, TryRecvError};
use weir_streams::stage::AsyncCallback;

use crate::sync::{Arc, AtomicU64, Mutex, OnceLock, Ordering, Weak, thread};

/// A channel end the waiter can wait on without operating on it.
pub(super) trait Watch: Send {
    /// Add "this end is ready" to `select`; the operation's index.
    fn add<'a>(&'a self, select: &mut Select<'a>) -> usize;
}

impl<T: Send> Watch for Receiver<T> {
    fn add<'a>(&'a self, select: &mut Select<'a>) -> usize {
        select.recv(self)
    }
}

impl<T: Send> Watch for Sender<T> {
    fn add<'a>(&'a self, select: &mut Select<'a>) -> usize {
        select.send(self)
    }
}

enum Command {
    Add(u64, Box<dyn Watch>, AsyncCallback<()>),
    Arm(u64),
    Remove(u64),
}

/// A running waiter thread. Dropping the last handle closes the command
/// channel and joins the thread.
struct Waiter {
    commands: Option<Sender<Command>>,
    thread: Option<thread::JoinHandle<()>>,
    next_key: AtomicU64,
}

/// The waiter every bridge shares, while one runs.
fn shared() -> io::Result<Arc<Waiter>> {
    static SHARED: OnceLock<Mutex<Weak<Waiter>>> = OnceLock::new();
    let mut current = SHARED.get_or_init(|| Mutex::new(Weak::new())).lock();
    if let Some(waiter) = current.upgrade() {
        return Ok(waiter);
    }
    let waiter = Arc::new(Waiter::start()?);
    *current = Arc::downgrade(&waiter);
    Ok(waiter)
}

impl Waiter {
    fn start() -> io::Result<Self> {
        let (commands, inbox) = crossbeam_channel::unbounded();
        let thread = thread::Builder::new()
            .name("weir-channel-waiter".to_owned())
            .spawn(move || run(&inbox))?;
        Ok(Self {
            commands: Some(commands),
            thread: Some(thread),
            next_key: AtomicU64::new(0),
        })
    }

    fn send(&self, command: Command) {
        if let Some(commands) = &self.commands {
            // The thread holds the receiver until every handle is gone.
            let _ = commands.send(command);
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Closing the command channel ends the thread's loop.
        self.commands = None;
        if let Some(thread) = self.thread.take() {
            // The last handle can go on the waiter itself (a callback it
            // drops can hold the last stage); it is on its way out then.
            if thread.thread().id() != thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

struct Entry {
    watch: Box<dyn Watch>,
    wake: AsyncCallback<()>,
    armed: bool,
}

/// The waiter's loop: select over the commands and the armed entries;
/// wake the stage of a ready entry once; apply commands; end when the
/// command channel is closed.
fn run(commands: &Receiver<Command>) {
    let mut entries: HashMap<u64, Entry> = HashMap::new();
    loop {
        let ready = {
            let mut select = Select::new();
            let command = select.recv(commands);
            let armed: Vec<(usize, u64)> = entries
                .iter()
                .filter(|(_, entry)| entry.armed)
                .map(|(key, entry)| (entry.watch.add(&mut select), *key))
                .collect();
            let index = select.ready();
            (index != command)
                .then(|| armed.iter().find(|(i, _)| *i == index).map(|(_, key)| *key))
                .flatten()
        };
        if let Some(key) = ready {
            if let Some(entry) = entries.get_mut(&key) {
                entry.armed = false;
                entry.wake.invoke(());
            }
            continue;
        }
        loop {
            match commands.try_recv() {
                Ok(Command::Add(key, watch, wake)) => {
                    entries.insert(
                        key,
                        Entry {
                            watch,
                            wake,
                            armed: false,
                        },
                    );
                }
                Ok(Command::Arm(key)) => {
                    if let Some(entry) = entries.get_mut(&key) {
                        entry.armed = true;
                    }
                }
                Ok(Command::Remove(key)) => {
                    entries.remove(&key);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
    }
}

/// A bridge's registration with the shared waiter (see the module docs).
pub(super) struct Watched {
    waiter: Arc<Waiter>,
    key: u64,
}

impl Watched {
    /// Register `watch` to wake the stage through `wake` whenever armed.
    ///
    /// # Errors
    ///
    /// The waiter thread could not be started.
    pub(super) fn start(watch: Box<dyn Watch>, wake: AsyncCallback<()>) -> io::Result<Self> {
        let waiter = shared()?;
        let key = waiter.next_key.fetch_add(1, Ordering::Relaxed);
        waiter.send(Command::Add(key, watch, wake));
        Ok(Self { waiter, key })
    }

    /// The channel was not ready: wake the stage once it is.
    pub(super) fn arm(&self) {
        self.waiter.send(Command::Arm(self.key));
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.waiter.send(Command::Remove(self.key));
    }
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched").field("key", &self.key).finish()
    }
}
