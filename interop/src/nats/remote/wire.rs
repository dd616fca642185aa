//! What goes over the wire between remote actor systems (postcard), and
//! the subjects it goes on.

use serde::{Deserialize, Serialize};

use super::RemoteFailure;

/// The URI scheme of a remote actor.
pub(crate) const SCHEME: &str = "weir+nats://";

/// A message for an exposed actor: its Rust type's name (checked by the
/// receiver), where to return credit (tells), and the postcard body.
#[derive(Serialize, Deserialize)]
pub(crate) struct Envelope<'a> {
    pub(crate) type_name: &'a str,
    pub(crate) credit_to: Option<&'a str>,
    /// Return credit after this many tells (the sender's window / 4).
    pub(crate) credit_every: u32,
    pub(crate) body: &'a [u8],
}

/// The answer to a remote ask.
#[derive(Serialize, Deserialize)]
pub(crate) enum Reply {
    Ok(Vec<u8>),
    Err(RemoteFailure),
}

/// The subject an actor at `/user/<path>` of `system` is served on.
pub(crate) fn actor_subject(system: &str, path: &str) -> String {
    format!("weir.{system}.user.{}", path.replace('/', "."))
}

/// The subject every exposed actor of `system` is reached through.
pub(crate) fn user_wildcard(system: &str) -> String {
    format!("weir.{system}.user.>")
}

/// `system`'s heartbeats.
pub(crate) fn heartbeat_subject(system: &str) -> String {
    format!("weir.{system}.heartbeat")
}

/// Every system's heartbeats.
pub(crate) const ALL_HEARTBEATS: &str = "weir.*.heartbeat";

/// The system a heartbeat subject is of.
pub(crate) fn heartbeat_system(subject: &str) -> Option<&str> {
    subject.strip_prefix("weir.")?.strip_suffix(".heartbeat")
}

/// Notices that an exposed actor of `system` stopped (payload: its path).
pub(crate) fn down_subject(system: &str) -> String {
    format!("weir.{system}.down")
}

/// Where a watcher asks whether an actor of `system` is exposed (payload:
/// its path; answer: [`THERE`] or [`GONE`]).
pub(crate) fn probe_subject(system: &str) -> String {
    format!("weir.{system}.probe")
}

/// The answer to a probe for an exposed actor.
pub(crate) const THERE: &[u8] = b"there";

/// The answer to a probe for a path nothing is exposed at.
pub(crate) const GONE: &[u8] = b"gone";

/// Split `weir+nats://<system>/user/<path>` into the system and the path
/// under `/user` (segments of letters, digits, `-` and `_`).
pub(crate) fn parse_uri(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (system, path) = rest.split_once("/user/")?;
    let valid = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    (valid(system) && path.split('/').all(valid)).then_some((system, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_into_system_and_path() {
        assert_eq!(parse_uri("weir+nats://a/user/b"), Some(("a", "b")));
        assert_eq!(
            parse_uri("weir+nats://a-1/user/b/c_d"),
            Some(("a-1", "b/c_d"))
        );
        assert_eq!(parse_uri("weir://a/user/b"), None);
        assert_eq!(parse_uri("weir+nats://a/system/b"), None);
        assert_eq!(parse_uri("weir+nats://a/user/"), None);
        assert_eq!(parse_uri("weir+nats://a/user/b.c"), None);
        assert_eq!(parse_uri("weir+nats://a b/user/c"), None);
        assert_eq!(actor_subject("a", "b/c"), "weir.a.user.b.c");
    }
}
