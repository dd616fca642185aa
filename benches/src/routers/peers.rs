//! The routers workload on ractor's factory and kameo's actor pool.

use std::time::{Duration, Instant};

use super::{ROUTEES, Runner, WINDOW, checksum};

fn tokio_rt(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub(super) fn runners() -> Vec<(&'static str, Runner)> {
    vec![
        (
            "ractor 0.16 factory, tokio 1 worker",
            Box::new(|n| tokio_rt(1).block_on(ractor_factory::run(n))),
        ),
        (
            "ractor 0.16 factory, tokio 2 workers",
            Box::new(|n| tokio_rt(2).block_on(ractor_factory::run(n))),
        ),
        (
            "kameo 0.22 ActorPool, tokio 1 worker",
            Box::new(|n| tokio_rt(1).block_on(kameo_pool::run(n))),
        ),
        (
            "kameo 0.22 ActorPool, tokio 2 workers",
            Box::new(|n| tokio_rt(2).block_on(kameo_pool::run(n))),
        ),
    ]
}

mod ractor_factory {
    use ractor::factory::queues::DefaultQueue;
    use ractor::factory::routing::RoundRobinRouting;
    use ractor::factory::{
        Factory, FactoryArguments, FactoryMessage, Job, JobOptions, Worker, WorkerBuilder, WorkerId,
    };
    use ractor::{Actor, ActorProcessingErr, ActorRef};

    use super::{Duration, Instant, ROUTEES, WINDOW, checksum};

    type FactoryRef = ActorRef<FactoryMessage<u64, Req>>;

    pub(super) struct Req(ActorRef<ClientMsg>);

    pub(super) enum ClientMsg {
        Start(FactoryRef),
        Reply(u64),
    }

    struct Routee;
    impl Worker for Routee {
        type Key = u64;
        type Message = Req;
        type Arguments = ();
        type State = ();
        async fn pre_start(
            &self,
            _: WorkerId,
            _: &FactoryRef,
            _: (),
        ) -> Result<(), ActorProcessingErr> {
            Ok(())
        }
        async fn handle(
            &self,
            _: WorkerId,
            _: &FactoryRef,
            Job { key, msg, .. }: Job<u64, Req>,
            _: &mut (),
        ) -> Result<u64, ActorProcessingErr> {
            msg.0.cast(ClientMsg::Reply(key + 1))?;
            Ok(key)
        }
    }

    struct Builder;
    impl WorkerBuilder<Routee, ()> for Builder {
        fn build(&mut self, _: WorkerId) -> (Routee, ()) {
            (Routee, ())
        }
    }

    pub(super) struct ClientState {
        factory: Option<FactoryRef>,
        total: u64,
        sent: u64,
        received: u64,
        checksum: u64,
        done: tokio::sync::mpsc::UnboundedSender<u64>,
    }

    impl ClientState {
        fn send(&mut self, me: &ActorRef<ClientMsg>) -> Result<(), ActorProcessingErr> {
            let job = Job {
                key: self.sent,
                msg: Req(me.clone()),
                options: JobOptions::default(),
                accepted: None,
            };
            self.sent += 1;
            self.factory
                .as_ref()
                .expect("started")
                .cast(FactoryMessage::Dispatch(job))?;
            Ok(())
        }
    }

    struct Client;
    impl Actor for Client {
        type Msg = ClientMsg;
        type State = ClientState;
        type Arguments = ClientState;
        async fn pre_start(
            &self,
            _: ActorRef<ClientMsg>,
            state: ClientState,
        ) -> Result<ClientState, ActorProcessingErr> {
            Ok(state)
        }
        async fn handle(
            &self,
            me: ActorRef<ClientMsg>,
            msg: ClientMsg,
            st: &mut ClientState,
        ) -> Result<(), ActorProcessingErr> {
            match msg {
                ClientMsg::Start(factory) => {
                    st.factory = Some(factory);
                    while st.sent < WINDOW.min(st.total) {
                        st.send(&me)?;
                    }
                }
                ClientMsg::Reply(n) => {
                    st.received += 1;
                    st.checksum = st.checksum.wrapping_add(n);
                    if st.sent < st.total {
                        st.send(&me)?;
                    }
                    if st.received == st.total {
                        let _ = st.done.send(st.checksum);
                    }
                }
            }
            Ok(())
        }
    }

    pub(super) async fn run(requests: u64) -> Duration {
        let factory_def = Factory::<
            u64,
            Req,
            (),
            Routee,
            RoundRobinRouting<u64, Req>,
            DefaultQueue<u64, Req>,
        >::default();
        let args = FactoryArguments::builder()
            .worker_builder(Box::new(Builder))
            .num_initial_workers(ROUTEES)
            .queue(Default::default())
            .router(Default::default())
            .build();
        let (factory, factory_handle) = Actor::spawn(None, factory_def, args)
            .await
            .expect("factory");
        let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
        let state = ClientState {
            factory: None,
            total: requests,
            sent: 0,
            received: 0,
            checksum: 0,
            done,
        };
        let (client, client_handle) = Actor::spawn(None, Client, state).await.expect("client");
        let start = Instant::now();
        client
            .cast(ClientMsg::Start(factory.clone()))
            .expect("alive");
        let sum = finished.recv().await.expect("the client finishes");
        let elapsed = start.elapsed();
        assert_eq!(sum, checksum(requests), "every request answered once");
        client.stop(None);
        factory.stop(None);
        let _ = client_handle.await;
        let _ = factory_handle.await;
        elapsed
    }
}

mod kameo_pool {
    use kameo::error::Infallible;
    use kameo::prelude::*;
    use kameo_actors::pool::{ActorPool, Dispatch};

    use super::{Duration, Instant, ROUTEES, WINDOW, checksum};

    pub(super) struct Routee;
    impl Actor for Routee {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(state: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(state)
        }
    }

    pub(super) struct Req(u64, ActorRef<Client>);
    pub(super) struct Reply(u64);
    pub(super) struct Start(ActorRef<ActorPool<Routee>>);

    impl Message<Req> for Routee {
        type Reply = ();
        async fn handle(&mut self, Req(n, client): Req, _: &mut Context<Self, ()>) {
            let _ = client.tell(Reply(n + 1)).try_send();
        }
    }

    pub(super) struct Client {
        pool: Option<ActorRef<ActorPool<Routee>>>,
        me: Option<ActorRef<Client>>,
        total: u64,
        sent: u64,
        received: u64,
        checksum: u64,
        done: tokio::sync::mpsc::UnboundedSender<u64>,
    }
    impl Actor for Client {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(mut state: Self, me: ActorRef<Self>) -> Result<Self, Infallible> {
            state.me = Some(me);
            Ok(state)
        }
    }

    impl Client {
        fn send(&mut self) {
            let req = Req(self.sent, self.me.clone().expect("started"));
            self.sent += 1;
            let _ = self
                .pool
                .as_ref()
                .expect("started")
                .tell(Dispatch(req))
                .try_send();
        }
    }

    impl Message<Start> for Client {
        type Reply = ();
        async fn handle(&mut self, Start(pool): Start, _: &mut Context<Self, ()>) {
            self.pool = Some(pool);
            while self.sent < WINDOW.min(self.total) {
                self.send();
            }
        }
    }

    impl Message<Reply> for Client {
        type Reply = ();
        async fn handle(&mut self, Reply(n): Reply, _: &mut Context<Self, ()>) {
            self.received += 1;
            self.checksum = self.checksum.wrapping_add(n);
            if self.sent < self.total {
                self.send();
            }
            if self.received == self.total {
                let _ = self.done.send(self.checksum);
            }
        }
    }

    pub(super) async fn run(requests: u64) -> Duration {
        // Unbounded mailboxes: no back-pressure, like the other pools here.
        let pool = ActorPool::new(ROUTEES, || {
            Routee::spawn_with_mailbox(Routee, mailbox::unbounded())
        });
        let pool = ActorPool::spawn_with_mailbox(pool, mailbox::unbounded());
        let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
        let client = Client {
            pool: None,
            me: None,
            total: requests,
            sent: 0,
            received: 0,
            checksum: 0,
            done,
        };
        let client = Client::spawn_with_mailbox(client, mailbox::unbounded());
        client.wait_for_startup().await;
        let start = Instant::now();
        let _ = client.tell(Start(pool.clone())).try_send();
        let sum = finished.recv().await.expect("the client finishes");
        let elapsed = start.elapsed();
        assert_eq!(sum, checksum(requests), "every request answered once");
        client.kill();
        pool.kill();
        elapsed
    }
}
