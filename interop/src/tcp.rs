//! [`Tcp`]: TCP connections on tokio as flows of byte chunks (feature
//! `tokio`).
//!
//! A connection is one stage that owns the tokio `TcpStream` and polls it
//! with a waker that wakes the stage's island: no task per connection,
//! no busy polling. Reads wait for downstream demand (a slow reader stops
//! the peer's writes through TCP's own window) and each chunk pushed from
//! upstream is written before the next one is pulled.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::runtime::Handle;
use weir_streams::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
    TimerKey,
};
use weir_streams::{Completer, Completion, Flow, StreamError};

use crate::tcp_write::{TcpWriter, io_error};

/// The largest chunk one read pushes.
const READ_CHUNK: usize = 64 * 1024;

/// TCP connections as byte flows, on a tokio runtime's reactor.
///
/// # Examples
///
/// ```
/// use std::io::{Read, Write};
/// use weir_interop::Tcp;
/// use weir_streams::io::Bytes;
/// use weir_streams::prelude::*;
///
/// // A plain echo server on loopback.
/// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let addr = listener.local_addr().unwrap();
/// std::thread::spawn(move || {
///     let (mut socket, _) = listener.accept().unwrap();
///     let mut buf = [0; 1024];
///     while let Ok(n @ 1..) = socket.read(&mut buf) {
///         socket.write_all(&buf[..n]).unwrap();
///     }
/// });
///
/// let runtime = tokio::runtime::Builder::new_multi_thread().enable_io().build().unwrap();
/// let system = weir_actor::ActorSystem::new("tcp").unwrap();
/// let materializer = Materializer::new(&system);
/// let (connected, echoed) = Source::single(Bytes::from_static(b"hello"))
///     .via_mat(Tcp::outgoing_connection(runtime.handle(), addr), Keep::right)
///     .to_mat(Sink::fold(Vec::new(), |mut all, chunk: Bytes| { all.extend_from_slice(&chunk); all }), Keep::both)
///     .run(&materializer);
/// assert_eq!(connected.wait().unwrap().remote_addr, addr);
/// assert_eq!(echoed.wait().unwrap(), b"hello");
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Tcp;

/// The connection an outgoing flow made, once it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingConnection {
    /// This end's address.
    pub local_addr: SocketAddr,
    /// The peer's address.
    pub remote_addr: SocketAddr,
}

impl Tcp {
    /// A flow that connects to `addr` when it starts (on `handle`'s
    /// runtime, which must drive IO: a multi-thread runtime, or one whose
    /// thread runs), writes what it receives and emits what it reads.
    ///
    /// - Its materialized completion tells the connection's addresses, or
    ///   fails with an [`IoError`](weir_streams::io::IoError) (`"connect"`) that also fails the flow.
    /// - When upstream completes, the flow half-closes the connection
    ///   (shuts down writing) and goes on reading until the peer closes.
    /// - A read or write error (the peer resetting) fails the flow with an
    ///   [`IoError`](weir_streams::io::IoError) (`"read"` / `"write"`).
    /// - Cancelling downstream closes the connection.
    pub fn outgoing_connection(
        handle: &Handle,
        addr: SocketAddr,
    ) -> Flow<Bytes, Bytes, Completion<OutgoingConnection>> {
        Self::outgoing_connection_with(handle, addr, ConnectionSettings::new())
    }

    /// [`outgoing_connection`](Self::outgoing_connection) with
    /// `settings`: a connect timeout, `TCP_NODELAY`, keep-alive.
    ///
    /// A connection not made within the timeout (measured on the actor
    /// system's clock) fails the flow and its completion with an
    /// [`IoError`](weir_streams::io::IoError) `"connect"` of kind `std::io::ErrorKind::TimedOut`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_interop::{ConnectionSettings, Tcp};
    /// use weir_streams::io::Bytes;
    /// use weir_streams::prelude::*;
    ///
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let runtime = tokio::runtime::Builder::new_multi_thread().enable_io().build().unwrap();
    /// let system = weir_actor::ActorSystem::new("tcp-settings").unwrap();
    /// let materializer = Materializer::new(&system);
    /// let settings = ConnectionSettings::new()
    ///     .with_connect_timeout(Duration::from_secs(5))
    ///     .with_nodelay(true);
    /// let connected = Source::<Bytes>::empty()
    ///     .via_mat(Tcp::outgoing_connection_with(runtime.handle(), addr, settings), Keep::right)
    ///     .to(Sink::ignore())
    ///     .run(&materializer);
    /// assert_eq!(connected.wait().unwrap().remote_addr, addr);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn outgoing_connection_with(
        handle: &Handle,
        addr: SocketAddr,
        settings: ConnectionSettings,
    ) -> Flow<Bytes, Bytes, Completion<OutgoingConnection>> {
        Flow::from_graph(Outgoing {
            handle: handle.clone(),
            addr,
            settings,
        })
    }
}

