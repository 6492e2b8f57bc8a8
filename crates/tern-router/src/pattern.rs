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
}

impl Segment {
    fn name(&self) -> Option<&str> {
        match self {
            Segment::Static(_) => None,
            Segment::Param(name) | Segment::Constrained { name, .. } | Segment::Glob(name) => {
                Some(name)
            }
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
        if let Some(name) = segment.name() {
            if segments.iter().any(|s| s.name() == Some(name)) {
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
    let mut text = String::new();
    let mut param = None;
    // Runs of text and parameters; a valid segment has one or the other.
    let mut pieces = 0;
    let mut in_text = false;
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'{', Some(b'{')) | (b'}', Some(b'}')) => {
                text.push(char::from(bytes[i]));
                pieces += usize::from(!in_text);
                in_text = true;
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
                param = Some(&raw[body_start..body_start + body_len]);
                pieces += 1;
                in_text = false;
                i = body_start + body_len + 1;
            }
            (b'}', _) => {
                return Err(format!(
                    "unmatched `}}` in segment `{raw}`; write `}}}}` for a literal brace"
                ));
            }
            _ => {
                let len = raw[i..].find(['{', '}']).unwrap_or(raw.len() - i);
                text.push_str(&raw[i..i + len]);
                pieces += usize::from(!in_text);
                in_text = true;
                i += len;
            }
        }
    }
    match param {
        None => Ok(Segment::Static(text)),
        Some(body) if pieces == 1 => parse_param(body),
        Some(_) => Err(format!(
            "segment `{raw}` mixes a parameter with other text or another parameter; \
             a segment must be all static text or exactly one `{{name}}`, \
             `{{name:constraint}}` or `{{*name}}`"
        )),
    }
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
}
