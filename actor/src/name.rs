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

use crate::error::NameError;

/// The punctuation allowed in names besides ASCII letters and digits.
pub const NAME_PUNCTUATION: &str = "-_.:@&=+,!~*';$";

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
    // (a stream's island actors among them), so this is on that path.
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
/// base-36 counter (`$a`, `$b`, ..., `$ba`), as in Akka.
pub(crate) fn generated_name(mut n: u64) -> String {
    const DIGITS: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";
    let mut rev = Vec::new();
    loop {
        rev.push(DIGITS[(n % 26) as usize]);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    let mut name = String::with_capacity(rev.len() + 1);
    name.push('$');
    name.extend(rev.iter().rev().map(|&b| b as char));
    name
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
    }
}