/// How an outgoing connection is made: a connect timeout, `TCP_NODELAY`
/// and `SO_KEEPALIVE`. The default has no timeout, Nagle's algorithm on
/// and no keep-alive (the operating system's defaults).
///
/// ```
/// use std::time::Duration;
/// use weir_interop::ConnectionSettings;
///
/// let settings = ConnectionSettings::new().with_connect_timeout(Duration::from_secs(3));
/// assert_eq!(settings.connect_timeout(), Some(Duration::from_secs(3)));
/// assert!(!settings.nodelay() && !settings.keep_alive());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionSettings {
    connect_timeout: Option<Duration>,
    nodelay: bool,
    keep_alive: bool,
}

impl ConnectionSettings {
    /// The defaults: no connect timeout, no `TCP_NODELAY`, no keep-alive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fail the connection if it is not made within `timeout`.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Set `TCP_NODELAY` (send small writes at once).
    pub fn with_nodelay(mut self, nodelay: bool) -> Self {
        self.nodelay = nodelay;
        self
    }

    /// Set `SO_KEEPALIVE` (the system's probe timing).
    pub fn with_keep_alive(mut self, keep_alive: bool) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// The connect timeout, if any.
    pub fn connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> bool {
        self.nodelay
    }

    /// Whether `SO_KEEPALIVE` is set.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }
}

/// Connect to `addr` with `settings`' socket options.
async fn connect(addr: SocketAddr, settings: ConnectionSettings) -> std::io::Result<TcpStream> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_nodelay(settings.nodelay)?;
    socket.set_keepalive(settings.keep_alive)?;
    socket.connect(addr).await
}

/// The timer key of the connect timeout.
const CONNECT_TIMEOUT: u64 = 0;

struct Outgoing {
    handle: Handle,
    addr: SocketAddr,
    settings: ConnectionSettings,
}

/// What the stage's callback hears: the connection made (or not), or a
/// wake-up from the socket.
enum Event {
    Connected(std::io::Result<TcpStream>),
    Wake,
}

struct ConnectionLogic {
    shape: FlowShape<Bytes, Bytes>,
    handle: Handle,
    addr: SocketAddr,
    settings: ConnectionSettings,
    /// The task connecting, aborted if the stage stops first.
    connecting: Option<tokio::task::JoinHandle<()>>,
    connected: Option<Completer<OutgoingConnection>>,
    stream: Option<TcpStream>,
    waker: Option<Waker>,
    writer: TcpWriter,
    /// The peer closed its side: nothing more to read.
    read_done: bool,
    buffer: Vec<u8>,
}

impl GraphStage for Outgoing {
    type Shape = FlowShape<Bytes, Bytes>;
    type Mat = Completion<OutgoingConnection>;

    fn name(&self) -> &'static str {
        "tcp-outgoing"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, Self::Mat) {
        let (completer, completion) = Completer::new();
        let logic = ConnectionLogic {
            shape: FlowShape::new(),
            handle: self.handle.clone(),
            addr: self.addr,
            settings: self.settings,
            connecting: None,
            connected: Some(completer),
            stream: None,
            waker: None,
            writer: TcpWriter::default(),
            read_done: false,
            buffer: Vec::new(),
        };
        (Box::new(logic), completion)
    }
}

