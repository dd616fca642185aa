//! `Tcp::bind`: a source of incoming TCP connections, each handled by a
//! flow (feature `tokio`).

use crate::sync::{Arc, AtomicBool, Mutex, Ordering};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use weir_streams::stage::{
    AsyncCallback, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, SinkShape,
    SourceShape, StageContext, StageResult,
};
use weir_streams::{Completer, Completion, Flow, Materializer, Sink, Source, StreamError};

use crate::Tcp;
use crate::tcp_write::{TcpWriter, io_error};

/// The largest chunk one read pushes.
const READ_CHUNK: usize = 64 * 1024;

/// Where a bound server listens; completes when the listener is bound.
/// [`unbind`](Self::unbind) stops accepting.
#[derive(Debug, Clone)]
pub struct ServerBinding {
    /// The address bound (with the port the system chose for port 0).
    pub local_addr: SocketAddr,
    unbind: AsyncCallback<Completer<()>>,
    unbound: Arc<AtomicBool>,
}

impl ServerBinding {
    /// Stop accepting: the listener closes and the source of incoming
    /// connections completes, while the connections already accepted go
    /// on until their handlers end. The completion tells when the
    /// listener is closed (at once if the source had already stopped).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_interop::Tcp;
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Builder::new_multi_thread().enable_io().build().unwrap();
    /// let system = weir_actor::ActorSystem::new("unbind").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let (bound, connections) = Tcp::bind(runtime.handle(), "127.0.0.1:0".parse().unwrap())
    ///     .to_mat(Sink::ignore(), Keep::both)
    ///     .run(&materializer);
    /// let binding = bound.wait().unwrap();
    /// binding.unbind().wait().unwrap();
    /// connections.wait().unwrap(); // the source completed
    /// assert!(std::net::TcpStream::connect(binding.local_addr).is_err());
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn unbind(&self) -> Completion<()> {
        let (mut completer, completion) = Completer::new();
        if self.unbound.load(Ordering::Acquire) {
            completer.complete(Ok(()));
        } else {
            self.unbind.invoke(completer);
        }
        completion
    }
}

/// One accepted connection: its addresses, and
/// [`handle_with`](Self::handle_with) to run a flow on it.
pub struct IncomingConnection {
    /// The peer's address.
    pub remote_addr: SocketAddr,
    /// This end's address.
    pub local_addr: SocketAddr,
    stream: TcpStream,
    handle: Handle,
}

impl std::fmt::Debug for IncomingConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingConnection")
            .field("remote_addr", &self.remote_addr)
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl IncomingConnection {
    /// Run `handler` on the connection: what the peer sends goes through
    /// `handler`, and what `handler` emits is written back. When `handler`
    /// completes, writing is shut down (a half-close); the returned
    /// completion tells when the connection's writing side ended, with the
    /// byte count written, or its failure ([`IoError`](weir_streams::io::IoError) `"read"` /
    /// `"write"` for a peer that reset).
    pub fn handle_with(
        self,
        handler: Flow<Bytes, Bytes>,
        materializer: &Materializer,
    ) -> Completion<u64> {
        let _enter = self.handle.enter();
        let (read, write) = self.stream.into_split();
        Source::from_graph(ReadHalf {
            half: Mutex::new(Some(read)),
        })
        .via(handler)
        .to_mat(
            Sink::from_graph(WriteHalf {
                half: Mutex::new(Some(write)),
            }),
            weir_streams::Keep::right,
        )
        .run(materializer)
    }
}

