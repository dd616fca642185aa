//! The sink probe: the test plays downstream.

use std::fmt;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use super::DEFAULT_TIMEOUT;
use super::wait::recv_within;
use crate::blueprint::Sink;
use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, SinkShape, StageContext,
    StageResult,
};

/// Makes sink probes.
#[derive(Debug, Clone, Copy)]
pub struct TestSink;

impl TestSink {
    /// A sink that asks for elements only when the test calls
    /// [`SinkProbe::request`], and reports everything it sees.
    pub fn probe<T: Send + 'static>() -> Sink<T, SinkProbe<T>> {
        Sink::from_graph(ProbeStage::<T>(std::marker::PhantomData))
    }
}

enum Command {
    Request(u64),
    Cancel,
    /// Answer once the island has run out of events.
    Idle(Sender<()>),
}

enum Event<T> {
    Next(T),
    Complete,
    Error(StreamError),
}

impl<T> fmt::Debug for Event<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Next(_) => write!(f, "an element ({})", std::any::type_name::<T>()),
            Event::Complete => f.write_str("completion"),
            Event::Error(e) => write!(f, "error: {e}"),
        }
    }
}

/// One signal a [`SinkProbe`] received, as [`SinkProbe::try_receive`]
/// gives it.
#[derive(Debug, Clone, PartialEq)]
pub enum Received<T> {
    /// An element.
    Next(T),
    /// The stream completed.
    Complete,
    /// The stream failed.
    Error(StreamError),
}

impl<T> From<Event<T>> for Received<T> {
    fn from(event: Event<T>) -> Self {
        match event {
            Event::Next(element) => Received::Next(element),
            Event::Complete => Received::Complete,
            Event::Error(error) => Received::Error(error),
        }
    }
}

/// The test's side of a [`TestSink::probe`].
pub struct SinkProbe<T> {
    commands: AsyncCallback<Command>,
    events: Receiver<Event<T>>,
    timeout: Duration,
}

impl<T: Send + 'static> SinkProbe<T> {
    /// Wait this long in `expect_*` (default 3 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Ask upstream for `n` more elements.
    pub fn request(&mut self, n: u64) {
        self.commands.invoke(Command::Request(n));
    }

    /// Cancel upstream.
    pub fn cancel(&mut self) {
        self.commands.invoke(Command::Cancel);
    }

    /// Wait until the probe's island runs and has run out of events: every
    /// stage in it has started and every command sent before (a request, a
    /// cancel) has been handled as far as it goes inside the island. Under a
    /// test clock, call it before advancing, so that the timers the stages
    /// set (in `pre_start`, or on the pull a request caused) are armed.
    ///
    /// Returns at once when the stream has ended.
    ///
    /// # Panics
    ///
    /// If the island does not answer in time.
    pub fn wait_idle(&mut self) {
        let (tx, rx) = channel();
        self.commands.invoke(Command::Idle(tx));
        // A stream that has ended drops the command (and its sender):
        // nothing is left to run.
        if let Err(RecvTimeoutError::Timeout) = recv_within(&rx, self.timeout) {
            panic!(
                "the probe's island did not run out of work within {:?}",
                self.timeout
            );
        }
    }

    fn next_event(&mut self, what: &str) -> Event<T> {
        match recv_within(&self.events, self.timeout) {
            Ok(event) => event,
            Err(_) => panic!("expected {what} within {:?}, got nothing", self.timeout),
        }
    }

    /// The next signal already received, without waiting: with
    /// [`wait_idle`](Self::wait_idle) first, on a stream that runs in one
    /// island, everything the stream has sent so far comes out this way.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// use weir_streams::testkit::{Received, TestSink};
    ///
    /// let system = weir_actor::ActorSystem::new("try-receive").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let mut probe = Source::range(1u32..=2).run_with(TestSink::probe(), &materializer);
    /// probe.request(1);
    /// probe.wait_idle();
    /// assert_eq!(probe.try_receive(), Some(Received::Next(1)));
    /// assert_eq!(probe.try_receive(), None);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn try_receive(&mut self) -> Option<Received<T>> {
        self.events.try_recv().ok().map(Received::from)
    }

    /// The next signal, waiting up to `timeout` for it; `None` if none
    /// came.
    pub fn receive_within(&mut self, timeout: Duration) -> Option<Received<T>> {
        recv_within(&self.events, timeout).ok().map(Received::from)
    }

    /// The next element.
    ///
    /// # Panics
    ///
    /// If none arrives in time, or the stream ends instead.
    pub fn expect_next(&mut self) -> T {
        match self.next_event("an element") {
            Event::Next(element) => element,
            other => panic!("expected an element, got {other:?}"),
        }
    }

    /// The next `n` elements.
    ///
    /// # Panics
    ///
    /// As [`expect_next`](Self::expect_next).
    pub fn expect_next_n(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| self.expect_next()).collect()
    }

    /// Request `n` elements and expect them (an Akka testkit idiom).
    ///
    /// # Panics
    ///
    /// As [`expect_next`](Self::expect_next).
    pub fn request_next_n(&mut self, n: usize) -> Vec<T> {
        self.request(n as u64);
        self.expect_next_n(n)
    }

    /// The stream completes.
    ///
    /// # Panics
    ///
    /// If it does not in time, or an element or error comes first.
    pub fn expect_complete(&mut self) {
        match self.next_event("completion") {
            Event::Complete => {}
            other => panic!("expected completion, got {other:?}"),
        }
    }

    /// The stream fails; the error.
    ///
    /// # Panics
    ///
    /// If it does not in time, or an element or completion comes first.
    pub fn expect_error(&mut self) -> StreamError {
        match self.next_event("an error") {
            Event::Error(error) => error,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// Assert that nothing arrives for `duration`.
    ///
    /// # Panics
    ///
    /// If an element, completion or error arrives.
    pub fn expect_no_message(&mut self, duration: Duration) {
        match recv_within(&self.events, duration) {
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            Ok(event) => panic!("expected nothing for {duration:?}, got {event:?}"),
        }
    }
}

impl<T> fmt::Debug for SinkProbe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkProbe")
            .field("timeout", &self.timeout)
            .finish()
    }
}

