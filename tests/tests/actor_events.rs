//! User events on the event stream: delivered by type to subscribed actors,
//! dropped subscribers that stop, publishers never harmed by subscribers.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};

use weir_actor::{Actor, ActorRef, ActorSystem, Context, DispatcherKind, Props};
use weir_tests::{PATIENCE, Probe, eventually, shutdown};

#[derive(Clone, Debug, PartialEq)]
struct Price(u32);

#[derive(Clone, Debug, PartialEq)]
struct Alarm(&'static str);

struct Recorder<E>(Sender<E>);
impl<E: Send + 'static> Actor for Recorder<E> {
    type Msg = E;
    fn receive(&mut self, _: &mut Context<Self>, event: E) {
        let _ = self.0.send(event);
    }
}

fn recorder<E: Clone + Send + 'static>(
    system: &ActorSystem,
    name: &str,
    probe: &Probe<E>,
) -> ActorRef<E> {
    let tx = probe.sender();
    system
        .spawn(Props::new(move || Recorder(tx.clone())), name)
        .unwrap()
}

#[test]
fn events_reach_the_subscribers_of_their_type_only() {
    let system = ActorSystem::new("by-type").unwrap();
    let events = system.event_stream();
    let (prices_a, prices_b) = (Probe::<Price>::new(), Probe::<Price>::new());
    let alarms = Probe::<Alarm>::new();
    let a = recorder(&system, "a", &prices_a);
    let b = recorder(&system, "b", &prices_b);
    let c = recorder(&system, "c", &alarms);
    assert!(events.subscribe_actor(&a));
    assert!(events.subscribe_actor(&b));
    assert!(
        !events.subscribe_actor(&b),
        "a second subscription is not a second delivery"
    );
    assert!(events.subscribe_actor(&c));

    assert_eq!(events.publish(Price(1)), 2);
    assert_eq!(events.publish(Alarm("fire")), 1);
    assert_eq!(events.publish(Price(2)), 2);
    assert_eq!(prices_a.expect(), Price(1));
    assert_eq!(prices_a.expect(), Price(2));
    assert_eq!(prices_b.expect(), Price(1));
    assert_eq!(prices_b.expect(), Price(2));
    assert_eq!(alarms.expect(), Alarm("fire"));

    assert!(events.unsubscribe(&a));
    assert!(!events.unsubscribe(&a));
    assert_eq!(events.publish(Price(3)), 1);
    assert_eq!(prices_b.expect(), Price(3));
    prices_a.expect_nothing();
    assert_eq!(events.dead_letter_count(), 0);
    shutdown(&system);
}

#[test]
fn a_stopped_subscriber_is_dropped_without_dead_letters() {
    let system = ActorSystem::new("stopped").unwrap();
    let events = system.event_stream();
    let probe = Probe::<Price>::new();
    let a = recorder(&system, "a", &probe);
    events.subscribe_actor(&a);
    a.stop();
    assert!(eventually(PATIENCE, || a.is_terminated()));
    assert_eq!(events.publish(Price(1)), 0);
    assert_eq!(events.dead_letter_count(), 0);
    assert!(
        !events.unsubscribe(&a),
        "it left the channel when the stream saw it stopped"
    );
    shutdown(&system);
}

/// Panics on every odd price; its supervisor restarts it.
struct Fragile(Sender<u32>);
impl Actor for Fragile {
    type Msg = Price;
    fn receive(&mut self, _: &mut Context<Self>, Price(p): Price) {
        assert!(p % 2 == 0, "odd price {p}");
        let _ = self.0.send(p);
    }
}

#[test]
fn a_panicking_subscriber_neither_harms_the_publisher_nor_loses_its_subscription() {
    let system = ActorSystem::new("fragile").unwrap();
    let events = system.event_stream();
    let probe = Probe::new();
    let tx = probe.sender();
    let fragile = system
        .spawn(Props::new(move || Fragile(tx.clone())), "fragile")
        .unwrap();
    events.subscribe_actor(&fragile);
    for p in 0..6 {
        assert_eq!(events.publish(Price(p)), 1);
    }
    assert_eq!([probe.expect(), probe.expect(), probe.expect()], [0, 2, 4]);
    shutdown(&system);
}

/// Publishes the next number until `until`, from inside its own `receive`.
struct Chain {
    until: u32,
    done: Sender<u32>,
}
impl Actor for Chain {
    type Msg = u32;
    fn receive(&mut self, ctx: &mut Context<Self>, n: u32) {
        if n == self.until {
            let _ = self.done.send(n);
        } else {
            ctx.system().event_stream().publish(n + 1);
        }
    }
}

#[test]
fn publishing_from_inside_a_subscriber_queues_instead_of_recursing() {
    // On the calling-thread dispatcher the subscriber runs inside `publish`;
    // 200,000 nested publishes would overflow the test thread's stack if
    // each one recursed into the next.
    let system = ActorSystem::new("chain").unwrap();
    let probe = Probe::new();
    let done = probe.sender();
    let chain = system
        .spawn(
            Props::new(move || Chain {
                until: 200_000,
                done: done.clone(),
            })
            .with_dispatcher(DispatcherKind::CallingThread),
            "chain",
        )
        .unwrap();
    system.event_stream().subscribe_actor(&chain);
    system.event_stream().publish(0u32);
    assert_eq!(probe.expect(), 200_000);
    shutdown(&system);
}

#[test]
fn publishers_on_many_threads_reach_every_subscriber_once_per_event() {
    const THREADS: u32 = 4;
    const EACH: u32 = 2_000;
    let system = ActorSystem::new("many").unwrap();
    let events = system.event_stream();
    let probes: Vec<Probe<Price>> = (0..3).map(|_| Probe::new()).collect();
    for (i, probe) in probes.iter().enumerate() {
        events.subscribe_actor(&recorder(&system, &format!("s{i}"), probe));
    }
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (system, barrier) = (&system, barrier.clone());
            scope.spawn(move || {
                barrier.wait();
                for i in 0..EACH {
                    assert_eq!(system.event_stream().publish(Price(t * EACH + i)), 3);
                }
            });
        }
    });
    for probe in &probes {
        let mut seen: Vec<u32> = (0..THREADS * EACH).map(|_| probe.expect().0).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..THREADS * EACH).collect::<Vec<_>>());
        probe.expect_nothing();
    }
    shutdown(&system);
}

#[test]
fn a_callback_subscriber_sees_published_events_too() {
    let system = ActorSystem::new("callbacks").unwrap();
    let events = system.event_stream();
    let seen = Probe::<(u32, &'static str)>::new();
    let tx = std::sync::Mutex::new(seen.sender());
    let _subscription = events.subscribe(move |event| {
        if let weir_actor::Event::User(user) = event
            && let Some(&Price(p)) = user.downcast_ref::<Price>()
        {
            tx.lock().unwrap().send((p, user.message_type())).unwrap();
        }
    });
    // With no actor subscribed, and with one: the callback sees each event.
    assert_eq!(events.publish(Price(1)), 0);
    let prices = Probe::<Price>::new();
    let actor = recorder(&system, "prices", &prices);
    events.subscribe_actor(&actor);
    assert_eq!(events.publish(Price(2)), 1);
    assert_eq!(prices.expect(), Price(2));
    let type_name = std::any::type_name::<Price>();
    assert_eq!(seen.expect_n(2), [(1, type_name), (2, type_name)]);
    shutdown(&system);
}