impl Tcp {
    /// A source of the connections accepted at `addr`, on `handle`'s
    /// runtime (which must drive IO). Its completion gives the bound
    /// address, or fails with an [`IoError`](weir_streams::io::IoError) (`"bind"`) that also fails
    /// the source. Accepts wait for demand; cancelling the source unbinds.
    ///
    /// # Examples
    ///
    /// An echo server made of Weir stages:
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use weir_interop::Tcp;
    /// use weir_streams::prelude::*;
    ///
    /// let runtime = tokio::runtime::Builder::new_multi_thread().enable_io().build().unwrap();
    /// let system = weir_actor::ActorSystem::new("echo").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let server_mat = materializer.clone();
    /// let bound = Tcp::bind(runtime.handle(), "127.0.0.1:0".parse().unwrap())
    ///     .to(Sink::for_each(move |connection: weir_interop::IncomingConnection| {
    ///         drop(connection.handle_with(Flow::new(), &server_mat)); // runs on
    ///     }))
    ///     .run(&materializer);
    /// let addr = bound.wait().unwrap().local_addr;
    ///
    /// let mut client = std::net::TcpStream::connect(addr).unwrap();
    /// client.write_all(b"ping").unwrap();
    /// client.shutdown(std::net::Shutdown::Write).unwrap();
    /// let mut answer = String::new();
    /// client.read_to_string(&mut answer).unwrap();
    /// assert_eq!(answer, "ping");
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn bind(
        handle: &Handle,
        addr: SocketAddr,
    ) -> Source<IncomingConnection, Completion<ServerBinding>> {
        Source::from_graph(Bind {
            handle: handle.clone(),
            addr,
        })
    }
}

struct Bind {
    handle: Handle,
    addr: SocketAddr,
}

struct BindLogic {
    shape: SourceShape<IncomingConnection>,
    handle: Handle,
    addr: SocketAddr,
    bound: Option<Completer<ServerBinding>>,
    listener: Option<TcpListener>,
    waker: Option<Waker>,
    /// Set once the listener is closed (unbound or the stage stopped).
    unbound: Arc<AtomicBool>,
}

impl GraphStage for Bind {
    type Shape = SourceShape<IncomingConnection>;
    type Mat = Completion<ServerBinding>;

    fn name(&self) -> &'static str {
        "tcp-bind"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (completer, completion) = Completer::new();
        let logic = BindLogic {
            shape: SourceShape::new(),
            handle: self.handle.clone(),
            addr: self.addr,
            bound: Some(completer),
            listener: None,
            waker: None,
            unbound: Arc::new(AtomicBool::new(false)),
        };
        (Box::new(logic), completion)
    }
}

impl BindLogic {
    /// Close the listener: no more connections are accepted.
    fn close(&mut self) {
        let _enter = self.handle.enter();
        self.listener = None;
        self.unbound.store(true, Ordering::Release);
    }

    fn accept(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let (Some(listener), Some(waker)) = (self.listener.as_ref(), self.waker.as_ref()) else {
            return Ok(());
        };
        if !ctx.is_available(self.shape.out) {
            return Ok(());
        }
        // Registering the accepted socket needs the runtime's context.
        let _enter = self.handle.enter();
        match listener.poll_accept(&mut Context::from_waker(waker)) {
            Poll::Ready(Ok((stream, remote_addr))) => {
                let local_addr = stream.local_addr().unwrap_or(remote_addr);
                let connection = IncomingConnection {
                    remote_addr,
                    local_addr,
                    stream,
                    handle: self.handle.clone(),
                };
                ctx.push(self.shape.out, connection)
            }
            Poll::Ready(Err(error)) => Err(io_error("accept", &error)),
            Poll::Pending => Ok(()),
        }
    }
}

impl GraphStageLogic for BindLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.accept(ctx));
        self.waker = Some(wake.waker(()));
        let unbind = ctx.async_callback(
            |this: &mut Self, mut done: Completer<()>, ctx: &mut StageContext<'_>| {
                this.close();
                done.complete(Ok(()));
                ctx.complete_stage();
                Ok(())
            },
        );
        let bound = std::net::TcpListener::bind(self.addr).and_then(|listener| {
            listener.set_nonblocking(true)?;
            let _enter = self.handle.enter();
            TcpListener::from_std(listener)
        });
        let result = bound.and_then(|listener| {
            let local_addr = listener.local_addr()?;
            self.listener = Some(listener);
            Ok(ServerBinding {
                local_addr,
                unbind,
                unbound: Arc::clone(&self.unbound),
            })
        });
        match result {
            Ok(binding) => {
                if let Some(mut completer) = self.bound.take() {
                    completer.complete(Ok(binding));
                }
                Ok(())
            }
            Err(error) => {
                let error = ctx.attribute(io_error("bind", &error));
                if let Some(mut completer) = self.bound.take() {
                    completer.complete(Err(error.clone()));
                }
                Err(error)
            }
        }
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.accept(ctx)
    }

    fn post_stop(&mut self) {
        self.close();
    }
}

