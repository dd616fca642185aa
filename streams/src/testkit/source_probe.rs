//! The source probe: the test plays upstream.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use super::DEFAULT_TIMEOUT;
use super::wait::recv_within;
use crate::blueprint::Source;
use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext,
    StageResult,
};

/// Makes source probes.
#[derive(Debug, Clone, Copy)]
pub struct TestSource;

impl TestSource {
    /// A source the test drives through the materialized [`SourceProbe`].
    pub fn probe<T: Send + 'static>() -> Source<T, SourceProbe<T>> {
        Source::from_graph(ProbeStage::<T>(std::marker::PhantomData))
    }
}

enum Command<T> {
    Next(T),
    Complete,
    Error(StreamError),
}

/// What a [`SourceProbe`] saw downstream do, as
/// [`SourceProbe::try_signal`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownstreamSignal {
    /// Downstream asked for one element (the interpreter pulls one at a
    /// time).
    Request,
    /// Downstream cancelled.
    Cancel,
}

use DownstreamSignal as Signal;

/// The test's side of a [`TestSource::probe`].
pub struct SourceProbe<T> {
    commands: AsyncCallback<Command<T>>,
    signals: Receiver<Signal>,
    timeout: Duration,
}

impl<T: Send + 'static> SourceProbe<T> {
    /// Wait this long in `expect_*` (default 3 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Emit `element` (pushed when downstream has pulled; queued until then).
    pub fn send_next(&mut self, element: T) {
        self.commands.invoke(Command::Next(element));
    }

    /// Complete the source (after the elements sent before).
    pub fn send_complete(&mut self) {
        self.commands.invoke(Command::Complete);
    }

    /// Fail the source.
    pub fn send_error(&mut self, error: StreamError) {
        self.commands.invoke(Command::Error(error));
    }

    /// Wait for downstream to ask for an element; returns how many it
    /// asked for (always 1: the interpreter pulls one at a time).
    ///
    /// # Panics
    ///
    /// If no request arrives in time, or a cancellation arrives instead.
    pub fn expect_request(&mut self) -> u64 {
        match recv_within(&self.signals, self.timeout) {
            Ok(Signal::Request) => 1,
            Ok(Signal::Cancel) => panic!("expected a request, got a cancellation"),
            Err(_) => panic!("expected a request within {:?}, got nothing", self.timeout),
        }
    }

    /// How many requests have arrived and not been expected yet, without
    /// waiting (with a sink probe's `wait_idle` first, that is every
    /// request so far).
    ///
    /// # Panics
    ///
    /// If a cancellation arrived.
    pub fn take_requests(&mut self) -> u64 {
        let mut n = 0;
        for signal in self.signals.try_iter() {
            match signal {
                Signal::Request => n += 1,
                Signal::Cancel => panic!("expected requests, got a cancellation"),
            }
        }
        n
    }

    /// The next signal downstream has sent and that was not expected yet,
    /// without waiting (`None` if there is none). With a sink probe's
    /// `wait_idle` first, on a stream that runs in one island, that is
    /// every signal so far.
    pub fn try_signal(&mut self) -> Option<DownstreamSignal> {
        self.signals.try_recv().ok()
    }

    /// Wait for downstream to cancel (requests before it are skipped).
    ///
    /// # Panics
    ///
    /// If no cancellation arrives in time.
    pub fn expect_cancellation(&mut self) {
        // Counted from the start, not as `now + timeout`: a probe made
        // with `with_timeout(Duration::MAX)` waits for ever instead of
        // panicking on an `Instant` overflow. (In simulation each wait
        // counts on the simulation's clock, where no real time passes.)
        let start = std::time::Instant::now();
        loop {
            let left = self.timeout.saturating_sub(start.elapsed());
            match recv_within(&self.signals, left) {
                Ok(Signal::Cancel) => return,
                Ok(Signal::Request) => continue,
                Err(_) => panic!(
                    "expected a cancellation within {:?}, got nothing",
                    self.timeout
                ),
            }
        }
    }

    /// Assert that downstream signals nothing for `duration`.
    ///
    /// # Panics
    ///
    /// If a request or cancellation arrives.
    pub fn expect_no_signal(&mut self, duration: Duration) {
        match recv_within(&self.signals, duration) {
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            Ok(signal) => panic!("expected no signal for {duration:?}, got {signal:?}"),
        }
    }
}

impl<T> std::fmt::Debug for SourceProbe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceProbe")
            .field("timeout", &self.timeout)
            .finish()
    }
}

struct ProbeStage<T>(std::marker::PhantomData<fn() -> T>);

struct ProbeLogic<T> {
    shape: SourceShape<T>,
    signals: Sender<Signal>,
}

impl<T: Send + 'static> GraphStage for ProbeStage<T> {
    type Shape = SourceShape<T>;
    type Mat = SourceProbe<T>;

    fn name(&self) -> &'static str {
        "source_probe"
    }

    fn create_logic(&self, cx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, SourceProbe<T>) {
        let (signals, receiver) = channel();
        let commands = cx.async_callback(|this: &mut ProbeLogic<T>, command: Command<T>, ctx| {
            match command {
                Command::Next(element) => ctx.emit(this.shape.out, element)?,
                Command::Complete => ctx.complete(this.shape.out),
                Command::Error(error) => ctx.fail(this.shape.out, error),
            }
            Ok(())
        });
        let logic = ProbeLogic::<T> {
            shape: SourceShape::new(),
            signals,
        };
        let probe = SourceProbe {
            commands,
            signals: receiver,
            timeout: DEFAULT_TIMEOUT,
        };
        (Box::new(logic), probe)
    }
}

impl<T: Send + 'static> GraphStageLogic for ProbeLogic<T> {
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        let _ = self.signals.send(Signal::Request);
        Ok(())
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        let _ = self.signals.send(Signal::Cancel);
        ctx.complete_stage();
        Ok(())
    }
}
