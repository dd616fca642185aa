//! The island's state apart from the logics: connections with their
//! typed slots, the event queue, per-stage bookkeeping.
//!
//! # The connection state machine
//!
//! Every connection joins one outlet (upstream stage) to one inlet
//! (downstream stage) and holds one slot for one element. Its state is a
//! set of bits:
//!
//! | bit | set by | cleared by | meaning |
//! |---|---|---|---|
//! | `DEMANDED` | `pull` | `push` | downstream asked for one element |
//! | `PUSHED` | `push` | delivering the push | an element is in the slot, `on_push` not yet run |
//! | `AVAILABLE` | delivering the push | `grab`, `pull`, `cancel` | the element waits to be grabbed |
//! | `UP_CLOSED` | `complete` / `fail` | never | upstream will push no more |
//! | `DOWN_CLOSED` | `cancel` | never | downstream wants no more |
//! | `IN_DONE` | `cancel`, delivering a completion | never | the inlet is closed for its stage |
//! | `OUT_DONE` | `complete` / `fail`, delivering a cancel | never | the outlet is closed for its stage |
//! | `COMPLETE_AFTER_EMIT` | `complete` with emits queued | the last emit | complete once the emit queue drains |
//! | `EMITTING` | `emit` queueing an element | the last emit, `fail`, delivering a cancel | `emits` holds a queue (so a push's one state test covers it) |
//!
//! The Reactive Streams rules between two stages follow from it: a push
//! needs `DEMANDED` (else a protocol error fails the pushing stage), at
//! most one element is in flight, nothing is pushed after `OUT_DONE`, a
//! completion is delivered after the push before it (the event queue is
//! FIFO) and at most once (`IN_DONE`), a cancel is delivered at most once
//! (`OUT_DONE`), and pushes into a cancelled connection are absorbed.
//!
//! A stage counts its open ports; when the count reaches 0 (and the stage
//! does not keep going) it is finished and its `post_stop` runs.

use crate::sync::Arc;
use std::any::{Any, TypeId};
use std::collections::VecDeque;

use weir_actor::{ActorSystem, Cancellable};

use crate::error::StreamError;
use crate::stage::{
    Attributes, GraphStageLogic, Slot, SlotKind, StageContext, StageResult, TimerKey,
};

pub(crate) const DEMANDED: u16 = 1;
pub(crate) const PUSHED: u16 = 2;
pub(crate) const AVAILABLE: u16 = 4;
pub(crate) const UP_CLOSED: u16 = 8;
pub(crate) const DOWN_CLOSED: u16 = 16;
pub(crate) const IN_DONE: u16 = 32;
pub(crate) const OUT_DONE: u16 = 64;
pub(crate) const COMPLETE_AFTER_EMIT: u16 = 128;
pub(crate) const EMITTING: u16 = 256;

/// A signal over one connection, delivered in FIFO order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    Push(u32),
    Pull(u32),
    Complete(u32),
    Fail(u32),
    Cancel(u32),
}

pub(crate) struct Conn {
    pub(crate) state: u16,
    pub(crate) up: u32,
    pub(crate) up_port: u16,
    pub(crate) down: u32,
    pub(crate) down_port: u16,
    /// `Option<T>` for the connection's element type.
    pub(crate) slot: Slot,
    /// The element type the slot holds, checked inline on every access
    /// (a compare of two constants, no vtable call).
    pub(crate) element: TypeId,
    /// Empties the slot (knows the element type).
    pub(crate) clear: unsafe fn(&mut Slot),
    pub(crate) failure: Option<StreamError>,
    /// The failure downstream cancelled with (`None`: a normal cancel);
    /// set only when the connection is cancelled.
    pub(crate) cancel_cause: Option<StreamError>,
    /// `VecDeque<T>` of elements `emit` queued, and how to push the next one.
    pub(crate) emits: Option<(Box<dyn Any + Send>, EmitNext)>,
    /// Elements delivered over it, counted only by an island with
    /// counters (`crate::interpreter::counters`): kept here, beside the
    /// state the delivery writes anyway, a count is one add.
    pub(crate) pushed: u64,
}

pub(crate) type EmitNext = fn(&mut Core, u32) -> StageResult;

