//! A warm bounded mailbox allocates nothing per message: `try_tell` (retried while full) and `send().await`, counted by the benches' counting allocator.

use std::sync::mpsc::{SyncSender, sync_channel};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, MailboxOverflow, Props};
use weir_benches::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const MESSAGES: u64 = 20_000;

enum Msg {
    Inc(u64),
    Flush(SyncSender<u64>),
}

struct Counter(u64);

impl Actor for Counter {
    type Msg = Msg;
    fn receive(&mut self, _: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Inc(n) => self.0 = self.0.wrapping_add(n),
            Msg::Flush(reply) => reply.send(self.0).unwrap(),
        }
    }
}

/// Allocations per message of `round` once warm (the third of three rounds).
fn per_message(mut round: impl FnMut()) -> f64 {
    round();
    round();
    let before = ALLOC.allocations();
    round();
    (ALLOC.allocations() - before) as f64 / MESSAGES as f64
}

fn counter(system: &ActorSystem, name: &str) -> ActorRef<Msg> {
    let props = Props::new(|| Counter(0)).with_bounded_mailbox(64, MailboxOverflow::DropNew);
    system.spawn(props, name).unwrap()
}

#[test]
fn a_warm_bounded_mailbox_allocates_nothing_per_message() {
    let system = ActorSystem::builder()
        .name("boundedAllocs")
        .threads(2)
        .build()
        .unwrap();
    let (flush, flushed) = sync_channel(1);

    let tried = counter(&system, "tried");
    let try_tell = per_message(|| {
        let offer = |mut msg| {
            while let Err(full) = tried.try_tell(msg) {
                msg = full.into_inner();
                std::thread::yield_now();
            }
        };
        for i in 0..MESSAGES {
            offer(Msg::Inc(i));
        }
        offer(Msg::Flush(flush.clone()));
        flushed.recv().unwrap();
    });

    let sent = counter(&system, "sent");
    let send = per_message(|| {
        futures_executor::block_on(async {
            for i in 0..MESSAGES {
                sent.send(Msg::Inc(i)).await;
            }
            sent.send(Msg::Flush(flush.clone())).await;
        });
        flushed.recv().unwrap();
    });
    system.terminate().wait().unwrap();
    // A handful per round is allowed (the pool's watchdog timer entry, a
    // waker's first registration); one per thousand messages would be a leak.
    assert!(
        try_tell < 0.001,
        "try_tell: {try_tell} allocations per message"
    );
    assert!(send < 0.001, "send: {send} allocations per message");
    assert_eq!(
        system.event_stream().dead_letter_count(),
        0,
        "nothing was dropped"
    );
}
