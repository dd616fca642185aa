//! `Source::unfold_resource_async`: open, read and close a resource with
//! futures (Pekko's `unfoldResourceAsync`).
//!
//! The stage polls one future at a time inside itself, woken through an
//! async callback (as `map_async` does): opening on the first pull, a
//! read per pull, closing after the last element or a failed read.
//! `close` runs exactly once for a resource that was opened. When the
//! stream is cancelled or torn down, the stage cannot wait, so what is
//! left (closing the open resource, or one still opening once it opens)
//! runs as a task on the actor system, as `ActorSystem::spawn_task` runs
//! futures.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::blueprint::Source;
use crate::error::StreamError;
use crate::stage::{
    GraphStage, GraphStageLogic, MatContext, OutPort, SourceShape, StageContext, StageResult,
};
use crate::sync::Arc;

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, StreamError>> + Send>>;

/// Where a run of the source is.
enum Phase<R, T> {
    /// Not opened yet (nothing pulled).
    Idle,
    Opening(BoxFuture<R>),
    /// Open, no read in flight.
    Open(R),
    Reading(R, BoxFuture<Option<T>>),
    /// Closing after the end (`None`) or after a failed read (`Some`).
    Closing(BoxFuture<()>, Option<StreamError>),
    Done,
}

struct UnfoldResourceAsync<O, F, C> {
    open: Arc<O>,
    read: F,
    close: C,
}

impl<T, R, O, FO, F, FR, C, FC> GraphStage for UnfoldResourceAsync<O, F, C>
where
    T: Send + 'static,
    R: Clone + Send + 'static,
    O: Fn() -> FO + Send + Sync + 'static,
    FO: Future<Output = Result<R, StreamError>> + Send + 'static,
    F: FnMut(R) -> FR + Clone + Send + Sync + 'static,
    FR: Future<Output = Result<Option<T>, StreamError>> + Send + 'static,
    C: FnMut(R) -> FC + Clone + Send + Sync + 'static,
    FC: Future<Output = Result<(), StreamError>> + Send + 'static,
{
    type Shape = SourceShape<T>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "unfold_resource_async"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let open = Arc::clone(&self.open);
        let logic = Logic::<R, T> {
            shape: SourceShape::new(),
            open: Box::new(move || Box::pin(open()) as BoxFuture<R>),
            read: {
                let mut read = self.read.clone();
                Box::new(move |r| Box::pin(read(r)) as BoxFuture<Option<T>>)
            },
            close: {
                let mut close = self.close.clone();
                Box::new(move |r| Box::pin(close(r)) as BoxFuture<()>)
            },
            phase: Phase::Idle,
            waker: None,
            system: None,
        };
        (Box::new(logic), ())
    }
}

type Open<R> = Box<dyn Fn() -> BoxFuture<R> + Send>;
type Step<R, T> = Box<dyn FnMut(R) -> BoxFuture<T> + Send>;

struct Logic<R, T> {
    shape: SourceShape<T>,
    open: Open<R>,
    read: Step<R, Option<T>>,
    close: Step<R, ()>,
    phase: Phase<R, T>,
    waker: Option<Waker>,
    /// Where what is left runs when the stream stops early.
    system: Option<weir_actor::ActorSystem>,
}