impl ConnectionLogic {
    fn on_event(&mut self, event: Event, ctx: &mut StageContext<'_>) -> StageResult {
        match event {
            Event::Connected(Ok(stream)) => {
                ctx.cancel_timer(CONNECT_TIMEOUT);
                self.connecting = None;
                let addrs = stream
                    .local_addr()
                    .and_then(|local| Ok((local, stream.peer_addr()?)));
                if let (Some(mut completer), Ok((local_addr, remote_addr))) =
                    (self.connected.take(), addrs)
                {
                    completer.complete(Ok(OutgoingConnection {
                        local_addr,
                        remote_addr,
                    }));
                }
                self.stream = Some(stream);
                if !ctx.is_closed(self.shape.inlet) {
                    ctx.pull(self.shape.inlet)?;
                } else {
                    self.writer.finish();
                }
                self.progress(ctx)
            }
            Event::Connected(Err(error)) => self.connect_failed(&error, ctx),
            Event::Wake => self.progress(ctx),
        }
    }

    fn connect_failed(
        &mut self,
        error: &std::io::Error,
        ctx: &mut StageContext<'_>,
    ) -> StageResult {
        ctx.cancel_timer(CONNECT_TIMEOUT);
        if let Some(task) = self.connecting.take() {
            task.abort();
        }
        let error = ctx.attribute(io_error("connect", error));
        if let Some(mut completer) = self.connected.take() {
            completer.complete(Err(error.clone()));
        }
        Err(error)
    }

    /// Write what waits, read if downstream wants, finish when both
    /// directions are done.
    fn progress(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let (Some(stream), Some(waker)) = (self.stream.as_mut(), self.waker.as_ref()) else {
            return Ok(()); // not connected yet
        };
        let mut cx = Context::from_waker(waker);
        // Writing. A failed shutdown is not the flow's failure: the peer
        // may already be gone, and reading says how it ended.
        let _shut_down = self.writer.poll(stream, &mut cx, self.shape.inlet, ctx)?;
        // Reading, only on demand.
        if !self.read_done && ctx.is_available(self.shape.out) {
            if self.buffer.len() < READ_CHUNK {
                self.buffer = vec![0; READ_CHUNK];
            }
            let mut buf = ReadBuf::new(&mut self.buffer);
            match Pin::new(&mut *stream).poll_read(&mut cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                    self.read_done = true;
                    ctx.complete(self.shape.out);
                }
                Poll::Ready(Ok(())) => {
                    let chunk = Bytes::copy_from_slice(buf.filled());
                    ctx.push(self.shape.out, chunk)?;
                }
                Poll::Ready(Err(error)) => return Err(io_error("read", &error)),
                Poll::Pending => {}
            }
        }
        if self.read_done && self.writer.is_shut_down() {
            ctx.complete_stage();
        }
        Ok(())
    }
}

impl GraphStageLogic for ConnectionLogic {
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        let callback =
            ctx.async_callback(|this: &mut Self, event: Event, ctx| this.on_event(event, ctx));
        let wake = ctx.async_callback(|this: &mut Self, (), ctx| this.on_event(Event::Wake, ctx));
        self.waker = Some(wake.waker(()));
        let (addr, settings) = (self.addr, self.settings);
        self.connecting = Some(self.handle.spawn(async move {
            callback.invoke(Event::Connected(connect(addr, settings).await));
        }));
        if let Some(timeout) = settings.connect_timeout {
            // On the system's clock (the test clock in tests).
            ctx.schedule_once(CONNECT_TIMEOUT, timeout);
        }
        // The connection outlives a completed upstream until the peer closes.
        ctx.set_keep_going(true);
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if self.writer.push(self.shape.inlet, ctx)? {
            self.progress(ctx)
        } else {
            Ok(())
        }
    }

    fn on_idle(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        self.progress(ctx)
    }

    fn on_timer(&mut self, key: TimerKey, ctx: &mut StageContext<'_>) -> StageResult {
        if key == TimerKey(CONNECT_TIMEOUT) && self.stream.is_none() {
            let timed_out = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("not connected to {} in time", self.addr),
            );
            return self.connect_failed(&timed_out, ctx);
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.writer.finish();
        self.progress(ctx)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.progress(ctx)
    }

    fn on_downstream_finish(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.complete_stage();
        Ok(())
    }

    fn on_failure(&mut self, error: &StreamError) {
        if let Some(mut completer) = self.connected.take() {
            completer.complete(Err(error.clone()));
        }
    }

    fn post_stop(&mut self) {
        // Dropping the stream closes it; tokio deregisters it from its
        // reactor through the handle it holds.
        let _enter = self.handle.enter();
        if let Some(task) = self.connecting.take() {
            task.abort();
        }
        self.stream = None;
    }
}
