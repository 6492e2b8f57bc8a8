//! Pattern syntax: turning `/users/{id:u64}/{*rest}` into segments.

/// One `/`-separated piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Literal text, with `{{` and `}}` already unescaped.
    Static(String),
    /// `{name}`: any non-empty segment.
    Param(String),
    /// `{name:constraint}`: a non-empty segment the constraint accepts.
    Constrained { name: String, constraint: String },
    /// `{*name}`: one or more segments.
    Glob(String),
    /// Parameters inside static text: `img-{id}.png`, `v{version}`,
    /// `{name}.{ext}`; text and parameters alternate.
    Mixed(Vec<Piece>),
}

/// A piece of a [`Segment::Mixed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal text, `{{` and `}}` unescaped.
    Text(String),
    /// `{name}` or `{name:constraint}`.
    Param {
        name: String,
        constraint: Option<String>,
    },
}

impl Segment {
    fn names(&self) -> Vec<&str> {
        match self {
            Segment::Static(_) => Vec::new(),
            Segment::Param(name) | Segment::Constrained { name, .. } | Segment::Glob(name) => {
                vec![name]
            }
            Segment::Mixed(pieces) => pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Param { name, .. } => Some(name.as_str()),
                    Piece::Text(_) => None,
                })
                .collect(),
        }
    }
}

/// Parses a whole pattern; the error is the reason shown to the developer.
pub(crate) fn parse(pattern: &str) -> Result<Vec<Segment>, String> {
    let Some(rest) = pattern.strip_prefix('/') else {
        return Err("a pattern must start with `/`".to_owned());
    };
    let mut segments: Vec<Segment> = Vec::new();
    for raw in rest.split('/') {
        let segment = parse_segment(raw)?;
        for name in segment.names() {
            if segments.iter().any(|s| s.names().contains(&name))
                || segment.names().iter().filter(|n| **n == name).count() > 1
            {
                return Err(format!("parameter name `{name}` is used twice"));
            }
        }
        if matches!(segment, Segment::Glob(_))
            && segments.iter().any(|s| matches!(s, Segment::Glob(_)))
        {
            // Two globs would make matching cost grow with the square of the
            // path length, which a client controls.
            return Err("a pattern may contain at most one glob `{*name}`".to_owned());
        }
        segments.push(segment);
    }
    Ok(segments)
}

fn parse_segment(raw: &str) -> Result<Segment, String> {
    let bytes = raw.as_bytes();
    // `/users/:id` and `/files/*path` are parameters in axum 0.7, Express
    // and Rails; here they would be literal text and never match what the
    // author meant: refuse them and say how to write the parameter.
    if let [sigil @ (b':' | b'*'), first, ..] = bytes {
        if first.is_ascii_alphabetic() || *first == b'_' {
            let name = &raw[1..];
            let suggestion = if *sigil == b':' {
                format!("{{{name}}}")
            } else {
                format!("{{*{name}}}")
            };
            return Err(format!(
                "segment `{raw}` looks like a parameter in the `{}name` syntax of other \
                 routers, which Tern would match as literal text; write `{suggestion}`",
                char::from(*sigil)
            ));
        }
    }
    // Runs of text and parameters, in order.
    let mut pieces: Vec<(Option<String>, Option<&str>)> = Vec::new();
    let push_text =
        |pieces: &mut Vec<(Option<String>, Option<&str>)>, text: &str| match pieces.last_mut() {
            Some((Some(last), None)) => last.push_str(text),
            _ => pieces.push((Some(text.to_owned()), None)),
        };
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'{', Some(b'{')) | (b'}', Some(b'}')) => {
                push_text(&mut pieces, &raw[i..=i]);
                i += 2;
            }
            (b'{', _) => {
                let body_start = i + 1;
                let body_len = raw[body_start..]
                    .find(['{', '}'])
                    .filter(|&len| bytes[body_start + len] == b'}')
                    .ok_or_else(|| {
                        format!(
                            "unterminated `{{` in segment `{raw}`; write `{{{{` for a literal brace"
                        )
                    })?;
                pieces.push((None, Some(&raw[body_start..body_start + body_len])));
                i = body_start + body_len + 1;
            }
            (b'}', _) => {
                return Err(format!(
                    "unmatched `}}` in segment `{raw}`; write `}}}}` for a literal brace"
                ));
            }
            _ => {
                let len = raw[i..].find(['{', '}']).unwrap_or(raw.len() - i);
                push_text(&mut pieces, &raw[i..i + len]);
                i += len;
            }
        }
    }
    match pieces.as_slice() {
        [] => Ok(Segment::Static(String::new())),
        [(Some(text), None)] => Ok(Segment::Static(text.clone())),
        [(None, Some(body))] => parse_param(body),
        _ => mixed(raw, pieces),
    }
}