/// A handler registered with an async callback.
pub(crate) type Handler = Box<
    dyn FnMut(&mut dyn GraphStageLogic, Box<dyn Any + Send>, &mut StageContext<'_>) -> StageResult
        + Send,
>;

pub(crate) struct StageMeta {
    pub(crate) name: Arc<str>,
    pub(crate) attributes: Attributes,
    pub(crate) open_ports: u16,
    pub(crate) keep_going: bool,
    pub(crate) finished: bool,
    pub(crate) handlers: Vec<Option<Handler>>,
    pub(crate) timers: Vec<TimerEntry>,
    /// Run when the stage finishes (stage actors stop here).
    pub(crate) on_finish: Vec<Box<dyn FnOnce() + Send>>,
    /// In `Core::idle` already.
    pub(crate) idle_requested: bool,
    /// Reads how full the stage's buffer between islands is, for a
    /// snapshot (set by an async boundary's halves at start).
    pub(crate) gauge: Option<Gauge>,
}

/// Reads a stage's buffer from its logic (which it downcasts to the one
/// type it was made for), for a snapshot; never on the element path.
pub(crate) type Gauge = fn(&dyn GraphStageLogic) -> Option<crate::snapshot::BufferFill>;

pub(crate) struct TimerEntry {
    pub(crate) key: TimerKey,
    pub(crate) generation: u64,
    pub(crate) period: Option<std::time::Duration>,
    pub(crate) cancel: Cancellable,
}

/// The actor an island runs on, for callbacks and timers.
#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) island: super::IslandRef,
    pub(crate) system: ActorSystem,
    /// The materializer's fusion setting, for stages that plan graphs of
    /// their own (substreams).
    pub(crate) fusion: bool,
}

/// Where a stage's connections are in [`Core::links`]: its inlets'
/// from `base`, then its outlets.
#[derive(Clone, Copy)]
pub(crate) struct Ports {
    pub(crate) base: u32,
    pub(crate) ins: u16,
    pub(crate) outs: u16,
}

pub(crate) struct Core {
    pub(crate) conns: Vec<Conn>,
    /// Per stage, where its connections are in `links` (one small entry
    /// per stage: a hop looks a port up here, not in `StageMeta`).
    pub(crate) ports: Vec<Ports>,
    /// The connection of every port, stage by stage, inlets first.
    pub(crate) links: Vec<u32>,
    pub(crate) events: VecDeque<Event>,
    /// The push or pull a handler just made, dispatched next without a
    /// trip through `events` (Akka's event chasing). Only pushes and pulls
    /// are chased: each connection has at most one of them in flight, so
    /// running one early never overtakes an event of its own connection
    /// (a completion queued behind a push stays behind it).
    pub(crate) chased: Option<Event>,
    pub(crate) stages: Vec<StageMeta>,
    pub(crate) host: Host,
    pub(crate) timer_generation: u64,
    pub(crate) live_stages: usize,
    /// A port closed (or `keep_going` changed) since the running handler
    /// started: whether its stage finished is checked after it returns.
    /// Most handlers close nothing and skip that check.
    pub(crate) recheck: bool,
    /// Stages whose `on_idle` runs when the island has run out of events
    /// (`StageContext::request_idle_callback`).
    pub(crate) idle: Vec<usize>,
}

impl Core {
    /// The connection of a stage's inlet or outlet `port`, given its
    /// [`Ports`].
    #[inline(always)]
    pub(crate) fn link(&self, p: Ports, port: u16, inlet: bool) -> Result<u32, StreamError> {
        let (first, count) = if inlet {
            (p.base as usize, p.ins)
        } else {
            (p.base as usize + usize::from(p.ins), p.outs)
        };
        if port < count {
            Ok(self.links[first + usize::from(port)])
        } else {
            Err(not_connected(if inlet { "inlet" } else { "outlet" }, port))
        }
    }

    /// The connections of `stage`'s inlets.
    pub(crate) fn ins(&self, stage: usize) -> std::ops::Range<usize> {
        let p = self.ports[stage];
        p.base as usize..p.base as usize + usize::from(p.ins)
    }

    /// The connections of `stage`'s outlets.
    pub(crate) fn outs(&self, stage: usize) -> std::ops::Range<usize> {
        let p = self.ports[stage];
        let start = p.base as usize + usize::from(p.ins);
        start..start + usize::from(p.outs)
    }

    fn close_port(&mut self, stage: u32) {
        let meta = &mut self.stages[stage as usize];
        meta.open_ports = meta.open_ports.saturating_sub(1);
        self.recheck = true;
    }

    #[inline(always)]
    pub(crate) fn pull(&mut self, c: u32) -> StageResult {
        let conn = &mut self.conns[c as usize];
        let s = conn.state;
        // The common case in one test: open both ways, nothing asked or waiting.
        if s & (IN_DONE | DEMANDED | PUSHED | AVAILABLE | UP_CLOSED) == 0 {
            conn.state = s | DEMANDED;
            self.flow(Event::Pull(c));
            return Ok(());
        }
        self.pull_other(c)
    }

