//! Loom model (d): a stage actor made during materialization is used from
//! another thread while the island's actor is still starting. The actor's
//! mailbox is modelled as a locked FIFO (its own loom models live in
//! weir-actor); the model checks the composition: every message is
//! handled once, in order, and only after the island started.

use std::collections::VecDeque;

use loom::sync::Arc;
use loom::thread;

use super::{Accept, Lifecycle};
use crate::sync::Mutex;

enum Mail {
    Start(&'static str),
    Message(usize),
}

#[test]
fn stage_actor_used_before_the_island_starts() {
    loom::model(|| {
        let mailbox = Arc::new(Mutex::new(VecDeque::new()));
        // The user's thread: the stage actor's reference, used at once.
        let user = {
            let mailbox = Arc::clone(&mailbox);
            thread::spawn(move || {
                for i in 0..2 {
                    mailbox.lock().push_back(Mail::Message(i));
                }
            })
        };
        // The materializer: hands the island over.
        let materializer = {
            let mailbox = Arc::clone(&mailbox);
            thread::spawn(move || mailbox.lock().push_back(Mail::Start("island")))
        };
        // The island's actor: runs whenever there is mail.
        let mut lifecycle: Lifecycle<&'static str, usize> = Lifecycle::default();
        let mut handled = Vec::new();
        let deliver = |mail: Mail,
                       lifecycle: &mut Lifecycle<&'static str, usize>,
                       handled: &mut Vec<usize>| {
            match mail {
                Mail::Start(island) => handled.extend(lifecycle.start(island)),
                Mail::Message(m) => match lifecycle.accept(m) {
                    Accept::Handle(m) => {
                        assert!(lifecycle.island().is_some(), "handled only after start");
                        handled.push(m);
                    }
                    Accept::Kept => {}
                    Accept::Refused(_) => panic!("the island is not finished"),
                },
            }
        };
        let first = mailbox.lock().pop_front();
        if let Some(mail) = first {
            deliver(mail, &mut lifecycle, &mut handled);
        }
        user.join().unwrap();
        materializer.join().unwrap();
        loop {
            let next = mailbox.lock().pop_front();
            let Some(mail) = next else { break };
            deliver(mail, &mut lifecycle, &mut handled);
        }
        assert!(lifecycle.island().is_some());
        assert_eq!(handled, vec![0, 1], "each once, in order, after start");
        // After the island finished, messages are refused (dead letters).
        assert!(lifecycle.finish().is_some());
        assert_eq!(lifecycle.accept(9), Accept::Refused(9));
    });
}
