//! One fused island: the logics, the core, and the event loop that drives them.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::counters::Counters;
use crate::error::StreamError;
use crate::stage::core::{
    AVAILABLE, Core, DEMANDED, DOWN_CLOSED, Event, IN_DONE, OUT_DONE, PUSHED, UP_CLOSED,
};
use crate::stage::{
    GraphStageLogic, InPort, IslandMsg, OutPort, StageContext, StageResult, TimerKey,
};

/// How many chased events run in a row before the queue gets a turn
/// (Akka's limit).
const CHASE_LIMIT: u32 = 16;

pub(crate) struct Island {
    pub(crate) logics: Vec<Box<dyn GraphStageLogic>>,
    pub(crate) core: Core,
    /// The stage whose handler runs now: a panic is attributed to it.
    pub(crate) active: usize,
    /// The next stage whose `pre_start` has to run.
    pub(crate) starting: usize,
    /// Its entry in the system's registry of running streams (top-level
    /// islands only), removed when the island is dropped.
    pub(crate) registration: Option<crate::running::Registration>,
    /// Its stages' counters, when the materializer counts (`super::counters`).
    pub(crate) counters: Option<Box<Counters>>,
}

impl Island {
    /// Run every stage's `pre_start`, in order.
    pub(crate) fn start(&mut self) {
        self.guarded(|island| {
            while island.starting < island.logics.len() {
                let stage = island.starting;
                island.starting += 1;
                island.call(stage, |logic, ctx| logic.pre_start(ctx));
            }
        });
    }

    /// Run `body`; a panic in a handler inside it fails the stage that was
    /// running, and `body` runs again to go on where it was (its state
    /// lives in the island). One `catch_unwind` per batch of events, not
    /// per handler call.
    fn guarded(&mut self, mut body: impl FnMut(&mut Island)) {
        loop {
            match catch_unwind(AssertUnwindSafe(|| body(self))) {
                Ok(()) => return,
                Err(payload) => {
                    let stage = self.active;
                    self.fail_stage(stage, StreamError::panicked(&*payload));
                }
            }
        }
    }

    /// Whether every stage has finished.
    pub(crate) fn is_done(&self) -> bool {
        self.core.live_stages == 0
    }

    /// Process up to `budget` events; whether events remain. When the
    /// queue runs dry, the stages that asked for it get `on_idle` (and may
    /// queue more events).
    pub(crate) fn run(&mut self, budget: usize) -> bool {
        let mut left = budget;
        self.run_within(&mut left)
    }

    /// [`run`](Self::run) with a budget shared by several calls: what is
    /// spent comes off `left`.
    /// The event loop that counts runs only in an island that has
    /// counters: chosen here, once per call, so an island that does not
    /// count runs a loop with no counting in it (`super::counters`).
    pub(crate) fn run_within(&mut self, left: &mut usize) -> bool {
        let mut more = false;
        if self.counters.is_some() {
            self.guarded(|island| more = island.run_events::<true>(left));
        } else {
            self.guarded(|island| more = island.run_events::<false>(left));
        }
        more
    }

    fn run_events<const COUNT: bool>(&mut self, left: &mut usize) -> bool {
        loop {
            *left = self.run_queue::<COUNT>(*left);
            if *left == 0 {
                return self.core.has_events();
            }
            let mut idle = std::mem::take(&mut self.core.idle);
            for &stage in &idle {
                self.core.stages[stage].idle_requested = false;
                self.call(stage, |logic, ctx| logic.on_idle(ctx));
            }
            // Keep the list's allocation unless a callback asked again.
            idle.clear();
            if self.core.idle.is_empty() {
                self.core.idle = idle;
            }
            if !self.core.has_events() {
                return false;
            }
        }
    }

    /// Dispatch events until the queue is empty or `left` is spent; what
    /// is left of it. The chased push or pull runs first, up to
    /// [`CHASE_LIMIT`] in a row; past the limit it queues, so a push/pull
    /// loop cannot starve what waits in the queue.
    fn run_queue<const COUNT: bool>(&mut self, mut left: usize) -> usize {
        let mut chain = 0;
        while left > 0 {
            let event = match self.core.chased.take() {
                Some(event) if chain < CHASE_LIMIT => {
                    chain += 1;
                    event
                }
                chased => {
                    chain = 0;
                    if let Some(event) = chased {
                        self.core.events.push_back(event);
                    }
                    let Some(event) = self.core.events.pop_front() else {
                        break;
                    };
                    event
                }
            };
            left -= 1;
            self.dispatch::<COUNT>(event);
        }
        left
    }

