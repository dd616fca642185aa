//! Kill switches: a shared switch keeps only the streams that are running, and reaches them when it fires.

use weir_streams::KillSwitches;
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, eventually, shutdown, stream_system};

fn running_streams(switch: &weir_streams::SharedKillSwitch) -> String {
    let debug = format!("{switch:?}");
    let from = debug
        .find("running_streams: ")
        .expect("Debug shows the running streams");
    debug[from..].split(',').next().unwrap().to_owned()
}

#[test]
fn a_shared_switch_forgets_streams_that_ended_and_stops_the_running_ones() {
    let (system, mat) = stream_system("kill-shared");
    let switch = KillSwitches::shared("many");
    let running = Source::repeat(1u8)
        .via(switch.flow())
        .run_with(Sink::ignore(), &mat);
    for i in 0..50u32 {
        let done = Source::single(i)
            .via(switch.flow())
            .run_with(Sink::collect(), &mat);
        assert_eq!(done.wait(), Ok(vec![i]));
    }
    assert!(
        eventually(PATIENCE, || running_streams(&switch)
            == "running_streams: 1"),
        "50 ended streams are forgotten, the running one is kept: {switch:?}"
    );
    switch.shutdown();
    assert_eq!(running.wait(), Ok(()), "the running stream is stopped");
    assert_eq!(running_streams(&switch), "running_streams: 0");
    let late = Source::repeat(1u8)
        .via(switch.flow())
        .run_with(Sink::ignore(), &mat);
    assert_eq!(
        late.wait(),
        Ok(()),
        "a stream started after the switch fired stops at once"
    );
    assert_eq!(
        running_streams(&switch),
        "running_streams: 0",
        "and is not kept"
    );
    shutdown(&system);
}

#[test]
fn an_aborted_shared_switch_fails_its_streams() {
    let (system, mat) = stream_system("kill-abort");
    let switch = KillSwitches::shared("abort");
    let done = Source::repeat(1u8)
        .via(switch.flow())
        .run_with(Sink::ignore(), &mat);
    switch.abort(StreamError::msg("pulled the plug"));
    let error = done.wait().unwrap_err();
    assert!(error.to_string().contains("pulled the plug"), "{error}");
    shutdown(&system);
}
