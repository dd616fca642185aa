//! Reading Rust sources just well enough to find the module paths they
//! name: comments, literals and test-only items blanked out first.

use std::collections::BTreeMap;

/// `pub use module::{A, B}` (or `module::inner::A`) in `lib.rs`: A ->
/// module; and an inline `pub mod
/// m { pub use crate::module::X; }`: m -> module.
// Both crates' layers tests include this file, and each uses a part of it.
#[allow(dead_code)]
pub(crate) fn reexports(lib: &str) -> BTreeMap<String, String> {
    let code = strip(lib);
    // The byte ranges of inline modules, with their names.
    let mut inline = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("pub mod ") {
        let start = from + at;
        let rest = &code[start + "pub mod ".len()..];
        let name: String = rest.chars().take_while(|c| is_ident_char(*c)).collect();
        from = start + 1;
        let after = rest[name.len()..].trim_start();
        if after.starts_with('{') {
            let open = code.len() - after.len();
            let close = matching_brace(&code[open..]).map_or(code.len(), |c| open + c);
            inline.push((open..close, name));
        }
    }
    let mut map = BTreeMap::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("pub use ") {
        let start = from + at;
        let body_start = start + "pub use ".len();
        let Some(len) = code[body_start..].find(';') else {
            break;
        };
        from = body_start + len;
        let body: String = code[body_start..from].split_whitespace().collect();
        if let Some(path) = body.strip_prefix("crate::") {
            if let Some((_, name)) = inline.iter().find(|(range, _)| range.contains(&start)) {
                map.insert(
                    name.clone(),
                    path.split("::").next().unwrap_or_default().to_owned(),
                );
            }
            continue;
        }
        let (module, items) = body.split_once("::").unwrap_or((&body, ""));
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            // `module::inner::Item` re-exports `Item`.
            let name = item.rsplit("::").next().unwrap_or_default();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    map
}

/// The offset just after the `}` that closes the `{` `s` starts with.
fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

pub(crate) struct Scanned {
    /// (number of `super::`, 0 for `crate::`; first segment after them).
    pub(crate) refs: Vec<(usize, String)>,
    /// The same paths with up to their first two segments.
    #[allow(dead_code)] // weir-actor's layers test reads it, weir-streams' does not.
    pub(crate) paths: Vec<(usize, Vec<String>)>,
    /// `#[cfg(test)] mod x;` declarations, whose files are test code.
    pub(crate) test_modules: Vec<String>,
}

pub(crate) fn scan(text: &str) -> Scanned {
    let code = without_test_items(&strip(text));
    let mut refs = Vec::new();
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) || (i > 0 && is_ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        let word = &code[start..i];
        if word != "crate" && word != "super" {
            continue;
        }
        let mut supers = usize::from(word == "super");
        let mut rest = &code[i..];
        while let Some(after) = rest.strip_prefix("::") {
            let after = after.trim_start();
            if let Some(more) = after.strip_prefix("super")
                && !more.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            {
                supers += 1;
                rest = more;
                continue;
            }
            for first in first_segments(after) {
                refs.push((supers, first));
            }
            for path in tree_paths(after, 2) {
                paths.push((supers, path));
            }
            break;
        }
        i = code.len() - rest.len();
    }
    let test_modules = test_module_declarations(&strip(text));
    Scanned {
        refs,
        paths,
        test_modules,
    }
}