    fn dispatch<const COUNT: bool>(&mut self, event: Event) {
        match event {
            Event::Push(c) => {
                let conn = &mut self.core.conns[c as usize];
                if conn.state & (IN_DONE | PUSHED) != PUSHED {
                    return;
                }
                conn.state = (conn.state & !PUSHED) | AVAILABLE;
                if COUNT {
                    conn.pushed += 1;
                }
                let (down, port) = (conn.down as usize, InPort(conn.down_port));
                // An open inlet means a live stage: a finished stage has
                // closed every port (see `finish_if_closed`).
                debug_assert!(!self.core.stages[down].finished);
                self.call_live(down, |logic, ctx| logic.on_push(port, ctx));
                // The end queued behind this element comes before anything
                // the element's handler set off: its chased push or pull
                // joins the queue behind that end (and behind what was
                // queued before it, as a cancel its stage sent upstream).
                // Without it a chased pull could run ahead of the end and
                // fetch from another input first, which a fused source
                // ending with its last element never lets happen (Pekko's
                // interpreter re-queues the end after the push the same way).
                if self.core.conns[c as usize].state & (UP_CLOSED | IN_DONE) == UP_CLOSED {
                    self.core.unchase();
                }
            }
            Event::Pull(c) => {
                let conn = &self.core.conns[c as usize];
                let s = conn.state;
                if s & (OUT_DONE | DOWN_CLOSED | PUSHED | DEMANDED) != DEMANDED {
                    return;
                }
                let (up, port) = (conn.up as usize, OutPort(conn.up_port));
                debug_assert!(!self.core.stages[up].finished);
                if let Some((_, next)) = &conn.emits {
                    let next = *next;
                    self.call_live(up, |_, ctx| next(ctx.core, c));
                } else {
                    self.call_live(up, |logic, ctx| logic.on_pull(port, ctx));
                }
            }
            Event::Complete(c) | Event::Fail(c) => {
                let conn = &mut self.core.conns[c as usize];
                if conn.state & IN_DONE != 0 {
                    return;
                }
                conn.state |= IN_DONE;
                let (down, port) = (conn.down as usize, InPort(conn.down_port));
                let failure = conn.failure.clone();
                self.core.stages[down].open_ports -= 1;
                self.core.recheck = true;
                match failure {
                    None => self.call(down, |logic, ctx| logic.on_upstream_finish(port, ctx)),
                    Some(error) => self.call(down, |logic, ctx| {
                        logic.on_upstream_failure(port, error, ctx)
                    }),
                }
            }
            Event::Cancel(c) => {
                let conn = &mut self.core.conns[c as usize];
                if conn.state & OUT_DONE != 0 {
                    return;
                }
                conn.state |= OUT_DONE;
                conn.drop_emits();
                let (up, port) = (conn.up as usize, OutPort(conn.up_port));
                self.core.stages[up].open_ports -= 1;
                self.core.recheck = true;
                self.call(up, |logic, ctx| logic.on_downstream_finish(port, ctx));
            }
        }
    }

