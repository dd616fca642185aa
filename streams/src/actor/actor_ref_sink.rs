//! `Sink::actor_ref`: every element told to an actor, then a completion
//! or failure message.

use std::ops::ControlFlow;

use weir_actor::ActorRef;

use crate::blueprint::Sink;
use crate::error::StreamError;
use crate::fusion::Consumer;

struct TellConsumer<T: Send + 'static, F> {
    target: ActorRef<T>,
    on_complete: Option<T>,
    on_failure: F,
}

impl<T: Send + 'static, F: FnMut(StreamError) -> T + Send + 'static> Consumer<T>
    for TellConsumer<T, F>
{
    fn on_next(&mut self, element: T) -> ControlFlow<()> {
        if self.target.is_terminated() {
            // Nobody to tell: cancel upstream.
            return ControlFlow::Break(());
        }
        self.target.tell(element);
        ControlFlow::Continue(())
    }

    fn batch_size(&self) -> usize {
        // It may stop at any element (the target may terminate).
        1
    }

    fn finish(&mut self, outcome: Result<(), StreamError>) {
        match outcome {
            Ok(()) => {
                if let Some(message) = self.on_complete.take() {
                    self.target.tell(message);
                }
            }
            Err(error) => self.target.tell((self.on_failure)(error)),
        }
    }
}

impl<T: Send + 'static> Sink<T, ()> {
    /// Tell every element to `target`; when the stream completes, tell
    /// `on_complete`; when it fails, tell `on_failure(error)`. There is no
    /// back-pressure from the actor (its mailbox absorbs the elements):
    /// use it for consumers that keep up. When `target` has terminated,
    /// the sink cancels upstream.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    /// use weir_streams::prelude::*;
    ///
    /// #[derive(Clone)]
    /// enum Msg { Item(u32), Done, Failed(String) }
    /// struct Printer(std::sync::mpsc::Sender<String>);
    /// impl Actor for Printer {
    ///     type Msg = Msg;
    ///     fn receive(&mut self, _: &mut Context<Self>, msg: Msg) {
    ///         let line = match msg { Msg::Item(x) => x.to_string(), Msg::Done => "done".into(), Msg::Failed(e) => e };
    ///         self.0.send(line).unwrap();
    ///     }
    /// }
    ///
    /// let system = ActorSystem::new("sink-actor-ref").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let printer = system.spawn(Props::new(move || Printer(tx.clone())), "printer").unwrap();
    /// Source::range(1u32..=2)
    ///     .map(Msg::Item)
    ///     .run_with(Sink::actor_ref(printer, Msg::Done, |e| Msg::Failed(e.to_string())), &materializer);
    /// let lines: Vec<String> = rx.iter().take(3).collect();
    /// assert_eq!(lines, ["1", "2", "done"]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn actor_ref<F>(target: ActorRef<T>, on_complete: T, on_failure: F) -> Self
    where
        T: Clone + Sync,
        F: FnMut(StreamError) -> T + Clone + Send + Sync + 'static,
    {
        Sink::from_consumer("actor_ref_sink", move || {
            let consumer = TellConsumer {
                target: target.clone(),
                on_complete: Some(on_complete.clone()),
                on_failure: on_failure.clone(),
            };
            (consumer, ())
        })
    }
}
