//! The actor that hosts one island.

use weir_actor::{Actor, Context, DeadLetterReason, Failure};

use super::island::Island;
use super::lifecycle::{Accept, Lifecycle};
use crate::error::{ErrorKind, StreamError};
use crate::stage::IslandMsg;

/// How many events an island processes per actor message before it
/// yields the thread to other actors.
const EVENT_BUDGET: usize = 1024;

#[derive(Default)]
pub(crate) struct IslandActor {
    lifecycle: Lifecycle<Box<Island>, IslandMsg>,
    resume_sent: bool,
}

impl Actor for IslandActor {
    type Msg = IslandMsg;

    fn receive(&mut self, ctx: &mut Context<Self>, msg: IslandMsg) {
        if let IslandMsg::Start(mut island) = msg {
            island.start();
            for early in self.lifecycle.start(island) {
                self.handle(early);
            }
        } else {
            match self.lifecycle.accept(msg) {
                Accept::Handle(msg) => self.handle(msg),
                Accept::Kept => return,
                Accept::Refused(msg) => return refuse(ctx, msg),
            }
        }
        let Some(island) = self.lifecycle.island() else {
            return;
        };
        let more = island.run(EVENT_BUDGET);
        if island.is_done() {
            self.lifecycle.finish();
            ctx.stop_self();
        } else if more && !self.resume_sent {
            self.resume_sent = true;
            ctx.myself().tell(IslandMsg::Resume);
        }
    }

    fn post_stop(&mut self, _ctx: &mut Context<Self>) {
        if let Some(mut island) = self.lifecycle.finish() {
            island.abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
        }
    }

    /// A panic escaped the island's own catch (each handler's panic fails
    /// only its stage; this is one outside them). The island's state is
    /// suspect and a fresh actor would have no island, so the stream fails
    /// with the panic and the actor stops instead of restarting.
    fn pre_restart(&mut self, ctx: &mut Context<Self>, failure: &Failure) {
        ctx.stop_all_children();
        if let Some(mut island) = self.lifecycle.finish() {
            let message = format!("the island's actor panicked: {}", failure.message());
            island.abort(&StreamError::from_kind(ErrorKind::Panicked(message)));
        }
    }

    /// The fresh instance has no island: it refuses every message and stops.
    fn post_restart(&mut self, ctx: &mut Context<Self>, _failure: &Failure) {
        self.lifecycle.finish();
        ctx.stop_self();
    }
}

/// A message for a finished island: an async callback's value becomes a
/// dead letter; timers and resumes have nothing left to do.
fn refuse(ctx: &mut Context<IslandActor>, msg: IslandMsg) {
    if let IslandMsg::Async { payload, .. } = msg {
        let path = ctx.path().clone();
        ctx.system().event_stream().publish_dead_letter(
            &path,
            payload,
            DeadLetterReason::StageStopped,
        );
    }
}

impl IslandActor {
    fn handle(&mut self, msg: IslandMsg) {
        let Some(island) = self.lifecycle.island() else {
            return;
        };
        match msg {
            IslandMsg::Resume => self.resume_sent = false,
            msg => island.on_message(msg),
        }
    }
}