    /// [`pull`](Self::pull) in every state but the common one.
    #[cold]
    #[inline(never)]
    fn pull_other(&mut self, c: u32) -> StageResult {
        let conn = &mut self.conns[c as usize];
        let s = conn.state;
        if s & IN_DONE != 0 {
            return Err(violation("pull on a closed inlet"));
        }
        if s & (DEMANDED | PUSHED) != 0 {
            return Err(StreamError::protocol(
                "pull on an inlet that was already pulled",
            ));
        }
        if s & AVAILABLE != 0 {
            // Pulling again without grabbing drops the element, as in Akka.
            conn.state &= !AVAILABLE;
            conn.slot_clear();
        }
        conn.state |= DEMANDED;
        if s & UP_CLOSED == 0 {
            self.flow(Event::Pull(c));
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn push<T: Send + 'static>(&mut self, c: u32, element: T) -> StageResult {
        let conn = &mut self.conns[c as usize];
        let s = conn.state;
        // The common case in one test: pulled, open both ways, no emits queued.
        if s & (OUT_DONE | DOWN_CLOSED | DEMANDED | EMITTING) == DEMANDED {
            *conn.slot_mut::<T>()? = Some(element);
            conn.state = (s & !DEMANDED) | PUSHED;
            self.flow(Event::Push(c));
            return Ok(());
        }
        if s & EMITTING != 0 {
            return Err(StreamError::protocol(
                "push while emitted elements are still queued",
            ));
        }
        self.push_next(c, element)
    }

    /// Push, where the emit queue may still hold later elements.
    fn push_next<T: Send + 'static>(&mut self, c: u32, element: T) -> StageResult {
        let conn = &mut self.conns[c as usize];
        let s = conn.state;
        if s & OUT_DONE != 0 {
            if s & DOWN_CLOSED != 0 {
                // Downstream cancelled: pushes are absorbed.
                return Ok(());
            }
            return Err(violation("push on a completed outlet"));
        }
        if s & DOWN_CLOSED != 0 {
            return Ok(());
        }
        if s & DEMANDED == 0 {
            return Err(violation("push without a pull"));
        }
        *conn.slot_mut::<T>()? = Some(element);
        conn.state = (s & !DEMANDED) | PUSHED;
        self.flow(Event::Push(c));
        Ok(())
    }

    /// Queue a push or pull: chased when nothing else is.
    #[inline]
    fn flow(&mut self, event: Event) {
        if self.chased.is_none() {
            self.chased = Some(event);
        } else {
            self.events.push_back(event);
        }
    }

    /// Queue the chased push or pull before a completion, failure or
    /// cancellation joins the queue: the chase limit may demote a chased
    /// event to the back of the queue, and it must not land behind a
    /// completion of its own connection (the element would be lost).
    #[inline]
    pub(crate) fn unchase(&mut self) {
        if let Some(event) = self.chased.take() {
            self.events.push_back(event);
        }
    }

    /// Whether any event waits.
    #[inline]
    pub(crate) fn has_events(&self) -> bool {
        self.chased.is_some() || !self.events.is_empty()
    }

