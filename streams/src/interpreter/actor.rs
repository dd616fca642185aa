//! The actor that hosts one island.

use std::any::Any;

use weir_actor::{Actor, Context};

use super::island::Island;
use crate::stage::TimerKey;

/// How many events an island processes per actor message before it
/// yields the thread to other actors.
const EVENT_BUDGET: usize = 1024;

pub(crate) enum IslandMsg {
    /// The materializer hands over the built island.
    Start(Box<Island>),
    /// An async callback was invoked.
    Async {
        stage: u32,
        handler: u32,
        payload: Box<dyn Any + Send>,
    },
    Timer {
        stage: u32,
        key: TimerKey,
        generation: u64,
    },
    /// Events are left over from the last budget: run them.
    Resume,
}

#[derive(Default)]
pub(crate) struct IslandActor {
    island: Option<Box<Island>>,
    /// Messages that arrived before `Start` (a callback invoked while the
    /// island was still being built), replayed in order.
    early: Vec<IslandMsg>,
    resume_sent: bool,
}

impl Actor for IslandActor {
    type Msg = IslandMsg;

    fn receive(&mut self, ctx: &mut Context<Self>, msg: IslandMsg) {
        if let IslandMsg::Start(mut island) = msg {
            island.start();
            self.island = Some(island);
            for early in std::mem::take(&mut self.early) {
                self.handle(early);
            }
        } else if self.island.is_none() {
            self.early.push(msg);
            return;
        } else {
            self.handle(msg);
        }
        let Some(island) = self.island.as_mut() else {
            return;
        };
        let more = island.run(EVENT_BUDGET);
        if island.is_done() {
            self.island = None;
            ctx.stop_self();
        } else if more && !self.resume_sent {
            self.resume_sent = true;
            ctx.myself().tell(IslandMsg::Resume);
        }
    }

    fn post_stop(&mut self, _ctx: &mut Context<Self>) {
        if let Some(mut island) = self.island.take() {
            island.abort();
        }
    }
}

impl IslandActor {
    fn handle(&mut self, msg: IslandMsg) {
        let Some(island) = self.island.as_mut() else {
            return;
        };
        match msg {
            IslandMsg::Start(_) => {}
            IslandMsg::Async {
                stage,
                handler,
                payload,
            } => island.on_async(stage, handler, payload),
            IslandMsg::Timer {
                stage,
                key,
                generation,
            } => island.on_timer(stage, key, generation),
            IslandMsg::Resume => self.resume_sent = false,
        }
    }
}