/// The reading half of an accepted connection, as a source.
struct ReadHalf {
    half: Mutex<Option<OwnedReadHalf>>,
}

struct ReadLogic {
    shape: SourceShape<Bytes>,
    half: Option<OwnedReadHalf>,
    waker: Option<Waker>,
    buffer: Vec<u8>,
}

impl GraphStage for ReadHalf {
    type Shape = SourceShape<Bytes>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "tcp-incoming-read"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let half = self.half.lock().take();
        let logic = ReadLogic {
            shape: SourceShape::new(),
            half,
            waker: None,
            buffer: vec![0; READ_CHUNK],
        };
        (Box::new(logic), ())
    }
}

impl ReadLogic {
    fn read(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let (Some(half), Some(waker)) = (self.half.as_mut(), self.waker.as_ref()) else {
            return Ok(());
        };
        if !ctx.is_available(self.shape.out) {
            return Ok(());
        }
        let mut buf = ReadBuf::new(&mut self.buffer);
        match Pin::new(half).poll_read(&mut Context::from_waker(waker), &mut buf) {
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                ctx.complete(self.shape.out);
                Ok(())
            }
            Poll::Ready(Ok(())) => {
                let chunk = Bytes::copy_from_slice(buf.filled());
                ctx.push(self.shape.out, chunk)
            }
            Poll::Ready(Err(error)) => Err(io_error("read", &error)),
            Poll::Pending => Ok(()),
        }
    }
}

impl GraphStageLogic for ReadLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.half.is_none() {
            return Err(StreamError::msg("a connection's flow can run only once"));
        }
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.read(ctx));
        self.waker = Some(wake.waker(()));
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.read(ctx)
    }
}

/// The writing half of an accepted connection, as a sink.
struct WriteHalf {
    half: Mutex<Option<OwnedWriteHalf>>,
}

struct WriteLogic {
    shape: SinkShape<Bytes>,
    half: Option<OwnedWriteHalf>,
    waker: Option<Waker>,
    writer: TcpWriter,
    done: Option<Completer<u64>>,
}

impl GraphStage for WriteHalf {
    type Shape = SinkShape<Bytes>;
    type Mat = Completion<u64>;

    fn name(&self) -> &'static str {
        "tcp-incoming-write"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (completer, completion) = Completer::new();
        let half = self.half.lock().take();
        let logic = WriteLogic {
            shape: SinkShape::new(),
            half,
            waker: None,
            writer: TcpWriter::default(),
            done: Some(completer),
        };
        (Box::new(logic), completion)
    }
}

impl WriteLogic {
    fn write(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let (Some(half), Some(waker)) = (self.half.as_mut(), self.waker.as_ref()) else {
            return Ok(());
        };
        let mut cx = Context::from_waker(waker);
        match self.writer.poll(half, &mut cx, self.shape.inlet, ctx)? {
            Some(Ok(())) => {
                if let Some(mut done) = self.done.take() {
                    done.complete(Ok(self.writer.written()));
                }
                ctx.complete_stage();
                Ok(())
            }
            Some(Err(error)) => Err(io_error("write", &error)),
            None => Ok(()),
        }
    }
}

impl GraphStageLogic for WriteLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        if self.half.is_none() {
            return Err(StreamError::msg("a connection's flow can run only once"));
        }
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.write(ctx));
        self.waker = Some(wake.waker(()));
        ctx.set_keep_going(true);
        ctx.pull(self.shape.inlet)
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.writer.push(self.shape.inlet, ctx)? {
            self.write(ctx)
        } else {
            Ok(())
        }
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.write(ctx)
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.writer.finish();
        self.write(ctx)
    }

    fn on_upstream_failure(
        &mut self,
        _: InPort,
        error: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        if let Some(mut done) = self.done.take() {
            done.complete(Err(error.clone()));
        }
        Err(error)
    }

    fn on_failure(&mut self, error: &StreamError) {
        if let Some(mut done) = self.done.take() {
            done.complete(Err(error.clone()));
        }
    }
}