    #[inline(always)]
    pub(crate) fn grab<T: Send + 'static>(&mut self, c: u32) -> Result<T, StreamError> {
        let conn = &mut self.conns[c as usize];
        if conn.state & AVAILABLE == 0 {
            return Err(violation("grab with no element available"));
        }
        let element = conn.slot_mut::<T>()?.take();
        conn.state &= !AVAILABLE;
        element.ok_or_else(|| violation("grab with no element available"))
    }

    pub(crate) fn complete(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        if conn.state & OUT_DONE != 0 {
            return;
        }
        if conn.emits_pending() {
            conn.state |= COMPLETE_AFTER_EMIT;
            return;
        }
        conn.state |= UP_CLOSED | OUT_DONE;
        let (up, deliver) = (conn.up, conn.state & DOWN_CLOSED == 0);
        self.close_port(up);
        if deliver {
            self.unchase();
            self.events.push_back(Event::Complete(c));
        }
    }

    pub(crate) fn fail(&mut self, c: u32, error: StreamError) {
        let conn = &mut self.conns[c as usize];
        if conn.state & OUT_DONE != 0 {
            return;
        }
        conn.drop_emits();
        conn.state |= UP_CLOSED | OUT_DONE;
        conn.failure = Some(error);
        let (up, deliver) = (conn.up, conn.state & DOWN_CLOSED == 0);
        self.close_port(up);
        if deliver {
            self.unchase();
            self.events.push_back(Event::Fail(c));
        }
    }

    pub(crate) fn cancel(&mut self, c: u32) {
        self.cancel_with(c, None);
    }

    /// Cancel `c` because downstream failed with `cause` (`None`: a
    /// normal cancel); upstream reads the cause in `on_downstream_finish`.
    pub(crate) fn cancel_with(&mut self, c: u32, cause: Option<StreamError>) {
        let conn = &mut self.conns[c as usize];
        if conn.state & IN_DONE != 0 {
            return;
        }
        conn.cancel_cause = cause;
        if conn.state & AVAILABLE != 0 {
            conn.slot_clear();
        }
        conn.state = (conn.state & !(AVAILABLE | DEMANDED)) | DOWN_CLOSED | IN_DONE;
        let (down, deliver) = (conn.down, conn.state & OUT_DONE == 0);
        self.close_port(down);
        if deliver {
            self.unchase();
            self.events.push_back(Event::Cancel(c));
        }
    }

    /// Queue `element` behind any earlier emits, pushing it at once when
    /// the outlet is free and pulled.
    pub(crate) fn emit<T: Send + 'static>(&mut self, c: u32, element: T) -> StageResult {
        let conn = &mut self.conns[c as usize];
        if conn.state & (OUT_DONE | COMPLETE_AFTER_EMIT) != 0 {
            if conn.state & DOWN_CLOSED != 0 {
                return Ok(());
            }
            return Err(StreamError::protocol("emit on a completed outlet"));
        }
        if !conn.emits_pending() && conn.state & DEMANDED != 0 {
            return self.push(c, element);
        }
        conn.state |= EMITTING;
        let (queue, _) = conn
            .emits
            .get_or_insert_with(|| (Box::new(VecDeque::<T>::new()), emit_next::<T>));
        queue
            .downcast_mut::<VecDeque<T>>()
            .expect("emit queue holds the outlet's element type")
            .push_back(element);
        Ok(())
    }

    pub(crate) fn has_emits(&self, c: u32) -> bool {
        self.conns[c as usize].emits_pending()
    }
}

#[cold]
#[inline(never)]
fn not_connected(side: &str, port: u16) -> StreamError {
    StreamError::protocol(format!("{side} {port} is not connected"))
}

#[cold]
#[inline(never)]
fn wrong_type(name: &str) -> StreamError {
    StreamError::protocol(format!(
        "port used with element type {name}, which is not the connection's"
    ))
}

#[cold]
#[inline(never)]
fn violation(detail: &'static str) -> StreamError {
    StreamError::protocol(detail)
}

/// Push the next queued emit (the connection was just pulled).
fn emit_next<T: Send + 'static>(core: &mut Core, c: u32) -> StageResult {
    let conn = &mut core.conns[c as usize];
    let Some((queue, _)) = conn.emits.as_mut() else {
        return Ok(());
    };
    let queue = queue
        .downcast_mut::<VecDeque<T>>()
        .expect("emit queue type");
    let Some(element) = queue.pop_front() else {
        return Ok(());
    };
    let drained = queue.is_empty();
    if drained {
        conn.drop_emits();
    }
    core.push_next(c, element)?;
    let conn = &mut core.conns[c as usize];
    if drained && conn.state & COMPLETE_AFTER_EMIT != 0 {
        conn.state &= !COMPLETE_AFTER_EMIT;
        core.complete(c);
    }
    Ok(())
}

impl Conn {
    pub(crate) fn new(up: u32, up_port: u16, down: u32, down_port: u16, kind: SlotKind) -> Self {
        Self {
            state: 0,
            up,
            up_port,
            down,
            down_port,
            slot: (kind.new)(),
            element: kind.element,
            clear: kind.clear,
            failure: None,
            cancel_cause: None,
            emits: None,
            pushed: 0,
        }
    }

    fn emits_pending(&self) -> bool {
        self.state & EMITTING != 0
    }

    /// Forget the emit queue (drained, failed or cancelled).
    pub(crate) fn drop_emits(&mut self) {
        self.emits = None;
        self.state &= !EMITTING;
    }

    #[inline]
    fn slot_mut<T: Send + 'static>(&mut self) -> Result<&mut Option<T>, StreamError> {
        if self.element != TypeId::of::<T>() {
            return Err(wrong_type(std::any::type_name::<T>()));
        }
        // SAFETY: the slot was made by `SlotKind::of::<E>()` with
        // `element == TypeId::of::<E>()`; equal type ids mean `T == E`.
        Ok(unsafe { self.slot.get::<T>() })
    }

    fn slot_clear(&mut self) {
        // SAFETY: `clear` and `slot` come from the same `SlotKind`.
        unsafe { (self.clear)(&mut self.slot) };
    }
}

// Plain threads and std atomics: not loom models.
#[cfg(all(test, not(loom)))]
mod protocol_tests;
#[cfg(all(test, not(loom)))]
mod slot_tests;