struct ProbeStage<T>(std::marker::PhantomData<fn(T)>);

struct ProbeLogic<T> {
    shape: SinkShape<T>,
    demand: u64,
    events: Sender<Event<T>>,
    idle_waiters: Vec<Sender<()>>,
}

impl<T: Send + 'static> ProbeLogic<T> {
    fn pull_if_demand(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let inlet = self.shape.inlet;
        if self.demand > 0 && !ctx.has_been_pulled(inlet) && !ctx.is_closed(inlet) {
            ctx.pull(inlet)?;
        }
        Ok(())
    }
}

impl<T: Send + 'static> GraphStage for ProbeStage<T> {
    type Shape = SinkShape<T>;
    type Mat = SinkProbe<T>;

    fn name(&self) -> &'static str {
        "sink_probe"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, SinkProbe<T>) {
        let (events, receiver) = channel();
        let commands =
            cx.async_callback(
                |this: &mut ProbeLogic<T>, command: Command, ctx| match command {
                    Command::Request(n) => {
                        this.demand = this.demand.saturating_add(n);
                        this.pull_if_demand(ctx)
                    }
                    Command::Cancel => {
                        ctx.cancel(this.shape.inlet);
                        Ok(())
                    }
                    Command::Idle(answer) => {
                        this.idle_waiters.push(answer);
                        ctx.request_idle_callback();
                        Ok(())
                    }
                },
            );
        let logic = ProbeLogic {
            shape: SinkShape::new(),
            demand: 0,
            events,
            idle_waiters: Vec::new(),
        };
        let probe = SinkProbe {
            commands,
            events: receiver,
            timeout: DEFAULT_TIMEOUT,
        };
        (Box::new(logic), probe)
    }
}

impl<T: Send + 'static> GraphStageLogic for ProbeLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        self.demand -= 1;
        let _ = self.events.send(Event::Next(element));
        self.pull_if_demand(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = self.events.send(Event::Complete);
        ctx.complete_stage();
        Ok(())
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        let _ = self.events.send(Event::Error(error));
        ctx.complete_stage();
        Ok(())
    }

    fn on_idle(&mut self, _: &mut StageContext<'_>) -> StageResult {
        for waiter in self.idle_waiters.drain(..) {
            let _ = waiter.send(());
        }
        Ok(())
    }

    /// The probe's island was torn down (or the probe broke the protocol):
    /// the test sees the error.
    fn on_failure(&mut self, error: &StreamError) {
        let _ = self.events.send(Event::Error(error.clone()));
    }
}