    /// Run one handler of `stage` (inside `guarded`) unless the stage has
    /// finished; a failure fails the stage; then finish the stage if it
    /// has no open ports left.
    fn call(
        &mut self,
        stage: usize,
        handler: impl FnOnce(&mut dyn GraphStageLogic, &mut StageContext<'_>) -> StageResult,
    ) {
        if self.core.stages[stage].finished {
            return;
        }
        self.core.recheck = true;
        self.call_live(stage, handler);
    }

    /// [`call`](Self::call) for a stage known to be live (a push or pull
    /// reached it through an open port). Whether it finished is checked
    /// only when a port closed or `keep_going` changed meanwhile
    /// (`Core::recheck`): a handler that only pushes, pulls and grabs
    /// cannot finish its stage.
    #[inline]
    fn call_live(
        &mut self,
        stage: usize,
        handler: impl FnOnce(&mut dyn GraphStageLogic, &mut StageContext<'_>) -> StageResult,
    ) {
        self.active = stage;
        let logic = &mut *self.logics[stage];
        let mut ctx = StageContext::new(&mut self.core, stage);
        match handler(logic, &mut ctx) {
            Ok(()) => {
                if std::mem::take(&mut self.core.recheck) {
                    self.finish_if_closed(stage);
                }
            }
            Err(error) => self.fail_stage(stage, error),
        }
    }

    /// A handler of `stage` returned `error` or panicked: fail its ports,
    /// tell the stage (a sink reports it in its completion, having no
    /// outlet to carry it), then finish it if it has no open ports left.
    /// The one path every failure of stage code takes, panics included.
    fn fail_stage(&mut self, stage: usize, error: StreamError) {
        let mut ctx = StageContext::new(&mut self.core, stage);
        let error = ctx.attribute(error);
        ctx.fail_stage(error.clone());
        if !self.core.stages[stage].finished {
            let logic = &mut *self.logics[stage];
            // A panic here has nowhere left to go: the stage has failed.
            let _ = catch_unwind(AssertUnwindSafe(|| logic.on_failure(&error)));
        }
        self.finish_if_closed(stage);
    }

    /// Finish `stage` if it has no open ports and does not keep going
    /// (also for a port closed from outside the island, as a hosting
    /// stage cancels a sub-island's output).
    pub(crate) fn finish_if_closed(&mut self, stage: usize) {
        let meta = &mut self.core.stages[stage];
        if meta.finished || meta.open_ports > 0 || meta.keep_going {
            return;
        }
        self.finish(stage);
    }

    fn finish(&mut self, stage: usize) {
        let meta = &mut self.core.stages[stage];
        meta.finished = true;
        meta.handlers.clear();
        for on_finish in meta.on_finish.drain(..) {
            on_finish();
        }
        for timer in meta.timers.drain(..) {
            timer.cancel.cancel();
        }
        self.core.live_stages -= 1;
        let logic = &mut *self.logics[stage];
        // A panic in post_stop has nowhere left to go: the stage is done.
        let _ = catch_unwind(AssertUnwindSafe(|| logic.post_stop()));
    }

    /// A message from the island's stages (an async callback or a timer):
    /// handle it.
    pub(crate) fn on_message(&mut self, msg: IslandMsg) {
        match msg {
            IslandMsg::Async {
                stage,
                handler,
                payload,
            } => self.on_async(stage, handler, payload),
            IslandMsg::Timer {
                stage,
                key,
                generation,
            } => self.on_timer(stage, key, generation),
            // Answered by the task that runs a top-level island, which
            // knows how long it has waited (`IslandTask::turn`); a hosted
            // island is never asked: the reply, dropped, leaves it out.
            IslandMsg::Snapshot(reply) => drop(reply),
        }
    }

    /// Run an async callback's handler inside `stage`.
    pub(crate) fn on_async(&mut self, stage: u32, handler: u32, payload: Box<dyn Any + Send>) {
        let stage = stage as usize;
        let meta = &mut self.core.stages[stage];
        let slot = if meta.finished {
            None
        } else {
            meta.handlers.get_mut(handler as usize)
        };
        let Some(mut run) = slot.and_then(Option::take) else {
            self.core.host.island.dead_letter(payload);
            return;
        };
        let mut payload = Some(payload);
        self.guarded(|island| {
            if let Some(payload) = payload.take() {
                island.call(stage, |logic, ctx| run(logic, payload, ctx));
            }
        });
        if let Some(slot) = self.core.stages[stage].handlers.get_mut(handler as usize) {
            *slot = Some(run);
        }
    }

    /// A timer fired: run `on_timer` unless it was cancelled or replaced.
    pub(crate) fn on_timer(&mut self, stage: u32, key: TimerKey, generation: u64) {
        let stage = stage as usize;
        let meta = &mut self.core.stages[stage];
        let Some(i) = meta
            .timers
            .iter()
            .position(|t| t.key == key && t.generation == generation)
        else {
            return;
        };
        if meta.timers[i].period.is_none_or(|p| p.is_zero()) {
            meta.timers.swap_remove(i); // periodic ones re-arm in the scheduler
        }
        let mut fired = false;
        self.guarded(|island| {
            if !std::mem::replace(&mut fired, true) {
                island.call(stage, |logic, ctx| logic.on_timer(key, ctx));
            }
        });
    }

    /// The island's task was aborted or dropped (or failed) before the
    /// stream finished:
    /// fail what is still running with `error` so every sink's completion
    /// reports it (each stage's `on_failure`, then its `post_stop`).
    pub(crate) fn abort(&mut self, error: &StreamError) {
        for stage in 0..self.logics.len() {
            if self.core.stages[stage].finished {
                continue;
            }
            let mut ctx = StageContext::new(&mut self.core, stage);
            ctx.fail_stage(error.clone());
            let logic = &mut *self.logics[stage];
            let _ = catch_unwind(AssertUnwindSafe(|| logic.on_failure(error)));
            self.finish(stage);
        }
        self.core.events.clear();
        self.core.chased = None;
    }
}
