//! The public handles are Send and Sync (or Send) where users need them across threads.

use weir_actor::{
    Actor, ActorHandle, ActorPath, ActorRef, ActorSystem, AskError, AskHandle, BuildError, Context,
    DeadLetter, Event, EventStream, Failure, MailboxOverflow, NameError, Props, SendFuture,
    SpawnError, StashError, Subscription, SupervisorStrategy, TellError, Termination, WaitError,
};
use weir_actor::{After, SchedulerStopped, Sleep, testkit::TestProbe};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}
fn error<T: std::error::Error + Send + Sync + 'static>() {}

struct Dummy;
impl Actor for Dummy {
    type Msg = String;
    fn receive(&mut self, _: &mut Context<Self>, _: String) {}
}

#[test]
fn handles_cross_threads() {
    send_sync::<ActorSystem>();
    send_sync::<ActorRef<String>>();
    send_sync::<ActorHandle>();
    send_sync::<ActorPath>();
    send_sync::<Props<Dummy>>();
    send_sync::<SupervisorStrategy>();
    send_sync::<Termination>();
    send_sync::<EventStream>();
    send_sync::<Subscription>();
    send_sync::<Failure>();
    send::<AskHandle<String>>();
    send::<Event>();
    send::<DeadLetter>();
    send::<Context<Dummy>>();
    send_sync::<MailboxOverflow>();
    send::<SendFuture<'static, String>>();
    send_sync::<Sleep>();
    send_sync::<After<String>>();
    send::<TestProbe<String>>();
}

#[test]
fn errors_are_std_errors() {
    error::<NameError>();
    error::<SpawnError>();
    error::<TellError<String>>();
    error::<SchedulerStopped>();
    error::<SchedulerStopped<String>>();
    error::<StashError<String>>();
    error::<AskError>();
    error::<BuildError>();
    error::<WaitError>();
}