impl<R: Clone + Send + 'static, T: Send + 'static> Logic<R, T> {
    /// Start what a pull asks for: opening, or the next read.
    fn start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Idle => Phase::Opening((self.open)()),
            Phase::Open(resource) => {
                let reading = (self.read)(resource.clone());
                Phase::Reading(resource, reading)
            }
            busy => busy,
        };
        self.advance(ctx)
    }

    /// Poll the future in flight and act on its outcome, until one is
    /// pending or the stage waits for a pull.
    fn advance(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let Some(waker) = self.waker.clone() else {
            return Ok(());
        };
        let mut cx = Context::from_waker(&waker);
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Opening(mut opening) => match opening.as_mut().poll(&mut cx) {
                    Poll::Pending => self.phase = Phase::Opening(opening),
                    Poll::Ready(Ok(resource)) => {
                        self.phase = Phase::Open(resource);
                        if ctx.is_available(self.shape.out) {
                            return self.start(ctx);
                        }
                    }
                    // Nothing was opened: nothing to close.
                    Poll::Ready(Err(error)) => return Err(error),
                },
                Phase::Reading(resource, mut reading) => match reading.as_mut().poll(&mut cx) {
                    Poll::Pending => self.phase = Phase::Reading(resource, reading),
                    Poll::Ready(Ok(Some(element))) => {
                        self.phase = Phase::Open(resource);
                        return ctx.push(self.shape.out, element);
                    }
                    Poll::Ready(Ok(None)) => {
                        self.phase = Phase::Closing((self.close)(resource), None);
                        continue;
                    }
                    Poll::Ready(Err(error)) => {
                        self.phase = Phase::Closing((self.close)(resource), Some(error));
                        continue;
                    }
                },
                Phase::Closing(mut closing, failure) => match closing.as_mut().poll(&mut cx) {
                    Poll::Pending => self.phase = Phase::Closing(closing, failure),
                    // A failed read is the failure to report; else the close's.
                    Poll::Ready(closed) => match failure.map_or(closed, Err) {
                        Ok(()) => ctx.complete(self.shape.out),
                        Err(error) => return Err(error),
                    },
                },
                other => self.phase = other,
            }
            return Ok(());
        }
    }

    /// The stream stops early: close what is open (or opening) in a task.
    fn release(&mut self) {
        let close = &mut self.close;
        let left: Option<BoxFuture<()>> = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Open(resource) | Phase::Reading(resource, _) => Some(close(resource)),
            Phase::Closing(closing, _) => Some(closing),
            Phase::Opening(opening) => {
                let mut close = std::mem::replace(close, Box::new(|_| Box::pin(async { Ok(()) })));
                Some(Box::pin(async move {
                    let resource = opening.await?;
                    close(resource).await
                }))
            }
            Phase::Idle | Phase::Done => None,
        };
        if let (Some(left), Some(system)) = (left, &self.system) {
            // Nobody is left to hear how it went. When the system is
            // terminating the task cannot run: the future is dropped.
            let _ = system.spawn_task(async move {
                let _ = left.await;
            });
        }
    }
}

impl<R: Clone + Send + 'static, T: Send + 'static> GraphStageLogic for Logic<R, T> {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.advance(ctx));
        self.waker = Some(wake.waker(()));
        self.system = Some(ctx.system().clone());
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.start(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.release();
        ctx.complete_stage();
        Ok(())
    }

    fn post_stop(&mut self) {
        // Failed or torn down with the resource still open.
        self.release();
    }
}

impl<T: Send + 'static> Source<T, ()> {
    /// Elements read from a resource with futures (Pekko's
    /// `unfoldResourceAsync`): `open()` makes the resource on the first
    /// pull, `read(resource)` gives `Ok(Some(element))`, `Ok(None)` at its
    /// end, or `Err` to fail, one read per pull, and `close(resource)`
    /// runs exactly once for an opened resource however the stream ends:
    /// after the last element (a failing close then fails the stream),
    /// after a failed read (the read's failure is reported), and when
    /// downstream cancels or the stream fails (then as a task on the actor
    /// system; a resource still opening is closed once it has opened). A
    /// failed `open` fails the stream with nothing to close.
    ///
    /// `read` and `close` take the resource by value, so it is a handle
    /// that clones cheaply (a client, an `Arc`); each read gets a clone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("unfold-resource-async").unwrap();
    /// let materializer = Materializer::new(&system);
    /// // A "connection" handing out three rows, then closed.
    /// let closed = Arc::new(Mutex::new(false));
    /// let seen = closed.clone();
    /// let rows = Source::unfold_resource_async(
    ///     || async { Ok(Arc::new(Mutex::new(vec![3u32, 2, 1]))) },
    ///     |rows| async move { Ok(rows.lock().unwrap().pop()) },
    ///     move |_| {
    ///         let closed = closed.clone();
    ///         async move {
    ///             *closed.lock().unwrap() = true;
    ///             Ok(())
    ///         }
    ///     },
    /// );
    /// let got = rows.run_with(Sink::collect(), &materializer).wait();
    /// assert_eq!(got, Ok(vec![1, 2, 3]));
    /// assert!(*seen.lock().unwrap());
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unfold_resource_async<R, O, FO, F, FR, C, FC>(open: O, read: F, close: C) -> Self
    where
        R: Clone + Send + 'static,
        O: Fn() -> FO + Send + Sync + 'static,
        FO: Future<Output = Result<R, StreamError>> + Send + 'static,
        F: FnMut(R) -> FR + Clone + Send + Sync + 'static,
        FR: Future<Output = Result<Option<T>, StreamError>> + Send + 'static,
        C: FnMut(R) -> FC + Clone + Send + Sync + 'static,
        FC: Future<Output = Result<(), StreamError>> + Send + 'static,
    {
        Source::from_graph(UnfoldResourceAsync {
            open: Arc::new(open),
            read,
            close,
        })
    }
}
