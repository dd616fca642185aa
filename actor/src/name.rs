//! Actor name rules, enforced in one place.
//!
//! A name is one path segment. It is accepted when:
//!
//! * it is not empty;
//! * every character is an ASCII letter, an ASCII digit, or one of
//!   `` - _ . : @ & = + , ! ~ * ' ; `` or `$`;
//! * it does not start with `$` (that prefix is reserved for names Weir
//!   generates for anonymous actors);
//! * it is not `.` or `..` (they mean "here" and "parent" in a path).
//!
//! `/` (the path separator) and `#` (the uid separator) are therefore never part
//! of a name.

use std::fmt;

/// The punctuation allowed in names besides ASCII letters and digits.
pub const NAME_PUNCTUATION: &str = "-_.:@&=+,!~*';$";

/// Why an actor name was refused. See [`validate_name`]
/// for the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name starts with `$`, which is reserved for generated names.
    ReservedPrefix,
    /// The name is `.` or `..`, which mean "here" and "parent" in paths.
    Reserved,
    /// `ch` at character `position` (from 0) is not allowed in names.
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position, counted in characters from 0.
        position: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("actor name is empty"),
            Self::ReservedPrefix => {
                f.write_str("actor name starts with '$', which is reserved for generated names")
            }
            Self::Reserved => f.write_str("actor name '.' and '..' are reserved for paths"),
            Self::InvalidChar { ch, position } => write!(
                f,
                "actor name has invalid character {ch:?} at position {position}; allowed are ASCII letters, digits and {}",
                NAME_PUNCTUATION
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// Check `name` against the name rules: not empty; only ASCII letters,
/// ASCII digits and [`NAME_PUNCTUATION`]; not starting with `$` (reserved
/// for generated names); not `.` or `..`.
///
/// # Errors
///
/// A [`NameError`] that says what is wrong, and for a bad character which
/// character at which (character) position.
///
/// # Examples
///
/// ```
/// use weir_actor::{NameError, validate_name};
///
/// assert!(validate_name("worker-1").is_ok());
/// assert_eq!(validate_name("a/b"), Err(NameError::InvalidChar { ch: '/', position: 1 }));
/// assert_eq!(validate_name("$gen"), Err(NameError::ReservedPrefix));
/// ```
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.starts_with('$') {
        return Err(NameError::ReservedPrefix);
    }
    if name == "." || name == ".." {
        return Err(NameError::Reserved);
    }
    // Fast path: a valid name is ASCII, checked a byte at a time; the
    // character scan below only runs to report what is wrong.
    if name
        .bytes()
        .all(|b| NAME_CHARS.get(usize::from(b)).copied().unwrap_or(false))
    {
        return Ok(());
    }
    match name.chars().enumerate().find(|&(_, ch)| !is_name_char(ch)) {
        Some((position, ch)) => Err(NameError::InvalidChar { ch, position }),
        None => Ok(()),
    }
}

/// Check one element of a path: a user-given name, or a generated `$` name.
pub(crate) fn validate_element(element: &str) -> Result<(), NameError> {
    match element.strip_prefix('$') {
        Some("") => Err(NameError::InvalidChar {
            ch: '$',
            position: 0,
        }),
        Some(rest) => match rest.chars().enumerate().find(|&(_, ch)| !is_name_char(ch)) {
            Some((position, ch)) => Err(NameError::InvalidChar {
                ch,
                position: position + 1,
            }),
            None => Ok(()),
        },
        None => validate_name(element),
    }
}

pub(crate) fn is_name_char(ch: char) -> bool {
    // One table look-up per character: names are checked on every spawn
    // (a stream's stage actors among them), so this is on that path.
    NAME_CHARS.get(ch as usize).copied().unwrap_or(false)
}

/// Which ASCII characters a name may hold (see [`is_name_char`]).
const NAME_CHARS: [bool; 128] = {
    let mut table = [false; 128];
    let mut c = 0;
    while c < 128 {
        table[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let punctuation = NAME_PUNCTUATION.as_bytes();
    let mut i = 0;
    while i < punctuation.len() {
        table[punctuation[i] as usize] = true;
        i += 1;
    }
    table
};

/// The generated name of the `n`-th anonymous child: `$` followed by a
/// base-26 counter (`$a`, `$b`, ..., `$ba`), as in Akka.
pub(crate) fn generated_name(n: u64) -> String {
    let (digits, start) = counter(n);
    let mut name = String::with_capacity(1 + digits.len() - start);
    name.push('$');
    name.push_str(ascii(&digits[start..]));
    name
}

/// The name of the virtual directory of temporary actors under the root.
pub(crate) const TEMP: &str = "temp";

/// The name of the `n`-th temporary actor of an ask sent to an actor
/// called `target`: `<target>$<counter>`, as Akka's `/temp/<target>$a`, so
/// dead letters and logs say whom an ask was for. One allocation (the name
/// itself) for a target name of up to [`TEMP_NAME_INLINE`] bytes.
pub(crate) fn temp_name(target: &str, n: u64) -> crate::sync::Arc<str> {
    let (digits, start) = counter(n);
    let suffix = &digits[start..];
    let len = target.len() + 1 + suffix.len();
    if len > TEMP_NAME_INLINE {
        return format!("{target}${}", ascii(suffix)).into();
    }
    let mut buf = [0u8; TEMP_NAME_INLINE];
    buf[..target.len()].copy_from_slice(target.as_bytes());
    buf[target.len()] = b'$';
    buf[target.len() + 1..len].copy_from_slice(suffix);
    std::str::from_utf8(&buf[..len])
        .expect("a str followed by ASCII")
        .into()
}

/// Temporary-actor names up to this long are built on the stack.
const TEMP_NAME_INLINE: usize = 64;

/// The base-26 digits of `n` (`a` = 0), most significant first, from the
/// returned start index: no allocation.
fn counter(mut n: u64) -> ([u8; 14], usize) {
    const DIGITS: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";
    // 26^14 > 2^64: fourteen digits hold any u64.
    let mut digits = [0u8; 14];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = DIGITS[(n % 26) as usize];
        n /= 26;
        if n == 0 {
            return (digits, start);
        }
    }
}

/// ASCII bytes as a `str`.
fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_distinct_and_reserved() {
        let names: Vec<String> = (0..30).map(generated_name).collect();
        assert_eq!(names[0], "$a");
        assert_eq!(names[25], "$z");
        assert_eq!(names[26], "$ba");
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len());
        assert!(
            names
                .iter()
                .all(|n| validate_name(n) == Err(NameError::ReservedPrefix))
        );
        assert_eq!(generated_name(u64::MAX).len(), 15);
    }

    #[test]
    fn temp_names_carry_the_target() {
        assert_eq!(&*temp_name("echo", 0), "echo$a");
        assert_eq!(&*temp_name("", 27), "$bb");
        let long = "x".repeat(80);
        assert_eq!(&*temp_name(&long, 1), format!("{long}$b"));
        let edge = "y".repeat(TEMP_NAME_INLINE - 2);
        assert_eq!(&*temp_name(&edge, 0), format!("{edge}$a"));
    }
}