/// A segment of text and parameters (`img-{id}.png`): no glob, and static
/// text between every two parameters (where `{a}{b}` splits is anyone's
/// guess).
fn mixed(raw: &str, pieces: Vec<(Option<String>, Option<&str>)>) -> Result<Segment, String> {
    let mut out = Vec::with_capacity(pieces.len());
    for (text, body) in pieces {
        match (text, body) {
            (Some(text), _) => out.push(Piece::Text(text)),
            (None, Some(body)) => {
                if matches!(out.last(), Some(Piece::Param { .. })) {
                    return Err(format!(
                        "segment `{raw}` has two parameters with no text between them; where \
                         one ends and the next begins would be a guess: put static text \
                         between them (`{{name}}.{{ext}}`)"
                    ));
                }
                match parse_param(body)? {
                    Segment::Param(name) => out.push(Piece::Param {
                        name,
                        constraint: None,
                    }),
                    Segment::Constrained { name, constraint } => out.push(Piece::Param {
                        name,
                        constraint: Some(constraint),
                    }),
                    _ => {
                        return Err(format!(
                            "segment `{raw}`: a glob `{{{body}}}` must be a whole segment"
                        ))
                    }
                }
            }
            (None, None) => {}
        }
    }
    let params = out
        .iter()
        .filter(|p| matches!(p, Piece::Param { .. }))
        .count();
    if params > crate::params::INLINE {
        return Err(format!(
            "segment `{raw}` has {params} parameters; a segment holds at most {}",
            crate::params::INLINE
        ));
    }
    Ok(Segment::Mixed(out))
}

fn parse_param(body: &str) -> Result<Segment, String> {
    if let Some(name) = body.strip_prefix('*') {
        if name.contains(':') {
            return Err(format!("glob `{{{body}}}` cannot take a constraint"));
        }
        check_name(name, body)?;
        return Ok(Segment::Glob(name.to_owned()));
    }
    match body.split_once(':') {
        None => {
            check_name(body, body)?;
            Ok(Segment::Param(body.to_owned()))
        }
        Some((name, constraint)) => {
            check_name(name, body)?;
            if constraint.is_empty() {
                return Err(format!("empty constraint name in `{{{body}}}`"));
            }
            Ok(Segment::Constrained {
                name: name.to_owned(),
                constraint: constraint.to_owned(),
            })
        }
    }
}

fn check_name(name: &str, body: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("empty parameter name in `{{{body}}}`"));
    }
    if name.contains('*') {
        return Err(format!(
            "`*` in `{{{body}}}`: it may only start a glob, as in `{{*name}}`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::Segment::*;
    use super::*;

    #[test]
    fn other_routers_parameter_syntax_is_refused() {
        let e = parse("/users/:id").expect_err("colon");
        assert!(e.contains("write `{id}`"), "{e}");
        let e = parse("/files/*path").expect_err("star");
        assert!(e.contains("write `{*path}`"), "{e}");
        // A colon or star that does not start a name stays literal.
        assert!(parse("/time/:30").is_ok());
        assert!(parse("/v1/items:batchGet").is_ok());
        assert!(parse("/all/*").is_ok());
    }

    #[test]
    fn parses_each_kind() {
        assert_eq!(parse("/").unwrap(), [Static(String::new())]);
        assert_eq!(
            parse("/a/{b}/{c:u64}/{*d}/").unwrap(),
            [
                Static("a".into()),
                Param("b".into()),
                Constrained {
                    name: "c".into(),
                    constraint: "u64".into()
                },
                Glob("d".into()),
                Static(String::new()),
            ]
        );
        assert_eq!(parse("/{{x}}").unwrap(), [Static("{x}".into())]);
        assert_eq!(parse("/a{{b}}c").unwrap(), [Static("a{b}c".into())]);
        assert_eq!(parse("/{{{{").unwrap(), [Static("{{".into())]);
    }

    #[test]
    fn parameters_inside_a_segment() {
        let param = |name: &str, constraint: Option<&str>| Piece::Param {
            name: name.into(),
            constraint: constraint.map(Into::into),
        };
        assert_eq!(
            parse("/img-{id:u64}.png").unwrap(),
            [Mixed(vec![
                Piece::Text("img-".into()),
                param("id", Some("u64")),
                Piece::Text(".png".into())
            ])]
        );
        assert_eq!(
            parse("/{name}.{ext}").unwrap(),
            [Mixed(vec![
                param("name", None),
                Piece::Text(".".into()),
                param("ext", None)
            ])]
        );
        assert_eq!(
            parse("/v{{{v}").unwrap(),
            [Mixed(vec![Piece::Text("v{".into()), param("v", None)])]
        );
        let e = parse("/{a}{b}").unwrap_err();
        assert!(e.contains("no text between them"), "{e}");
        let e = parse("/x{*rest}").unwrap_err();
        assert!(e.contains("whole segment"), "{e}");
        let e = parse("/{a}-{a}").unwrap_err();
        assert!(e.contains("used twice"), "{e}");
        let e = parse("/{a}/{a}.txt").unwrap_err();
        assert!(e.contains("used twice"), "{e}");
    }
}