/// Each path of the use tree `s` starts (`a::b::C`, `{a::b, c::{d, e}}`),
/// cut to its first `depth` segments; `self` in a group names the prefix.
pub(crate) fn tree_paths(s: &str, depth: usize) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(group) = s.strip_prefix('{') {
        let mut out = Vec::new();
        let mut level = 0;
        let mut item = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => level += 1,
                '}' if level == 0 => {
                    out.extend(tree_paths(&group[item..i], depth));
                    break;
                }
                '}' => level -= 1,
                ',' if level == 0 => {
                    out.extend(tree_paths(&group[item..i], depth));
                    item = i + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let ident: String = s.chars().take_while(|c| is_ident_char(*c)).collect();
    if ident.is_empty() {
        return Vec::new();
    }
    if ident == "self" {
        return vec![Vec::new()];
    }
    let rest = s[ident.len()..].trim_start();
    let deeper = match rest.strip_prefix("::") {
        Some(after) if depth > 1 => tree_paths(after, depth - 1),
        _ => Vec::new(),
    };
    if deeper.is_empty() {
        return vec![vec![ident]];
    }
    deeper
        .into_iter()
        .map(|tail| std::iter::once(ident.clone()).chain(tail).collect())
        .collect()
}

/// Every name `lib.rs` re-exports (`pub use a::b::{C, d}`), with the path
/// it names (`[a, b, C]`); a name re-exported inside an inline `pub mod m`
/// is keyed `m::Name`.
// Both crates' layers tests include this file, and each uses a part of it.
#[allow(dead_code)]
pub(crate) fn reexport_paths(lib: &str) -> BTreeMap<String, Vec<String>> {
    let code = strip(lib);
    let mut map = BTreeMap::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("pub use ") {
        let start = from + at;
        let body_start = start + "pub use ".len();
        let Some(len) = code[body_start..].find(';') else {
            break;
        };
        from = body_start + len;
        let inline = code[..start]
            .rfind("pub mod ")
            .map(|m| &code[m + "pub mod ".len()..start])
            .filter(|m| m.matches('{').count() > m.matches('}').count())
            .map(|m| {
                m.chars()
                    .take_while(|c| is_ident_char(*c))
                    .collect::<String>()
            });
        for mut path in tree_paths(&code[body_start..from], usize::MAX) {
            if path.first().is_some_and(|p| p == "crate") {
                path.remove(0);
            }
            let Some(name) = path.last().cloned() else {
                continue;
            };
            let key = match &inline {
                Some(module) => format!("{module}::{name}"),
                None => name,
            };
            map.insert(key, path);
        }
    }
    map
}

/// The first segment of each path in `a::b` or `{a::b, c, d::{e}}`.
fn first_segments(s: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = s.strip_prefix('{') else {
        return vec![ident(s)]
            .into_iter()
            .filter(|i| !i.is_empty())
            .collect();
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if c.is_whitespace() => {}
            _ if item_start && depth == 0 => {
                item_start = false;
                let name = ident(&group[i..]);
                if !name.is_empty() && name != "self" {
                    out.push(name);
                }
            }
            _ => {}
        }
    }
    out
}

/// Comments and the insides of string and char literals blanked out, line
/// breaks kept.
pub(crate) fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident_char(chars[i - 1]))
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The position just after each `#[cfg(...)]` that enables code only for
/// tests (`test`, `all(test, ..)`, never `not(test)`).
fn test_cfgs(code: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(") {
        let start = from + at;
        let Some(len) = code[start..].find(']') else {
            break;
        };
        let end = start + len + 1;
        let cfg = &code[start..end];
        let words: Vec<&str> = cfg
            .split(|c: char| !is_ident_char(c))
            .filter(|w| !w.is_empty())
            .collect();
        let compact: String = cfg.split_whitespace().collect();
        if words.contains(&"test") && !compact.contains("not(test") && !compact.contains("any(") {
            out.push((start, end));
        }
        from = end;
    }
    out
}

/// `code` with every test-only item (a `mod x { .. }`, an `fn`, a `mod x;`)
/// blanked out.
fn without_test_items(code: &str) -> String {
    let mut out = code.to_owned();
    for (start, end) in test_cfgs(code).into_iter().rev() {
        let rest = &code[end..];
        let stop = match (rest.find('{'), rest.find(';')) {
            (Some(brace), semi) if semi.is_none_or(|s| brace < s) => {
                matching_brace(&rest[brace..]).map_or(rest.len(), |close| brace + close)
            }
            (_, Some(semi)) => semi + 1,
            (_, None) => rest.len(),
        };
        // Same byte length, so the earlier ranges still point right.
        let blanked: String = code[start..end + stop]
            .chars()
            .map(|c| {
                if c == '\n' {
                    "\n".to_owned()
                } else {
                    " ".repeat(c.len_utf8())
                }
            })
            .collect();
        out.replace_range(start..end + stop, &blanked);
    }
    out
}

/// The names of `#[cfg(test)] mod x;` declarations.
fn test_module_declarations(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (_, end) in test_cfgs(code) {
        let rest = code[end..].trim_start();
        if let Some(decl) = rest.strip_prefix("mod ")
            && let Some(semi) = decl.find(';')
            && !decl[..semi].contains('{')
        {
            out.push(decl[..semi].trim().to_owned());
        }
    }
    out
}
